"""The reference bot that plays the other side of every check game."""

from __future__ import annotations

from collections.abc import Sequence

from bots.base import Bot
from game import MRX, Move, Ticket, View

REFERENCE = "yard-reference"
"""The reference bot's name on the server (a bot under test may not use it)."""


class ReferenceBot(Bot):
    """Random moves, except that Mister X opens with a double move and then a secret move
    when he can (so detectives see both in his travel log)."""

    name = REFERENCE

    def __init__(self, seed: int | None = None) -> None:
        """A reference bot whose Mister X has made no move yet."""
        super().__init__(seed)
        self.mrx_turns = 0

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """A double move first, then a secret one, else a random move."""
        if view.seat == MRX:
            self.mrx_turns += 1
            if self.mrx_turns == 1:
                wanted = [m for m in legal if m.is_double]
            elif self.mrx_turns == 2:
                wanted = [m for m in legal if m.ticket is Ticket.SECRET and not m.is_double]
            else:
                wanted = []
            if wanted:
                return self.rng.choice(wanted)
        return self.rng.choice(legal)

