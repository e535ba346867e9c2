"""``yard bot``: run a bot as a network client (``yard bots``, the list, is
:mod:`yard.cli.botlist`: listing bots loads no network client)."""

from __future__ import annotations

import logging

import click

from bots.client import LOOPS, BotClient, account_token, run_client, run_on_loop
from bots.registry import bot_from_spec, default_name
from bots.spec import BotSpec
from bots.warmup import ladder_names, warm_up
from yard.cli.options import BOT_SPEC, OPTION_PAIR


@click.command()
@click.argument("spec", metavar="BOT_SPEC", type=BOT_SPEC)
@click.option("--url", required=True, help="Server URL, e.g. ws://127.0.0.1:8765.")
@click.option("--token", help="This bot's token, if the server requires one.")
@click.option("--token-file", type=click.Path(dir_okay=False),
              help="File holding this bot's token (with --register: where the new token "
              "is written, mode 0600).")
@click.option("--register", is_flag=True,
              help="Register the name on a server with open registration: its token is "
              "written to --token-file (else printed once to stderr). A --token-file that "
              "exists already is used instead.")
@click.option("--name", "display", help="Name announced to the server (default: the bot's "
              "registered name, or a class's `name`).")
@click.option("--version", "version", default="", help="Version announced to the server.")
@click.option("--option", "options", multiple=True, type=OPTION_PAIR, metavar="KEY=VALUE",
              help="Bot option (repeatable; same as BOT_SPEC:KEY=VALUE).")
@click.option("--seed", type=int, help="Seed for bots created before any game seed arrives.")
@click.option("--games", type=click.IntRange(1), metavar="N",
              help="Leave after N games: once the server has given N, ask it for no new "
              "ones, play them out and exit (no forfeit). Ctrl-C leaves the same way (a "
              "second Ctrl-C quits at once).")
@click.option("--ladder", metavar="RULES[,RULES...]",
              help="Be matched on the server's standing ladder for these rulesets "
              "(yard serve --ladder), e.g. grid5; a ruleset file (.toml) stands for the "
              "name inside it.")
@click.option("--max-games", type=click.IntRange(1), metavar="N",
              help="Most ladder games at once (default 1).")
@click.option("--instance", help="Label telling this process apart from other processes "
              "of the same bot (tournament runners give each game slot its own).")
@click.option("--loop", "loop_name", default="auto", show_default=True,
              type=click.Choice(list(LOOPS)),
              help="Event loop: auto is uvloop when installed (it is, except on Windows).")
@click.option("--warm-up/--no-warm-up", "warm", default=None,
              help="Before connecting, play one move on each side the bot plays, on each "
              "--ladder ruleset it can load (grid5 without one), so that compiling (numba: mcts, "
              "alphabeta) or loading weights is not paid on a game's clock. Default: on "
              "with --ladder.")
@click.option("-v", "--verbose", is_flag=True, help="Log connection events.")
def bot(spec: BotSpec, url: str, token: str | None, token_file: str | None, register: bool,
        display: str | None, version: str, options: tuple[tuple[str, str], ...],
        seed: int | None, games: int | None, ladder: str | None, max_games: int | None,
        instance: str | None, loop_name: str, warm: bool | None, verbose: bool) -> None:
    """Run BOT_SPEC (a built-in or installed bot, or file.py:Class, with options) as a
    client of the server at --url; one process plays many games at once and resumes its
    session after a dropped connection."""
    spec = spec.with_options(options)
    probe = bot_from_spec(spec, seed)  # fail fast on unknown bots and options
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    name = display or default_name(spec.ref)
    token, register, on_token = account_token(name, token, token_file, register)
    rulesets = [r for r in (ladder or "").split(",") if r]
    names = ladder_names(rulesets)  # a ruleset file's name; a bad file fails here, at once
    if warm or (warm is None and rulesets):
        for move in warm_up(lambda: bot_from_spec(spec, seed), rulesets or ["grid5"]):
            logging.getLogger(__name__).info("%s: warmed up on %s as %s in %.2f s", name,
                                             move.rules, move.side, move.seconds)
    client = BotClient(lambda: bot_from_spec(spec, seed), url, name, version, token, games,
                       instance=instance, register=register, on_token=on_token,
                       ladder=names or None, concurrent=max_games, roles=probe.roles)
    played = run_on_loop(run_client(client), loop_name)
    click.echo(f"{client.name}: played {played} games", err=True)
