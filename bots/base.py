"""The bot interface, shared by the in-process arena and the network client.

A bot sees exactly what its seat may see (a :class:`game.View`) plus the legal moves, and
returns one of them. A random bot is five lines::

    class Coin(Bot):
        name = "coin"
        def choose(self, view, legal):
            return self.rng.choice(legal)

Options are keyword arguments of ``__init__`` with typed defaults; the registry turns
``key=value`` strings from the command line into those types.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from game import Move, Outcome, Ruleset, View
from game.errors import YardError


class BotRoleError(YardError):
    """A bot was seated on a side it cannot play."""


def require_role(bot: Bot, role: str) -> None:
    """Raise :class:`BotRoleError` unless ``bot`` can play ``role`` (mrx / detectives)."""
    if role not in bot.roles:
        can = " or ".join(sorted(bot.roles)) or "nothing"
        raise BotRoleError(f"bot {bot.name!r} cannot play {role}; it plays {can}")


class Bot(ABC):
    """Base class of every bot. Subclasses implement :meth:`choose`.

    ``roles`` says which sides the bot can play: ``"mrx"``, ``"detectives"`` or both.
    ``self.rng`` is seeded from ``seed`` so the same seed gives the same game.
    """

    name: ClassVar[str] = "bot"
    roles: ClassVar[frozenset[str]] = frozenset({"mrx", "detectives"})

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def begin(self, rules: Ruleset, seats: Sequence[int], seed: int | None = None) -> None:
        """Start a game: reseed ``self.rng`` (if ``seed`` is given), then :meth:`new_game`.

        Runners call this, not :meth:`new_game`, so a game depends only on its own seed.
        Raises :class:`BotRoleError` if a seat is on a side the bot cannot play.
        """
        for role in sorted({"mrx" if seat == 0 else "detectives" for seat in seats}):
            require_role(self, role)
        if seed is not None:
            self.rng = random.Random(seed)
        self.new_game(rules, seats)

    def new_game(self, rules: Ruleset, seats: Sequence[int]) -> None:  # noqa: B027 (optional hook)
        """Called before a game starts with the seats this bot plays (0 = Mister X)."""

    @abstractmethod
    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Pick one of ``legal`` for the seat ``view.to_move``."""

    def game_over(self, outcome: Outcome) -> None:  # noqa: B027 (optional hook)
        """Called once when a game this bot played has ended."""

    def describe(self) -> str:
        """Name plus options, for logs and tournament tables."""
        return self.name
