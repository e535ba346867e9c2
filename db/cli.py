"""``yard games`` (list stored games) and ``yard replay`` (print one game move by move).

Both read the database named by ``--db`` (any SQLAlchemy URL), else ``$YARD_DB``, else
``sqlite:///yard.db`` in the current folder. A missing SQLite file, a bad URL or an unknown
game id is one ``error: ...`` line and exit status 2 (a :class:`~db.errors.DatabaseError`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from db.engine import DEFAULT_DB_URL
from db.records import GameSummary
from db.replay import Perspective, replay_lines
from db.store import Database

F = TypeVar("F", bound=Callable[..., Any])


def db_option(func: F) -> F:
    """The shared ``--db URL`` option (``$YARD_DB``, default ``sqlite:///yard.db``)."""
    option = click.option("--db", "db_url", envvar="YARD_DB", default=DEFAULT_DB_URL,
                          show_default=True, metavar="URL",
                          help="SQLAlchemy database URL (env YARD_DB).")
    return option(func)


@click.command()
@db_option
@click.option("--rules", "ruleset", default=None, help="Only games of this ruleset.")
@click.option("--tournament", "tournament_id", default=None, help="Only this tournament.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Newest N games.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array.")
def games(db_url: str, ruleset: str | None, tournament_id: str | None, limit: int | None,
          as_json: bool) -> None:
    """List stored games, newest first."""
    with Database.connect(db_url, create=False) as store:
        found = store.list_games(ruleset=ruleset, tournament_id=tournament_id, limit=limit)
    if as_json:
        click.echo(json.dumps([g.to_dict() for g in found]))
    elif not found:
        click.echo("no games found")
    else:
        _print_games(found)


def _print_games(found: list[GameSummary]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for column in ("game", "ruleset", "mrx", "detectives", "winner", "reason", "moves",
                   "finished (UTC)", "tournament"):
        table.add_column(column, overflow="fold")
    for g in found:
        table.add_row(g.game_id, g.ruleset, g.mrx_player, g.detective_player,
                      g.winner.value if g.winner else "-", g.termination.value, str(g.moves),
                      g.finished_at.strftime("%Y-%m-%d %H:%M:%S"), g.tournament_id or "-")
    Console(width=max(120, Console().width)).print(table)


@click.command()
@click.argument("game_id")
@db_option
@click.option("--as", "perspective", type=click.Choice([p.value for p in Perspective]),
              default=Perspective.ALL.value, show_default=True,
              help="Whose view: detectives see Mister X's hidden stations as '?'.")
def replay(game_id: str, db_url: str, perspective: str) -> None:
    """Print a finished game move by move, with the possible-location count.

    '!' marks a reveal move; faults are shown in brackets.
    """
    with Database.connect(db_url, create=False) as store:
        record = store.load_game(game_id)
    for line in replay_lines(record, Perspective(perspective)):
        click.echo(line)
