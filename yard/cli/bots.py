"""``yard bot`` (run a bot as a network client) and ``yard bots`` (list the bots)."""

from __future__ import annotations

import json
import logging
import textwrap
from typing import Any

import click

from bots.base import Bot
from bots.client import LOOPS, BotClient, account_token, run_client, run_on_loop
from bots.options import BotOption, declared_options
from bots.registry import bot_class, bot_from_spec, bot_names, bot_source, default_name
from bots.spec import BotSpec, merge_options
from yard.cli.options import BOT_SPEC, OPTION_PAIR, json_option


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
@click.option("--games", type=int, help="Exit after this many games.")
@click.option("--ladder", metavar="RULES[,RULES...]",
              help="Be matched on the server's standing ladder for these rulesets "
              "(yard serve --ladder), e.g. grid5.")
@click.option("--max-games", type=click.IntRange(1), metavar="N",
              help="Most ladder games at once (default 1).")
@click.option("--instance", help="Label telling this process apart from other processes "
              "of the same bot (tournament runners give each game slot its own).")
@click.option("--loop", "loop_name", default="auto", show_default=True,
              type=click.Choice(list(LOOPS)),
              help="Event loop: auto is uvloop when installed (pip install 'yard[fast]').")
@click.option("-v", "--verbose", is_flag=True, help="Log connection events.")
def bot(spec: BotSpec, url: str, token: str | None, token_file: str | None, register: bool,
        display: str | None, version: str, options: tuple[tuple[str, str], ...],
        seed: int | None, games: int | None, ladder: str | None, max_games: int | None,
        instance: str | None, loop_name: str, verbose: bool) -> None:
    """Run BOT_SPEC (a built-in or installed bot, or file.py:Class, with options) as a
    client of the server at --url; one process plays many games at once and resumes its
    session after a dropped connection."""
    spec = spec.with_options(options)
    bot_from_spec(spec, seed)  # fail fast on unknown bots and options
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    name = display or default_name(spec.ref)
    token, register, on_token = account_token(name, token, token_file, register)
    client = BotClient(lambda: bot_from_spec(spec, seed), url, name, version, token, games,
                       instance=instance, register=register, on_token=on_token,
                       ladder=[r for r in (ladder or "").split(",") if r] or None,
                       concurrent=max_games)
    played = run_on_loop(run_client(client), loop_name)
    click.echo(f"{client.name}: played {played} games", err=True)


def bot_row(ref: str, bot: Bot | None = None) -> dict[str, Any]:
    """``{"name", "roles", "timed", "cores", "rulesets", "source", "options"}`` for one bot
    ref, from ``bot`` or a default instance; ``options`` lists what the class declares
    (:meth:`bots.options.BotOption.to_dict`: name, type, default, help, ...). An installed
    bot that fails to load gets roles ``[]`` and the reason under ``"error"`` (a built-in
    one that fails is a bug: it raises)."""
    row: dict[str, Any] = {"name": ref, "roles": [], "timed": False, "cores": 1,
                           "rulesets": None, "source": bot_source(ref), "options": []}
    try:
        row["options"] = [o.to_dict() for o in declared_options(bot_class(ref))]
    except Exception:  # third-party code: the error comes from the instance below
        if row["source"] == "builtin":
            raise
    if bot is None:
        try:
            bot = bot_from_spec(BotSpec(ref), 0)
        except Exception as exc:  # third-party code: any failure is shown, not fatal
            if row["source"] == "builtin":
                raise
            return {**row, "error": f"{type(exc).__name__}: {exc}"}
    rulesets = None if bot.rulesets is None else sorted(bot.rulesets)
    return {**row, "roles": sorted(bot.roles), "timed": bot.timed, "cores": bot.cores,
            "rulesets": rulesets}


@click.command("bots")
@json_option("Print as JSON.")
@click.option("--check", "checks", multiple=True, type=BOT_SPEC, metavar="BOT_SPEC",
              help="First check that BOT_SPEC loads and accepts its options (repeatable; "
              "a bot's options are checked together), e.g. mcts:iterations=200 or "
              "mybot.py:Closer; exit 2 with the reason if not. Classes checked are listed "
              "too.")
@click.option("--only", "only", multiple=True, metavar="NAME",
              help="List only these bots (repeatable; names that are not bots are left "
              "out), and the classes checked: quicker than loading every bot.")
def list_bots(as_json: bool, checks: tuple[BotSpec, ...], only: tuple[str, ...]) -> None:
    """List the bots (built-in and installed under the `yard.bots` entry points), the
    roles they can play, whether they are time-based and their options (NAME=DEFAULT, type,
    help). With --json: "timed", and "cores" one move keeps busy, for the options given in
    --check, else the defaults; "rulesets" they claim, null for any; "source"; "options",
    each with "name", "type", "default", "help", "required", "choices" and "range"."""
    by_bot = merge_options(checks)
    checked = {ref: bot_from_spec(BotSpec(ref), 0, options) for ref, options in by_bot.items()}
    names = bot_names()
    if only:
        names = [name for name in names if name in only]
    refs = names + [ref for ref in by_bot if ":" in ref]
    rows = [bot_row(ref, checked.get(ref)) for ref in refs]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from ratings.render import output_width  # numpy: only for the table

    width = output_width()
    for row in rows:
        roles = ", ".join(row["roles"]) or f"(unavailable: {row.get('error', '?')})"
        timed = "  (time-based)" if row["timed"] else ""
        extra = "" if row["source"] == "builtin" else f"  [{row['source']}]"
        click.echo(f"{row['name']:<12} {roles}{timed}{extra}")
        if "error" not in row:
            for line in option_lines(declared_options(bot_class(row["name"])), width):
                click.echo(line)


def option_lines(options: tuple[BotOption, ...], width: int) -> list[str]:
    """The ``yard bots`` lines for a bot's options: ``    NAME=DEFAULT  TYPE  help``,
    aligned, the help wrapped to ``width`` columns."""
    cells = [o.shown() for o in options]
    widths = [max((len(c[i]) for c in cells), default=0) for i in range(2)]
    lines = []
    for option, cell in zip(options, cells, strict=True):
        head = "    " + "  ".join(text.ljust(w) for text, w in zip(cell, widths, strict=True))
        if not option.help:
            lines.append(head.rstrip())
            continue
        indent = " " * min(len(head) + 2, max(4, width - 30))
        wrapped = textwrap.wrap(option.help, max(20, width - len(indent)))
        first, rest = wrapped[0], wrapped[1:]
        if len(head) + 2 + len(first) <= width:
            lines.append(f"{head}  {first}")
        else:
            lines.append(head.rstrip())
            rest = wrapped
        lines += [indent + text for text in rest]
    return lines
