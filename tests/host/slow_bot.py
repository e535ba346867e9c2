"""A ladder house bot for the browser tests (``yard serve --house tests/host/slow_bot.py:Slow:
delay=0.2``): a random player that takes ``delay`` seconds a move, so its games keep its
slots busy for a while."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from bots.base import Bot
from game import Move, View


class Slow(Bot):
    """Random legal moves, each after ``delay`` seconds."""

    def __init__(self, seed: int | None = None, delay: float = 0.2) -> None:
        super().__init__(seed)
        self.delay = delay
        self.rng = random.Random(seed)

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        time.sleep(self.delay)
        return self.rng.choice(legal)


class SlowMrX(Slow):
    """:class:`Slow` that only plays Mister X (its warm-up, one move a side, sleeps once)."""

    roles = frozenset({"mrx"})
