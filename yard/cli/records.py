"""``yard games`` (list stored games), ``yard replay`` (print one game move by move, or its
self-contained record) and ``yard import`` (load self-contained records).

All read the database named by ``--db`` (any SQLAlchemy URL), else ``$YARD_DB``, else
``sqlite:///yard.db`` in the current folder. A missing SQLite file, a bad URL or an unknown
game id is one ``error: ...`` line and exit status 2 (a :class:`~db.errors.DatabaseError`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

from db.errors import RecordError
from db.exchange import game_from_file, record_file_lines, stored_game
from db.portable import PortableGame, PortableTournament, read_lines, to_line
from db.replay import Perspective, replay_lines
from db.store import Database
from game import Termination
from records import GameRecord, GameSummary
from server.transcript import TranscriptError, transcripts
from yard.cli.options import db_option, json_option, selection_options


@click.command()
@selection_options
@click.option("--player", metavar="NAME", default=None,
              help="Only games NAME played (as Mister X, the detectives, or one of their "
              "seats).")
@click.option("--termination", type=click.Choice([t.value for t in Termination]),
              default=None, help="Only games that ended this way.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Newest N games.")
@json_option("Print one JSON array.")
def games(db_url: str, ruleset: str | None, tournament_id: str | None, player: str | None,
          termination: str | None, limit: int | None, as_json: bool) -> None:
    """List stored games, newest first."""
    with Database.connect(db_url, create=False) as store:
        found = store.list_games(ruleset=ruleset, tournament_id=tournament_id, limit=limit,
                                 player=player, termination=None if termination is None
                                 else Termination(termination))
    if as_json:
        click.echo(json.dumps([g.to_dict() for g in found]))
    elif not found:
        click.echo("no games found")
    else:
        _print_games(found)


#: ``yard games`` columns, and the layouts tried from the widest: game ids and player names
#: are never cut (``yard replay`` takes the id); the tournament (the game id's prefix for
#: tournament games), the time, moves and ruleset go first at narrow widths. The winner and
#: how the game ended always stay: at the narrowest as one ``result`` column (``mrx:
#: survived``) that wraps after the winner, so 80 columns keep the termination.
_GAME_COLUMNS: dict[str, Callable[[GameSummary], str]] = {
    "game": lambda g: g.game_id,
    "ruleset": lambda g: g.ruleset,
    "mrx": lambda g: g.mrx_player,
    "detectives": lambda g: g.detective_player,
    "winner": lambda g: g.winner.value if g.winner else "-",
    "reason": lambda g: g.termination.value,
    "moves": lambda g: str(g.moves),
    "finished (UTC)": lambda g: g.finished_at.strftime("%Y-%m-%d %H:%M:%S"),
    "tournament": lambda g: g.tournament_id or "-",
    "result": lambda g: f"{g.winner.value if g.winner else 'none'}: {g.termination.value}",
}
_GAME_LAYOUTS: tuple[tuple[str, ...], ...] = (
    ("game", "ruleset", "mrx", "detectives", "winner", "reason", "moves", "finished (UTC)",
     "tournament"),
    ("game", "ruleset", "mrx", "detectives", "winner", "reason", "moves", "finished (UTC)"),
    ("game", "ruleset", "mrx", "detectives", "winner", "reason", "moves"),
    ("game", "mrx", "detectives", "winner", "reason"),
    ("game", "mrx", "detectives", "result"),
)


def _print_games(found: list[GameSummary]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ratings.render import first_fitting, output_console

    # Wrapped, ``result`` breaks after the winner: no termination is ever cut.
    ending = max(len(g.termination.value) for g in found)

    def layout(keys: tuple[str, ...]) -> Callable[[], Table]:
        def build() -> Table:
            table = Table()
            for key in keys:
                table.add_column(key, no_wrap=key in ("game", "mrx", "detectives"),
                                 overflow="fold", min_width=ending if key in (
                                     "reason", "result") else None)
            for g in found:
                table.add_row(*(escape(_GAME_COLUMNS[key](g)) for key in keys))
            return table
        return build

    console = output_console()
    console.print(first_fitting([layout(keys) for keys in _GAME_LAYOUTS], console.width))


@click.command()
@click.argument("game_id")
@db_option
@click.option("--as", "perspective", type=click.Choice([p.value for p in Perspective]),
              default=Perspective.ALL.value, show_default=True,
              help="Whose view: detectives see Mister X's hidden stations as '?'.")
@json_option("Print the game's self-contained record (one JSON line, the whole truth; "
                   "--as does not apply).")
@click.option("--file", "file", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, metavar="FILE",
              help="Read the game from a records file (yard export --what records; '-' for "
                   "standard input) instead of the database.")
@click.option("--messages", "seat", default=None, metavar="SEAT",
              help="Print every message the server sent the holder of SEAT (mrx, d1, ...) "
                   "or the spectators (public) in this game, one JSON object a line, "
                   "rebuilt from the stored record.")
def replay(game_id: str, db_url: str, perspective: str, as_json: bool,
           file: str | None, seat: str | None) -> None:
    """Print a finished game move by move, with the possible-location count and the
    stations after each turn.

    '!' marks a reveal move; faults are shown in brackets.
    """
    if file is not None:
        game = game_from_file(file, game_id)
    else:
        with Database.connect(db_url, create=False) as store:
            game = stored_game(store, game_id) if as_json else \
                PortableGame(store.load_game(game_id))
    if seat is not None:
        _print_messages(game.record, seat)
        return
    if as_json:
        click.echo(to_line(game.record, game.tournament, game.entry))
        return
    for line in replay_lines(game.record, Perspective(perspective)):
        click.echo(line)


def _print_messages(record: GameRecord, seat: str) -> None:
    sent = transcripts(record)
    if not sent:
        raise TranscriptError(f"game {record.game_id} has no messages to show (played "
                              f"in-process, or imported without its match log)")
    if seat not in sent:
        raise TranscriptError(f"game {record.game_id} has no seat {seat!r:.20}; seats: "
                              f"{', '.join(sent)}")
    for message in sent[seat]:
        click.echo(json.dumps(message, separators=(",", ":")))


MAX_SHOWN_ERRORS = 20


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@db_option
@json_option("Print one JSON object: imported, skipped, tournaments.")
def import_records(file: str, db_url: str, as_json: bool) -> None:
    """Load self-contained game records (JSON Lines from 'yard export --what records';
    '-' for standard input) into the database, with the tournaments' schedules and
    recorded state (their unplayed games and SPRT decisions).

    Every record is checked first (its moves replayed by the engine); if any is bad, each
    bad line is reported and nothing is stored. Games already in the database (by game id)
    are skipped, so importing a file twice stores it once.
    """
    games: list[PortableGame] = []
    tournaments: list[PortableTournament] = []
    errors: list[str] = []
    for number, item in read_lines(record_file_lines(file)):
        if isinstance(item, RecordError):
            errors.append(f"{file} line {number}: {item}")
        elif isinstance(item, PortableTournament):
            tournaments.append(item)
        else:
            games.append(item)
    if errors:
        for text in errors[:MAX_SHOWN_ERRORS]:
            click.echo(f"error: {text}", err=True)
        if len(errors) > MAX_SHOWN_ERRORS:
            click.echo(f"error: ... and {len(errors) - MAX_SHOWN_ERRORS} more bad lines",
                       err=True)
        raise RecordError(f"{len(errors)} bad record{'s' if len(errors) > 1 else ''} in "
                          f"{file}; nothing imported")
    with Database.connect(db_url) as store:
        stored = store.import_games(games, tournaments)
    imported, skipped = stored.count(True), stored.count(False)
    if as_json:
        click.echo(json.dumps({"imported": imported, "skipped": skipped,
                               "tournaments": len(tournaments)}))
    else:
        schedules = (f" and the schedules of {len(tournaments)} tournament"
                     f"{'s' if len(tournaments) != 1 else ''}" if tournaments else "")
        click.echo(f"imported {imported} games{schedules}, skipped {skipped} already stored "
                   f"({Path(file).name if file != '-' else 'stdin'} -> {store.url})")
