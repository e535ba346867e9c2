"""``yard bots``: list the bots, their roles and options (``--json`` for the runner's
discovery, :mod:`tournament.discovery`)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import click

from bots.base import Bot
from bots.options import BotOption, declared_options
from bots.registry import bot_class, bot_from_spec, bot_names, bot_source
from bots.spec import BotSpec, merge_options
from yard.cli.options import BOT_SPEC, json_option


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
