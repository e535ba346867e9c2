"""Game endings as values: who won, why, and (for forfeits) which seat was at fault."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Winner(Enum):
    """The winning side."""

    MRX = "mrx"
    DETECTIVES = "detectives"


class Termination(Enum):
    """Why a game ended. The first four are rule endings from the engine; the rest are
    forfeits and aborts decided by whoever runs the match (server or arena).

    ``illegal_move``: the seat produced no legal move (the server's ``max_illegal`` bad
    tries, or the bot said so itself); ``bot_error``: the bot reported that its own code
    failed (an exception in ``choose``). Stored records keep the value, so members are
    only ever added."""

    CAUGHT = "caught"
    SURVIVED = "survived"
    CORNERED = "cornered"
    DETECTIVES_STUCK = "detectives_stuck"
    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    BOT_ERROR = "bot_error"
    DISCONNECTED = "disconnected"
    PROTOCOL_VIOLATION = "protocol_violation"
    ABORTED = "aborted"
    #: The side gave the game up (a person's Resign button, ``resign``): a loss, not a
    #: fault.
    RESIGNED = "resigned"


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game.

    ``winner`` is ``None`` only for aborted games. ``seat`` names the offending seat of a
    forfeit (0 is Mister X, 1.. the detectives), else ``None``.
    """

    winner: Winner | None
    termination: Termination
    seat: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"winner": self.winner.value if self.winner else None,
                "termination": self.termination.value, "seat": self.seat}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """Inverse of :meth:`to_dict`."""
        winner = data.get("winner")
        return cls(Winner(winner) if winner else None, Termination(data["termination"]),
                   data.get("seat"))

    @staticmethod
    def forfeit(seat: int, termination: Termination) -> Outcome:
        """The side of ``seat`` loses because of ``termination``."""
        return Outcome(Winner.DETECTIVES if seat == 0 else Winner.MRX, termination, seat)


MRX = 0


def seat_name(seat: int) -> str:
    """``0`` → ``"mrx"``, ``k`` → ``"dk"``."""
    return "mrx" if seat == 0 else f"d{seat}"


def parse_seat(name: str) -> int:
    """Inverse of :func:`seat_name`; raises ``ValueError`` for anything else."""
    if name == "mrx":
        return 0
    if len(name) >= 2 and name[0] == "d" and name[1:].isdigit() and int(name[1:]) >= 1:
        return int(name[1:])
    raise ValueError(f"unknown seat {name!r}: expected 'mrx' or 'd1', 'd2', ...")
