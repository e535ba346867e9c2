"""The input of every rating function: one decided game reduced to who played which side,
who won, which role-swapped pair it belongs to and on which ruleset.

Database rows (``db.store.ResultRow``) are converted with :func:`from_results`; aborted
games (no winner) carry no rating information and are excluded and counted.

>>> games = [GameOutcome("rush", "random", True, "p0", "grid5")]
>>> split_by_ruleset(games)["grid5"] == games
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from game.errors import YardError


class RatingsError(YardError):
    """Games cannot be rated as asked (mixed rulesets, no games, unknown anchor...)."""


@dataclass(frozen=True)
class GameOutcome:
    """One decided game. ``mrx`` and ``detectives`` are player names (a bot, or a team such
    as ``"dqn+alphabeta"``); ``pair`` groups the two role-swapped games of a pair
    (``None``: the game is its own resampling unit)."""

    mrx: str
    detectives: str
    mrx_won: bool
    pair: str | None
    ruleset: str

    @property
    def players(self) -> tuple[str, str]:
        """``(mrx, detectives)``."""
        return self.mrx, self.detectives


class ResultRowLike(Protocol):
    """The fields of a database result row that ratings read."""

    @property
    def ruleset(self) -> str:
        """The ruleset's name."""

    @property
    def mrx_player(self) -> str:
        """The player of Mister X."""

    @property
    def detective_player(self) -> str:
        """The player of the detectives."""

    @property
    def winner(self) -> object:
        """The winning side."""

    @property
    def pair_key(self) -> str | None:
        """The key of the role-swapped pair the game belongs to, if any."""


@dataclass(frozen=True)
class Conversion:
    """Result of :func:`from_results`: the decided games and how many were left out."""

    games: list[GameOutcome]
    excluded_by_ruleset: dict[str, int]

    @property
    def excluded(self) -> int:
        """Games left out (no winner) over all rulesets."""
        return sum(self.excluded_by_ruleset.values())


def _winner_text(winner: object) -> str | None:
    """``'mrx'``, ``'detectives'`` or ``None`` from a string or an enum (``game.Winner``)."""
    if winner is None:
        return None
    value = winner.value if isinstance(winner, Enum) else winner
    if value not in ("mrx", "detectives"):
        raise RatingsError(f"unknown winner {winner!r} in a result row")
    return str(value)


def from_results(rows: Iterable[ResultRowLike]) -> Conversion:
    """Decided games from database result rows; games without a winner (aborted) are
    counted per ruleset in ``excluded_by_ruleset``."""
    games: list[GameOutcome] = []
    excluded: dict[str, int] = {}
    for row in rows:
        winner = _winner_text(row.winner)
        if winner is None:
            excluded[row.ruleset] = excluded.get(row.ruleset, 0) + 1
            continue
        games.append(GameOutcome(row.mrx_player, row.detective_player, winner == "mrx",
                                 row.pair_key, row.ruleset))
    return Conversion(games, excluded)


def split_by_ruleset(games: Iterable[GameOutcome]) -> dict[str, list[GameOutcome]]:
    """Games grouped by ruleset, rulesets in sorted order."""
    groups: dict[str, list[GameOutcome]] = {}
    for game in games:
        groups.setdefault(game.ruleset, []).append(game)
    return {name: groups[name] for name in sorted(groups)}


def single_ruleset(games: list[GameOutcome]) -> str:
    """The one ruleset of ``games``; ratings never mix rulesets."""
    names = sorted({g.ruleset for g in games})
    if not names:
        raise RatingsError("no decided games to rate")
    if len(names) > 1:
        raise RatingsError(f"games of several rulesets ({', '.join(names)}); "
                           "rate each ruleset separately")
    return names[0]


def players_of(games: Iterable[GameOutcome]) -> list[str]:
    """Every player name that appears in ``games``, sorted."""
    return sorted({name for g in games for name in g.players})
