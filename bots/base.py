"""The bot interface, shared by the in-process arena and the network client.

A bot sees exactly what its seat may see (a :class:`game.View`) plus the legal moves, and
returns one of them. A random bot is five lines::

    class Coin(Bot):
        name = "coin"
        def choose(self, view, legal):
            return self.rng.choice(legal)

Options are keyword arguments of ``__init__`` with typed defaults (help in an ``Args:``
docstring section; see :mod:`bots.options`); the registry turns ``key=value`` strings from
the command line into those types. ``seed`` is not an option an author declares:
:meth:`Bot.create` seeds ``self.rng`` whether or not ``__init__`` takes it, and every bot
has ``self.rng`` even if its ``__init__`` never calls ``super().__init__()``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Self, cast

from bots.options import takes_seed
from game import Move, Outcome, Ruleset, View
from game.errors import YardError


class BotRoleError(YardError):
    """A bot was seated on a side it cannot play."""


def require_role(bot: Bot, role: str) -> None:
    """Raise :class:`BotRoleError` unless ``bot`` can play ``role`` (mrx / detectives)."""
    if role not in bot.roles:
        can = " or ".join(sorted(bot.roles)) or "nothing"
        raise BotRoleError(f"bot {bot.name!r} cannot play {role}; it plays {can}")


class _NoView:
    """What :data:`NO_VIEW` is: no fields; reading one says why there is none."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"no view to read {name!r} from: this bot's class declares "
                             "reads_view = False (bots.base.Bot.reads_view)")

    def __repr__(self) -> str:
        return "NO_VIEW"


#: The ``view`` the arena passes to a bot that declares ``reads_view = False``.
NO_VIEW: View = cast(View, _NoView())


def reads_view(bot: Bot) -> bool:
    """Whether ``bot`` reads the views it is given: ``False`` only if its own class (not a
    base class: a subclass may read what its base ignores) sets ``reads_view = False``."""
    return vars(type(bot)).get("reads_view", True) is not False


class Bot(ABC):
    """Base class of every bot. Subclasses implement :meth:`choose`.

    ``roles`` says which sides the bot can play: ``"mrx"``, ``"detectives"`` or both.
    ``rulesets`` names the rulesets it claims to play (``None``: any; ``yard bot-check``
    tests exactly these). ``fast`` marks a bot cheap enough to run on the client's event
    loop (see the attribute). ``self.rng`` is seeded from ``seed`` so the same seed gives
    the same game.
    """

    name: ClassVar[str] = "bot"
    roles: ClassVar[frozenset[str]] = frozenset({"mrx", "detectives"})
    rulesets: ClassVar[frozenset[str] | None] = None
    #: ``True`` for a bot whose :meth:`choose` always returns within a millisecond or so
    #: (no search, no clock): the network client then calls it on its event loop instead
    #: of a worker thread. Leave it ``False`` for anything that searches or reads a clock.
    #: Not inherited: only the class that sets it is fast (a subclass of a fast bot that
    #: adds a search runs in the thread unless it sets ``fast = True`` itself).
    fast: ClassVar[bool] = False
    #: ``False`` for a bot whose :meth:`choose` never reads its ``view`` (it picks from the
    #: legal moves alone): the in-process arena then builds no view for it and passes
    #: :data:`NO_VIEW`, which raises ``AttributeError`` on any read. Not inherited, as
    #: :attr:`fast` (see :func:`reads_view`).
    reads_view: ClassVar[bool] = True
    #: The seed this bot was created with (``None``: unseeded).
    seed: int | None
    #: The bot's random generator: seeded from :attr:`seed`, then reseeded for each game
    #: by :meth:`begin`.
    rng: random.Random

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Every bot has :attr:`seed` and :attr:`rng` before its ``__init__`` runs, so an
        ``__init__`` that only takes options need not call ``super().__init__()``."""
        bot = super().__new__(cls)
        bot.seed = None
        bot.rng = random.Random()
        return bot

    def __init__(self, seed: int | None = None) -> None:
        """Seed ``self.rng`` with ``seed`` (``None``: from the system)."""
        self.seed = seed
        self.rng = random.Random(seed)

    @classmethod
    def create(cls, seed: int | None = None, **options: Any) -> Self:
        """A bot with ``options`` (keyword arguments of ``__init__``) and ``self.rng``
        seeded from ``seed``, whether or not its ``__init__`` takes ``seed`` (the registry
        creates every bot this way): authors declare options only."""
        if takes_seed(cls):
            return cls(seed=seed, **options)
        bot = cls(**options)
        bot.seed = seed
        bot.rng = random.Random(seed)
        return bot

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
        """Pick one of ``legal`` for the seat ``view.to_move``.

        Over the network (:mod:`bots.client`) raising forfeits the game at once
        (``bot_error``, the exception's first line as the reason), and so does returning
        anything but a legal move or its text (``illegal_move``); see :mod:`bots.sdk`.
        """

    def report(self, *, playouts: int | None = None, nodes: int | None = None,
               depth: int | None = None) -> None:
        """Report the search effort of the move being chosen (call it from :meth:`choose`).

        The network client sends it with the move (the ``effort`` field of ``move``), the
        server stores it, and tournament summaries show its mean per bot next to the
        server-measured time, so unequal compute is visible. All optional, integers >= 0.
        """
        effort = {"playouts": playouts, "nodes": nodes, "depth": depth}
        self._effort = {k: int(v) for k, v in effort.items() if v is not None}

    def take_effort(self) -> dict[str, int] | None:
        """The effort reported since the last call (``None`` if none), then forget it."""
        effort: dict[str, int] | None = self.__dict__.pop("_effort", None)
        return effort or None

    @property
    def timed(self) -> bool:
        """True when the bot's strength depends on the time it gets (it searches until a
        clock runs out): tournaments then give each game its own core."""
        return False

    @property
    def cores(self) -> int:
        """How many cores one move of this bot keeps busy."""
        return 1

    def game_over(self, outcome: Outcome) -> None:  # noqa: B027 (optional hook)
        """Called once when a game this bot played has ended."""

    def describe(self) -> str:
        """Name plus options, for logs and tournament tables."""
        return self.name
