"""People waiting for a game against a busy ladder bot (sans-I/O: time passed in).

A person's ``play`` that names a bot with no free game slot is not refused: it waits here,
first come first served per bot, and :class:`server.ladder_games.LadderGames` serves the
queue before the ladder refills any freed slot with a bot-vs-bot game. Each waiting person
is told its place and an expected wait (:func:`expected_wait`, from how long the bot's
games last: :class:`Durations`).

>>> queue = PlayQueue()
>>> queue.add(Waiting("s1", "grid5", "mrx", "greedy", None, 0.0))
1
>>> queue.add(Waiting("s2", "grid5", "detectives", "greedy", None, 1.0))
2
>>> queue.drop("s1").session, queue.place("s2")
('s1', 1)
>>> expected_wait(3, [10.0, 40.0], 60.0)
70.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DEFAULT_GAME_S = 60.0
"""Expected length of a game (seconds) before any game of its kind has ended."""

SMOOTHING = 0.2
"""Weight of the latest game in the running mean of game lengths."""


@dataclass(frozen=True)
class Waiting:
    """A person's ``play`` waiting for a slot of bot ``opponent``: session ``session``
    asks for ``rules`` as ``side`` (the wire value); ``address``: where it connected from
    (``None``: not bounded per address); ``since``: when it asked."""

    session: str
    rules: str
    side: str
    opponent: str
    address: str | None
    since: float


class PlayQueue:
    """Waiting people, in the order they asked (one request per session)."""

    def __init__(self) -> None:
        """An empty queue."""
        self._waiting: list[Waiting] = []

    def __len__(self) -> int:
        """How many people wait."""
        return len(self._waiting)

    def add(self, request: Waiting) -> int:
        """Queue ``request`` (its session must not wait already); returns its place."""
        if self.get(request.session) is not None:
            raise ValueError(f"session {request.session} waits already")
        self._waiting.append(request)
        return self.place(request.session)

    def get(self, session: str) -> Waiting | None:
        """What ``session`` waits for, or ``None``."""
        return next((w for w in self._waiting if w.session == session), None)

    def drop(self, session: str) -> Waiting | None:
        """Take ``session``'s request out of the queue (served, or it left)."""
        request = self.get(session)
        if request is not None:
            self._waiting.remove(request)
        return request

    def waiting(self) -> list[Waiting]:
        """Every request, first come first."""
        return list(self._waiting)

    def for_bot(self, name: str) -> list[Waiting]:
        """The requests waiting for bot ``name``, first come first."""
        return [w for w in self._waiting if w.opponent == name]

    def place(self, session: str) -> int:
        """``session``'s place in its bot's queue (1: next), 0 if it does not wait."""
        request = self.get(session)
        if request is None:
            return 0
        return self.for_bot(request.opponent).index(request) + 1

    def holds_address(self, address: str) -> bool:
        """Someone from ``address`` waits already."""
        return any(w.address == address for w in self._waiting)


def expected_wait(place: int, remaining: Sequence[float], game_s: float) -> float:
    """Seconds until the person at ``place`` (1: next) in a bot's queue gets a slot, given
    the expected time ``remaining`` of each game the bot plays now (one per slot) and the
    expected length ``game_s`` of a game started later: the ``place``-th slot to free up,
    where each slot frees again ``game_s`` after it was handed on. Without a running game
    (the bot's slots are free), 0."""
    if not remaining or place < 1:
        return 0.0
    frees = sorted(max(0.0, r) for r in remaining)
    rounds, slot = divmod(place - 1, len(frees))
    return frees[slot] + rounds * game_s


class Durations:
    """Running means of how long games last, per key (a bot's name, or ``"play"`` for
    people's games): what :func:`expected_wait` needs."""

    def __init__(self, default_s: float = DEFAULT_GAME_S) -> None:
        """No games seen yet: every mean is ``default_s`` seconds until one is."""
        self.default_s = default_s
        self._mean: dict[str, float] = {}

    def note(self, keys: Iterable[str], seconds: float) -> None:
        """A game of each of ``keys`` lasted ``seconds``."""
        for key in keys:
            mean = self._mean.get(key)
            self._mean[key] = seconds if mean is None else \
                (1 - SMOOTHING) * mean + SMOOTHING * seconds

    def mean(self, key: str) -> float:
        """The expected length of a game of ``key`` (:attr:`default_s` before one ended)."""
        return self._mean.get(key, self.default_s)
