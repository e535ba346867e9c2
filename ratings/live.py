"""Live ratings: a Bayesian online rating per player, updated after every game.

The standing ladder (``yard serve --ladder``) needs a rating that moves after each game and
says how sure it is, so that matchmaking can pair bots whose outcome is uncertain and a new
bot's first games count. Maximum likelihood Elo (:mod:`ratings.elo`) refits all games at
once and stays the authoritative offline view (``yard leaderboard``); this is the live one.

The model is Weng and Lin's Bayesian approximation with the Plackett-Luce likelihood, from
the maintained ``openskill`` package: a rating is a mean ``mu`` and an uncertainty
``sigma`` (25 and 25/3 for a new player), one update per game in microseconds, and
:meth:`LiveRatings.quality` is the chance of a draw between two ratings, the usual
match-quality measure. Chosen over Glicko-2 because it rates one game at a time with no
rating periods to tune, and its quality measure is built in.

A Scotland Yard game is asymmetric; the ladder plays role-swapped pairs, so each player
takes both roles equally often and one rating per player per ruleset is enough.

>>> live = LiveRatings()
>>> live.record("strong", "weak", winner_is_first=True)
>>> live.rating("strong").mu > 25 > live.rating("weak").mu
True
>>> round(live.quality("strong", "weak"), 2) < round(live.quality("new", "other"), 2)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: The model's parameters (the package's defaults): a new player's mean and uncertainty,
#: and ``beta``, the spread of one game's performance.
MU = 25.0
SIGMA = MU / 3
BETA = MU / 6


@dataclass(frozen=True)
class LiveRating:
    """One player's live rating: mean ``mu``, uncertainty ``sigma`` (one standard
    deviation), and the games it rests on."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def ordinal(self) -> float:
        """``mu - 3 sigma``: a rating the player is very likely above (ranks new players,
        whose ratings are unsure, below proven ones of the same mean)."""
        return self.mu - 3 * self.sigma

    def to_json(self) -> dict[str, Any]:
        """``{"mu", "sigma", "ordinal", "games"}`` (the ladder's API and pages)."""
        return {"mu": round(self.mu, 3), "sigma": round(self.sigma, 3),
                "ordinal": round(self.ordinal, 3), "games": self.games}


class LiveRatings:
    """The live ratings of one pool (one ruleset of a ladder), by player name; ``tau`` is
    the drift added to ``sigma`` before each game (``None``: the package's ``mu / 300``),
    which keeps a rating moving however many games it rests on."""

    def __init__(self, tau: float | None = None) -> None:
        """An empty pool, on openskill's Plackett-Luce model (``tau`` as the class says)."""
        from openskill.models import PlackettLuce  # a third of a second: only for a ladder

        self._model = (PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA) if tau is None
                       else PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=tau))
        self._ratings: dict[str, LiveRating] = {}

    def rating(self, name: str) -> LiveRating:
        """``name``'s rating (a new player's when it has played no game)."""
        return self._ratings.get(name, LiveRating())

    def players(self) -> list[str]:
        """Every rated player, in no particular order."""
        return list(self._ratings)

    def record(self, first: str, second: str, winner_is_first: bool | None) -> None:
        """Update both ratings after one game between ``first`` and ``second``
        (``winner_is_first``: ``None`` for a game without a winner, e.g. aborted: it
        changes nothing)."""
        if winner_is_first is None or first == second:
            return
        a, b = self.rating(first), self.rating(second)
        ra = self._model.rating(mu=a.mu, sigma=a.sigma)
        rb = self._model.rating(mu=b.mu, sigma=b.sigma)
        ranks = [1.0, 2.0] if winner_is_first else [2.0, 1.0]
        [[na], [nb]] = self._model.rate([[ra], [rb]], ranks=ranks)
        self._ratings[first] = LiveRating(na.mu, na.sigma, a.games + 1)
        self._ratings[second] = LiveRating(nb.mu, nb.sigma, b.games + 1)

    def win_probability(self, first: str, second: str) -> float:
        """The chance that ``first`` beats ``second``, from their ratings."""
        a, b = self.rating(first), self.rating(second)
        c = math.sqrt(2 * BETA ** 2 + a.sigma ** 2 + b.sigma ** 2)
        return 0.5 * (1 + math.erf((a.mu - b.mu) / (c * math.sqrt(2))))

    def quality(self, first: str, second: str) -> float:
        """How uncertain a game between the two is, in (0, 1]: 1 for equal ratings that
        are sure, smaller the more one is expected to win (TrueSkill's match quality)."""
        a, b = self.rating(first), self.rating(second)
        c2 = 2 * BETA ** 2 + a.sigma ** 2 + b.sigma ** 2
        return math.sqrt(2 * BETA ** 2 / c2) * math.exp(-((a.mu - b.mu) ** 2) / (2 * c2))

    def ranked(self) -> list[tuple[str, LiveRating]]:
        """Every rated player, best first (by :attr:`LiveRating.ordinal`, then mean, then
        name)."""
        return sorted(self._ratings.items(),
                      key=lambda item: (-item[1].ordinal, -item[1].mu, item[0]))


__all__ = ["BETA", "MU", "SIGMA", "LiveRating", "LiveRatings"]
