"""``yard rules``: list the built-in rulesets (or describe ruleset files given as paths)."""

from __future__ import annotations

import json
from typing import Any

import click

from game.rules import Ruleset, builtin_rulesets, load_ruleset
from yard.cli.options import json_option


def _tickets(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "none"
    return " ".join(f"{name[0].upper()}{n}" for name, n in counts.items())


def _optional(rules: Ruleset) -> str:
    flags = [("double moves", rules.double_moves), ("secret", rules.secret_moves),
             ("ferry", rules.ferry), ("tickets to X", rules.tickets_to_mrx),
             ("random starts", rules.random_starts)]
    return ", ".join(name for name, on in flags if on) or "-"


def describe(rules: Ruleset) -> dict[str, Any]:
    """The text columns shown for one ruleset."""
    info = rules.summary()
    span = rules.min_detectives, rules.max_detectives
    return {
        "name": rules.name,
        "board": f"{rules.board.name} ({rules.board.n_stations})",
        "detectives": f"{rules.detectives} ({span[0]}-{span[1]})",
        "detective tickets": _tickets(info["detective_tickets"]),
        "mrx tickets": _tickets(info["mrx_tickets"]),
        "reveals": ",".join(map(str, sorted(rules.reveal_moves))) or "none",
        "length": str(rules.max_moves),
        "optional": _optional(rules),
        "source": rules.source,
    }


def _print_table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(caption="tickets: T taxi, B bus, U underground, S secret, D double; "
                  "length and reveals count Mister X's travel-log entries")
    for column in rows[0]:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row.values())
    Console(width=max(140, Console().width)).print(table)


@click.command()
@click.argument("paths", nargs=-1)
@json_option("Print one JSON array instead of a table.")
def rules(paths: tuple[str, ...], as_json: bool) -> None:
    """List the built-in rulesets, or the rulesets in the given .toml PATHS."""
    rulesets = [load_ruleset(p) for p in paths] if paths else builtin_rulesets()
    if as_json:
        click.echo(json.dumps([r.summary() for r in rulesets]))
        return
    _print_table([describe(r) for r in rulesets])
