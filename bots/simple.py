"""The simplest bots: ``random`` for both roles; ``rush`` (detectives); ``run``, ``run2``
(Mister X). Distances are the board's precomputed shortest paths."""

from __future__ import annotations

from collections.abc import Sequence

from bots.base import Bot
from game import Move, View


class RandomBot(Bot):
    """Uniformly random legal move."""

    name = "random"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        return self.rng.choice(legal)
