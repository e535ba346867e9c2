"""Plain records of finished games, shared by the server (writer), the database layer
(storage) and the ratings and replay code (readers). No SQLAlchemy here.

A :class:`GameRecord` holds the truth (start position, every move, Mister X's path) and
what each seat was sent (``transcripts``), so any game can be replayed from any seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from game import Outcome


@dataclass
class SeatRecord:
    """Who played a seat: ``seat`` 0 is Mister X, 1.. the detectives."""

    seat: int
    bot_name: str
    bot_version: str = ""


@dataclass
class TurnRecord:
    """One turn as refereed.

    ``move`` is the move's text form (``None`` when the turn ended in a fault without a
    move). ``fault`` is a fault code such as ``timeout``, ``illegal_move``,
    ``random_move_on_timeout`` or ``disconnected``; ``None`` for a clean move.
    """

    index: int
    seat: int
    move: str | None
    time_used: float
    fault: str | None = None
    detail: str | None = None


@dataclass
class GameRecord:
    """A finished game, written to the database in one transaction."""

    game_id: str
    ruleset: str
    ruleset_definition: dict[str, Any]
    seed: int | None
    start_position: str
    seats: list[SeatRecord]
    outcome: Outcome
    turns: list[TurnRecord]
    mrx_path: list[int]
    started_at: datetime
    finished_at: datetime
    moves: int = 0
    tournament_id: str | None = None
    schedule_id: int | None = None
    transcripts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def mrx_player(self) -> str:
        """The bot that played Mister X."""
        return next(s.bot_name for s in self.seats if s.seat == 0)

    @property
    def detective_player(self) -> str:
        """The detective side as one name: a single bot, or bots joined by ``+`` in seat
        order when detectives were played by different bots."""
        names = [s.bot_name for s in sorted(self.seats, key=lambda s: s.seat) if s.seat > 0]
        return names[0] if len(set(names)) == 1 else "+".join(names)
