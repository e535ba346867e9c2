"""Tickets and moves: small immutable values with a text form.

A single move is a ticket and a destination; a double move (Mister X only) adds a second
leg and spends a double-move ticket as well as both legs' tickets.

>>> Move.parse("bus:52+taxi:13")
Move(ticket=<Ticket.BUS: 1>, to=52, ticket2=<Ticket.TAXI: 0>, to2=13)
>>> str(Move(Ticket.SECRET, 115))
'secret:115'
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from game.errors import MoveParseError


class Ticket(IntEnum):
    """A travel ticket. The first three match :class:`game.board.Transport` by value."""

    TAXI = 0
    BUS = 1
    UNDERGROUND = 2
    SECRET = 3
    DOUBLE = 4


TICKET_NAMES = {t: t.name.lower() for t in Ticket}
_BY_NAME = {name: t for t, name in TICKET_NAMES.items()}
_BY_NAME.update({"black": Ticket.SECRET, "x2": Ticket.DOUBLE, "ug": Ticket.UNDERGROUND})


class Move(NamedTuple):
    """One move: ``ticket`` to station ``to``; a double move also has ``ticket2``/``to2``.

    A tuple, so creating, hashing and comparing moves is cheap in search loops.
    """

    ticket: Ticket
    to: int
    ticket2: Ticket | None = None
    to2: int | None = None

    @property
    def is_double(self) -> bool:
        """True for a double move (two legs)."""
        return self.to2 is not None

    @property
    def destination(self) -> int:
        """Where the moving piece ends up."""
        return self.to if self.to2 is None else self.to2

    def __str__(self) -> str:
        first = f"{TICKET_NAMES[self.ticket]}:{self.to}"
        if self.to2 is None or self.ticket2 is None:
            return first
        return f"{first}+{TICKET_NAMES[self.ticket2]}:{self.to2}"

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``ticket:station`` or ``ticket:station+ticket:station``.

        Raises :class:`MoveParseError` for anything else.
        """
        if not isinstance(text, str) or len(text) > 64:
            raise MoveParseError(f"move must be a short string, got {text!r:.80}")
        legs = text.strip().lower().split("+")
        if len(legs) > 2:
            raise MoveParseError(f"move {text!r} has more than two legs")
        parsed = [_parse_leg(leg, text) for leg in legs]
        if len(parsed) == 1:
            return cls(*parsed[0])
        return cls(parsed[0][0], parsed[0][1], parsed[1][0], parsed[1][1])


def _parse_leg(leg: str, whole: str) -> tuple[Ticket, int]:
    name, sep, station = leg.partition(":")
    ticket = _BY_NAME.get(name.strip())
    if not sep or ticket is None or ticket is Ticket.DOUBLE:
        raise MoveParseError(f"move {whole!r}: expected 'ticket:station' with ticket one of "
                             "taxi, bus, underground, secret")
    try:
        number = int(station)
    except ValueError:
        raise MoveParseError(f"move {whole!r}: station {station!r} is not a number") from None
    if number < 1:
        raise MoveParseError(f"move {whole!r}: station numbers start at 1")
    return ticket, number
