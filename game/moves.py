"""Tickets and moves: small immutable values with a text form.

A single move is a ticket and a destination; a double move (Mister X only) adds a second
leg and spends a double-move ticket as well as both legs' tickets.

>>> Move.parse("bus:52+taxi:13")
Move(ticket=<Ticket.BUS: 1>, to=52, ticket2=<Ticket.TAXI: 0>, to2=13)
>>> str(Move(Ticket.SECRET, 115))
'secret:115'
"""

from __future__ import annotations

import re
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
        """The move as text: ``ticket:station``, then ``+ticket:station`` if double."""
        first = f"{TICKET_NAMES[self.ticket]}:{self.to}"
        if self.to2 is None or self.ticket2 is None:
            return first
        return f"{first}+{TICKET_NAMES[self.ticket2]}:{self.to2}"

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``ticket:station`` or ``ticket:station+ticket:station``, exactly as
        :meth:`__str__` writes them: a lowercase ticket name (``taxi``, ``bus``,
        ``underground``, ``secret``), a colon, ASCII digits without a leading zero; no
        spaces. One text per move, so a move is refereed, stored and compared as written.

        Raises :class:`MoveParseError` for anything else.

        >>> Move.parse("taxi:04")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        game.errors.MoveParseError: move 'taxi:04': expected 'ticket:station' ...
        """
        if not isinstance(text, str) or len(text) > 64:
            raise MoveParseError(f"move must be a short string, got {text!r:.80}")
        found = _MOVE.fullmatch(text)
        if found is None:
            raise MoveParseError(f"move {text!r}: expected 'ticket:station' with ticket one "
                                 "of taxi, bus, underground, secret and station a number "
                                 "without leading zeros")
        first, to, second, to2 = found.groups()
        if second is None:
            return cls(_BY_NAME[first], int(to))
        return cls(_BY_NAME[first], int(to), _BY_NAME[second], int(to2))


_LEG = r"(taxi|bus|underground|secret):([1-9][0-9]{0,8})"
_MOVE = re.compile(rf"{_LEG}(?:\+{_LEG})?", re.ASCII)
"""The canonical text of a move (what :meth:`Move.__str__` writes)."""
