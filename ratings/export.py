"""Flat records for ``yard export`` and their CSV / JSON text. Pure: the CLI reads the
database and hands the objects here.

>>> print(to_csv([{"a": 1, "b": None}], ["a", "b"]).strip())
a,b
1,
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any, Protocol

from ratings.leaderboard import Leaderboard

Record = dict[str, Any]

GAME_COLUMNS = ["game_id", "ruleset", "mrx_player", "detective_player", "winner",
                "termination", "moves", "tournament_id", "schedule_id", "pair_key"]
TURN_COLUMNS = ["game_id", "index", "seat", "move", "time_used", "fault", "detail"]
RATING_COLUMNS = ["ruleset", "anchor", "mrx_advantage", "rank", "player", "elo", "elo_low",
                  "elo_high", "elo_mrx", "elo_mrx_low", "elo_mrx_high", "elo_detectives",
                  "elo_detectives_low", "elo_detectives_high", "games", "mrx_games",
                  "mrx_wins", "detective_games", "detective_wins", "superiority_next"]


class Export(Enum):
    """What ``yard export`` writes."""

    GAMES = "games"
    TURNS = "turns"
    RATINGS = "ratings"
    RECORDS = "records"
    """Self-contained game records, JSON Lines (written by ``db``, not rendered here)."""


class Format(Enum):
    """Output format of ``yard export``."""

    CSV = "csv"
    JSON = "json"


class TurnLike(Protocol):
    """The fields of a ``records.TurnRecord`` that are exported."""

    index: int
    seat: int
    move: str | None
    time_used: float
    fault: str | None
    detail: str | None


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def game_record(row: Any) -> Record:
    """One ``games`` record from a result row (``records.ResultRow``)."""
    return {name: _plain(getattr(row, name)) for name in GAME_COLUMNS}


def turn_records(game_id: str, turns: Iterable[TurnLike]) -> list[Record]:
    """The ``turns`` records of one game."""
    return [{"game_id": game_id, "index": t.index, "seat": t.seat, "move": t.move,
             "time_used": t.time_used, "fault": t.fault, "detail": t.detail} for t in turns]


def rating_records(board: Leaderboard) -> list[Record]:
    """The ``ratings`` records of one ruleset's leaderboard, intervals split in two."""
    out: list[Record] = []
    for row in board.rows:
        data = row.to_dict()
        record: Record = {"ruleset": board.ruleset, "anchor": board.anchor,
                          "mrx_advantage": board.mrx_advantage}
        for key in ("elo", "elo_mrx", "elo_detectives"):
            ci = data.pop("ci95" + key[3:])
            record[key] = data.pop(key)
            record[key + "_low"], record[key + "_high"] = ci if ci else (None, None)
        record.update(data)
        out.append({name: record[name] for name in RATING_COLUMNS})
    return out


def columns_for(what: Export) -> list[str]:
    """The column order of an export."""
    columns = {Export.GAMES: GAME_COLUMNS, Export.TURNS: TURN_COLUMNS,
               Export.RATINGS: RATING_COLUMNS}
    if what not in columns:
        raise ValueError(f"{what.value} records have no columns (they are JSON Lines)")
    return columns[what]


def to_csv(records: Sequence[Record], columns: Sequence[str]) -> str:
    """CSV text with a header line; ``None`` is an empty field."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


def to_json(records: Sequence[Record]) -> str:
    """A JSON array of the records."""
    return json.dumps(list(records), indent=1) + "\n"


def render(records: Sequence[Record], what: Export, fmt: Format) -> str:
    """The text of an export."""
    return to_csv(records, columns_for(what)) if fmt is Format.CSV else to_json(records)
