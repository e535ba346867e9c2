"""The pace of house-vs-house ladder games (sans-I/O: time passed in).

House bots (``yard serve --house``) are the ladder's fixed points and the Play page's
opponents. Left alone, two fast house bots would play each other as fast as they can move
(thousands of stored games a minute on grid5), so a pair of them meets only while a token
bucket allows it: ``rate`` games a minute on average (a pair is two games), in bursts of
at most one pair. Games with any other bot, and people's games, are not paced.

>>> pace = HousePace({"random", "greedy"}, rate=1.0, now=0.0)
>>> pace.apart("random", "greedy", 0.0), pace.apart("random", "mybot", 0.0)
(False, False)
>>> pace.paired("random", "greedy", 0.0)
>>> pace.apart("random", "greedy", 60.0), pace.apart("random", "greedy", 120.0)
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable

PAIR = 2.0
"""Games in a pair (both legs are paid for when the pair is made)."""


class HousePace:
    """House-vs-house pairs among ``houses`` (bot names) at most ``rate`` games a minute on
    average (0: none at all)."""

    def __init__(self, houses: Iterable[str], rate: float, now: float) -> None:
        """Pace the house bots ``houses`` at ``rate`` games a minute, starting at ``now``."""
        if rate < 0:
            raise ValueError(f"the house-vs-house rate must be >= 0, got {rate}")
        self.houses = frozenset(houses)
        self.rate = rate
        self.tokens = PAIR
        self.stamp = now

    def _refill(self, now: float) -> None:
        self.tokens = min(PAIR, self.tokens + max(0.0, now - self.stamp) * self.rate / 60)
        self.stamp = max(self.stamp, now)

    def house_pair(self, a: str, b: str) -> bool:
        """Both ``a`` and ``b`` are house bots."""
        return a in self.houses and b in self.houses

    def apart(self, a: str, b: str, now: float) -> bool:
        """``a`` and ``b`` are house bots that may not start a pair at ``now``."""
        if not self.house_pair(a, b):
            return False
        self._refill(now)
        return self.rate == 0 or self.tokens < PAIR - 1e-9  # rounding: not a pair short

    def paired(self, a: str, b: str, now: float) -> None:
        """A pair of ``a`` and ``b`` was made at ``now`` (paid for if both are house bots)."""
        if self.house_pair(a, b):
            self._refill(now)
            self.tokens -= PAIR

    def next_pair(self, now: float) -> float | None:
        """When the next house pair may be made (``now`` if it may; ``None``: never)."""
        if self.rate == 0:
            return None
        self._refill(now)
        return now + max(0.0, PAIR - self.tokens) * 60 / self.rate
