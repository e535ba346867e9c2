"""``yard-bot check``: a bot plays a few whole games in-process against the random bot.

On each ruleset it claims and in each role it plays, with no server: legal moves to the
end, no exception, and how long its moves take. (``yard bot-check``, in the full install, is
the protocol battery over a real server: dropped connections, deadlines, unknown fields.)

>>> from bots.simple import RandomBot
>>> [line.passed for line in check_locally(RandomBot, ["grid5"], games=2)]
[True, True]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bots.arena import play_game
from bots.base import Bot
from bots.simple import RandomBot
from game import Termination, Winner, load_ruleset

DEFAULT_RULES = ("grid5", "classic")
"""Rulesets checked for a bot that claims none (``Bot.rulesets`` ``None``: any)."""


@dataclass(frozen=True)
class CheckLine:
    """The games of one ruleset and role: how many were played and won, the slowest move,
    and what went wrong (``None``: nothing)."""

    rules: str
    role: str
    games: int
    wins: int
    slowest_s: float
    failure: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every game ended without a fault of the bot's."""
        return self.failure is None

    def line(self) -> str:
        """One ``PASS``/``FAIL`` line."""
        head = f"{'PASS' if self.passed else 'FAIL'} {self.rules} as {self.role}: "
        if self.failure is not None:
            return head + self.failure
        return (head + f"{self.games} games, {self.wins} won against random, slowest "
                f"move {1000 * self.slowest_s:.1f} ms")

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` row."""
        return {"rules": self.rules, "role": self.role, "games": self.games,
                "wins": self.wins, "slowest_s": round(self.slowest_s, 6),
                "passed": self.passed, "failure": self.failure}


def check_locally(factory: Callable[[], Bot], rules: Sequence[str] = (), games: int = 3,
                  seed: int = 1) -> list[CheckLine]:
    """Play ``games`` games (seeds ``seed, seed+1, ...``) on each of ``rules`` (default:
    the rulesets the bot claims, else :data:`DEFAULT_RULES`) in each role the bot plays,
    against :class:`~bots.simple.RandomBot`; one :class:`CheckLine` per ruleset and role."""
    probe = factory()
    names = list(rules) or sorted(probe.rulesets or DEFAULT_RULES)
    lines = []
    for name in names:
        ruleset = load_ruleset(name)
        for role in ("mrx", "detectives"):
            if role in probe.roles:
                lines.append(_check(factory, ruleset.name, role, games, seed))
    return lines


def _check(factory: Callable[[], Bot], rules: str, role: str, games: int,
           seed: int) -> CheckLine:
    wins = 0
    slowest = [0.0]
    for game_seed in range(seed, seed + games):
        bot = factory()
        bot.choose = _timed(bot.choose, slowest)  # type: ignore[method-assign]
        other = RandomBot(seed=game_seed)
        try:
            if role == "mrx":
                result = play_game(rules, bot, [other], seed=game_seed)
            else:
                result = play_game(rules, other, [bot], seed=game_seed)
        except Exception as exc:
            return CheckLine(rules, role, games, wins, slowest[0],
                             f"game seed {game_seed}: {type(exc).__name__}: {exc}")
        outcome = result.outcome
        if outcome.termination is Termination.ILLEGAL_MOVE:
            return CheckLine(rules, role, games, wins, slowest[0],
                             f"game seed {game_seed}: an illegal move (choose must return "
                             "one of legal)")
        wins += outcome.winner is (Winner.MRX if role == "mrx" else Winner.DETECTIVES)
    return CheckLine(rules, role, games, wins, slowest[0])


def _timed(choose: Callable[..., Any], slowest: list[float]) -> Callable[..., Any]:
    def timed(*args: Any) -> Any:
        began = time.perf_counter()
        try:
            return choose(*args)
        finally:
            slowest[0] = max(slowest[0], time.perf_counter() - began)

    return timed


__all__ = ["DEFAULT_RULES", "CheckLine", "check_locally"]
