"""GameRecord <-> JSON-ready dict, the form stored in ``game_records.record``.

Format 2 (written now) leaves the turns out (the ``turns`` table holds them; the reader
passes them in) and stores the server's :class:`~db.records.MatchLog` instead of per-seat
transcripts; ``transcripts`` is written only when a record carries some. Format 1 (read
only) has ``turns`` and ``transcripts`` inline.

>>> from datetime import datetime, UTC
>>> from game import Outcome, Termination, Winner
>>> from db.records import GameRecord, MatchLog, SeatRecord, TurnRecord
>>> t = datetime(2024, 1, 1, tzinfo=UTC)
>>> turns = [TurnRecord(0, 0, "taxi:2", 0.25)]
>>> rec = GameRecord("g1", "grid5", {}, 1, "rules=grid5 mrx=1 det=2", [SeatRecord(0, "a"),
...     SeatRecord(1, "b")], Outcome(Winner.MRX, Termination.SURVIVED), turns, [1, 2], t, t)
>>> "turns" in record_to_dict(rec)
False
>>> record_from_dict(record_to_dict(rec), turns) == rec
True
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from db.errors import DatabaseError
from db.records import GameRecord, MatchLog, SeatRecord, TurnRecord
from game import Outcome

FORMAT_VERSION = 2

EFFORT_KEYS = ("playouts", "nodes", "depth")
"""Optional per-turn keys (absent from older records and from turns without a report)."""


def record_to_dict(record: GameRecord) -> dict[str, Any]:
    """The JSON-ready form of ``record`` (datetimes as ISO 8601 text), without its turns."""
    out = {
        "format": FORMAT_VERSION,
        "game_id": record.game_id, "ruleset": record.ruleset,
        "ruleset_definition": record.ruleset_definition, "seed": record.seed,
        "start_position": record.start_position,
        "seats": [_seat_to_dict(s) for s in record.seats],
        "outcome": record.outcome.to_dict(),
        "mrx_path": list(record.mrx_path),
        "started_at": record.started_at.isoformat(),
        "finished_at": record.finished_at.isoformat(),
        "moves": record.moves, "tournament_id": record.tournament_id,
        "schedule_id": record.schedule_id,
    }
    if record.log is not None:
        out["log"] = record.log.to_dict()
    if record.transcripts:
        out["transcripts"] = record.transcripts
    return out


def _seat_to_dict(seat: SeatRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat.seat, "bot_name": seat.bot_name,
                           "bot_version": seat.bot_version}
    if seat.instance is not None:  # records from before instances stay as they were
        out["instance"] = seat.instance
    return out


def turn_to_dict(turn: TurnRecord) -> dict[str, Any]:
    """A turn as format 1 records held it inline (effort keys only when reported)."""
    out: dict[str, Any] = {"index": turn.index, "seat": turn.seat, "move": turn.move,
                           "time_used": turn.time_used, "fault": turn.fault,
                           "detail": turn.detail}
    for key in EFFORT_KEYS:  # only what the bot reported: no nulls in every turn
        if (value := getattr(turn, key)) is not None:
            out[key] = value
    return out


def record_from_dict(data: dict[str, Any], turns: list[TurnRecord] | None = None
                     ) -> GameRecord:
    """Inverse of :func:`record_to_dict` given the game's ``turns`` (a format 1 record has
    its own); raises :class:`DatabaseError` on a bad record."""
    try:
        if data.get("format", 1) > FORMAT_VERSION:
            raise ValueError(f"format {data['format']} is newer than this yard reads")
        inline = data.get("turns")
        log = data.get("log")
        return GameRecord(
            game_id=data["game_id"], ruleset=data["ruleset"],
            ruleset_definition=data["ruleset_definition"], seed=data["seed"],
            start_position=data["start_position"],
            seats=[SeatRecord(**s) for s in data["seats"]],
            outcome=Outcome.from_dict(data["outcome"]),
            turns=[TurnRecord(**t) for t in inline] if inline is not None
            else list(turns or []),
            mrx_path=list(data["mrx_path"]),
            started_at=datetime.fromisoformat(data["started_at"]),
            finished_at=datetime.fromisoformat(data["finished_at"]),
            moves=data["moves"], tournament_id=data["tournament_id"],
            schedule_id=data["schedule_id"], transcripts=data.get("transcripts") or {},
            log=None if log is None else MatchLog.from_dict(log))
    except (KeyError, TypeError, ValueError) as exc:
        raise DatabaseError(f"stored record of game {data.get('game_id')!r} is malformed: "
                            f"{exc!r}") from None
