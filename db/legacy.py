"""Game records as earlier yards stored them in ``game_records.record``, read only.

Two old forms exist. Format 1 (``format`` absent or ``1``) holds every turn and the
messages each seat was sent (``transcripts``) inline. Format 2 leaves the turns to the
``turns`` table and holds the server's match log instead of the messages. Both name seats
by number and carry ``ruleset_definition``, ``start_position``, ``seats``, ``outcome``,
``moves``, ``tournament_id`` and ``schedule_id``. New rows hold the self-contained record
of :mod:`db.portable` (``format`` ``"yard-game-record"``).

Old rows are converted to a :class:`GameRecord` when they are read and are never rewritten.
A migration that rewrote them would run when a database is opened, so a read command
(``yard games``, ``replay``, ``export``, the web pages) would need write access, and on a
large PostgreSQL database it would hold every game's row in one long transaction; reading
both forms costs one check per row and leaves the data as the older yard wrote it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from db.errors import DatabaseError
from game import Outcome
from records import GameRecord, MatchLog, SeatRecord, TurnRecord

OLD_FORMATS = (1, 2)


def is_old(data: Any) -> bool:
    """Whether a stored record is in one of the old forms (``format`` 1, 2 or absent)."""
    return isinstance(data, dict) and data.get("format", 1) in OLD_FORMATS


def has_turns(data: dict[str, Any]) -> bool:
    """Whether an old record holds its turns itself (format 1) instead of the table."""
    return data.get("turns") is not None


def record_from_old(data: dict[str, Any], turns: list[TurnRecord] | None = None
                    ) -> GameRecord:
    """The :class:`GameRecord` of an old-form record, given the game's ``turns`` from the
    table (a format 1 record has its own); :class:`DatabaseError` on a malformed one."""
    try:
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
