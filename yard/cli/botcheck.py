"""``yard bot-check``: run the protocol battery of :mod:`tournament.botcheck` on one bot."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bots.spec import BotSpec
from tournament.botcheck import check_bot
from tournament.engines import Engine
from yard.cli.options import BOT_SPEC, EngineCommand, engine_option, json_option


@click.command("bot-check", cls=EngineCommand)
@click.argument("spec", metavar="BOT_SPEC", type=BOT_SPEC)
@engine_option
@click.option("--rules", "rules", help="Comma-separated rulesets to check (default: those "
              "the bot claims, else every built-in one).")
@click.option("--seed", default=1, show_default=True, help="Seed of every check game.")
@click.option("--move-time", default=5.0, show_default=True, type=click.FloatRange(0.05),
              help="Seconds per move in the ordinary games.")
@click.option("--deadline", default=1.0, show_default=True, type=click.FloatRange(0.01),
              help="Seconds per move in the deadline check.")
@click.option("--grace", default=3.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds the bot has to resume a dropped connection.")
@click.option("--log", "log", type=click.Path(dir_okay=False, path_type=Path),
              help="File for the bot's output (default: a temp file, printed on failure).")
@json_option("Print one JSON object.")
def bot_check(spec: BotSpec, engines: tuple[Engine, ...], rules: str | None, seed: int,
              move_time: float, deadline: float, grace: float, log: Path | None,
              as_json: bool) -> None:
    """Check that BOT_SPEC (a bot spec or an --engine name) plays by the protocol: legal
    games in both roles on each ruleset it claims, double and secret moves, a dropped
    connection it must resume, a deadline, unknown message fields. Exit 1 on a failure."""
    run = check_bot(spec, list(engines), rules, seed=seed, move_time=move_time,
                    deadline=deadline, grace=grace, log=log)
    if as_json:
        click.echo(json.dumps(run.to_dict()))
    else:
        for line in run.option_lines():
            click.echo(line)
        for check in run.checks:
            click.echo(check.line())
        click.echo(run.summary())
    if not run.passed:
        raise SystemExit(1)
