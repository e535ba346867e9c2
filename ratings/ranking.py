"""The standing ladder's displayed rank: the maximum-likelihood Elo of every game so far,
refitted at a bounded rate.

The live OpenSkill ratings (:mod:`ratings.live`) move after every game and weigh recent
games more (their drift ``tau`` keeps ``sigma`` from shrinking to 0), so bots a few dozen
Elo apart keep swapping places however many games they play. The ladder therefore shows
the rank of the fit the offline leaderboard makes (:func:`ratings.elo.fit_elo`'s overall
model: Bradley–Terry with a Mister X advantage, the same ridge prior and anchor), over
every game of the pool, and keeps OpenSkill for matchmaking (its match quality and
uncertainty are what pairing needs). bench/ladder.py ``--mode settle`` measured the
choice (bench/RESULTS.md).

Cost: games are counted into cells (Mister X player, detective player) as they come, so a
refit costs the same after 100 or 100,000 games: Newton's method on ``n + 1`` parameters
(``n`` players) from the previous fit, ``O(cells + n^3)``. :meth:`Ranking.refresh` refits
only when games came in and ``refresh_s`` has passed since the last fit, so polls between
fits cost a sort. The interval is ``±1.96`` standard errors from the inverse Hessian (the
normal approximation; the Leaderboard page's bootstrap is the careful one).

>>> rank = Ranking()
>>> for _ in range(20):
...     rank.record("strong", "weak", True)
...     rank.record("weak", "strong", False)
>>> rank.refresh(None)
True
>>> [row.name for row in rank.rows()]
['strong', 'weak']
>>> rank.refresh(None)  # nothing new: the fit stands
False
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from ratings.elo import (
    DEFAULT_PRIOR_SD,
    ELO_PER_NAT,
    FloatArray,
    IntArray,
    resolve_anchor,
    ridge_for,
)

#: Seconds between refits while games keep coming in (the server's clock).
DEFAULT_REFRESH_S = 2.0

#: Up to this many players the intervals use the exact inverse Hessian (``O(n^3)``, 15
#: ms at 150); beyond, its diagonal.
EXACT_INTERVALS = 150

_MAX_ITERATIONS = 100
_TOLERANCE = 1e-9
_CG_ITERATIONS = 1000
_CG_TOLERANCE = 1e-12
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class RankRow:
    """One player's place: ``rank`` (1 = best), Elo and its 95% interval (``None`` for the
    anchor, rated 0 by definition), games played."""

    rank: int
    name: str
    elo: float
    ci: tuple[float, float] | None
    games: int


class Ranking:
    """The full-history Elo order of one pool, fed one game at a time."""

    def __init__(self, refresh_s: float = DEFAULT_REFRESH_S,
                 prior_sd: float = DEFAULT_PRIOR_SD) -> None:
        """An empty pool, refitted at most every ``refresh_s`` s (Elo prior sd ``prior_sd``)."""
        if refresh_s < 0:
            raise ValueError("refresh_s must be >= 0")
        self.refresh_s = refresh_s
        self._ridge = ridge_for(prior_sd)
        self._index: dict[str, int] = {}
        self._games: list[int] = []
        #: (Mister X index, detective index) -> its place in the four cell columns.
        self._cell_of: dict[tuple[int, int], int] = {}
        self._mrx, self._det = array("q"), array("q")
        self._n, self._wins = array("d"), array("d")
        self._theta: FloatArray = np.zeros(1)  # ratings then the advantage, in nats
        self._rows: list[RankRow] = []
        self._dirty = False
        self._fitted_at: float | None = None
        self.fits = 0
        """Refits done (a cost measure for tests and benchmarks)."""

    @property
    def stale(self) -> bool:
        """Games came in since the last fit."""
        return self._dirty

    def record(self, mrx: str, detectives: str, mrx_won: bool | None) -> None:
        """Count one finished game (``mrx_won`` ``None``: no winner, nothing to count)."""
        if mrx_won is None or mrx == detectives:
            return
        i, j = self._player(mrx), self._player(detectives)
        cell = self._cell_of.get((i, j))
        if cell is None:
            cell = self._cell_of[(i, j)] = len(self._n)
            self._mrx.append(i)
            self._det.append(j)
            self._n.append(0.0)
            self._wins.append(0.0)
        self._n[cell] += 1.0
        self._wins[cell] += bool(mrx_won)
        self._games[i] += 1
        self._games[j] += 1
        self._dirty = True

    def _player(self, name: str) -> int:
        index = self._index.get(name)
        if index is None:
            index = self._index[name] = len(self._index)
            self._games.append(0)
        return index

    def refresh(self, now: float | None) -> bool:
        """Refit if games came in and ``refresh_s`` has passed since the last fit at
        ``now`` (``None``: whenever games came in); returns whether it refitted."""
        if not self._dirty:
            return False
        if (now is not None and self._fitted_at is not None
                and now - self._fitted_at < self.refresh_s):
            return False
        self._fit()
        self._dirty = False
        self._fitted_at = now
        self.fits += 1
        return True

    def rows(self) -> list[RankRow]:
        """Every player of the last fit, best first (ties by name)."""
        return list(self._rows)

    def _fit(self) -> None:
        names = list(self._index)
        n = len(names)
        mrx = np.frombuffer(self._mrx, dtype=np.int64).copy()
        det = np.frombuffer(self._det, dtype=np.int64).copy()
        theta = np.zeros(n + 1)
        old = self._theta.size - 1  # warm start: players of the last fit, and the advantage
        theta[:old], theta[n] = self._theta[:old], self._theta[old]
        cells = _Cells(mrx, det, np.frombuffer(self._n).copy(),
                       np.frombuffer(self._wins).copy(), n + 1, self._ridge)
        theta, weight = _newton(theta, cells)
        self._theta = theta
        anchor = resolve_anchor(names)
        contrast = np.zeros((n, n + 1))
        contrast[:, :n] = np.eye(n) - (1.0 / n if anchor is None else 0.0)
        if anchor is not None:
            contrast[:, anchor] -= 1.0
        elo = contrast @ theta * ELO_PER_NAT
        if n <= EXACT_INTERVALS:
            covariance = np.linalg.inv(cells.dense_hessian(weight))
            variance = np.einsum("ij,jk,ik->i", contrast, covariance, contrast)
        else:  # each player's information from its own games, opponents taken as known
            variance = 1.0 / cells.diagonal(weight)[:n]
        se = np.sqrt(np.maximum(variance, 0.0)) * ELO_PER_NAT
        order = sorted(range(n), key=lambda k: (-elo[k], names[k]))
        self._rows = [RankRow(rank, names[k], float(elo[k]),
                              None if k == anchor else (float(elo[k] - _Z95 * se[k]),
                                                        float(elo[k] + _Z95 * se[k])),
                              self._games[k])
                      for rank, k in enumerate(order, 1)]


class _Cells:
    """The fit's data: per cell its Mister X and detective indices, games and Mister X
    wins, over ``size - 1`` players and the advantage (the last parameter)."""

    def __init__(self, mrx: IntArray, det: IntArray, n: FloatArray, wins: FloatArray,
                 size: int, ridge: float) -> None:
        self.mrx, self.det, self.n, self.wins = mrx, det, n, wins
        self.size = size
        self.adv = size - 1
        self.ridge = max(ridge, 1e-12)  # the gauge freedom needs some prior to be solvable

    def logits(self, theta: FloatArray) -> FloatArray:
        out: FloatArray = theta[self.mrx] - theta[self.det] + theta[self.adv]
        return out

    def loss(self, theta: FloatArray) -> float:
        x = self.logits(theta)
        return float(np.sum(self.n * np.logaddexp(0.0, x) - self.wins * x)
                     + 0.5 * self.ridge * theta @ theta)

    def spread(self, per_cell: FloatArray) -> FloatArray:
        """``sum_c per_cell[c] * d_c`` (``d_c``: the cell's design row)."""
        out: FloatArray = (np.bincount(self.mrx, per_cell, self.size).astype(np.float64)
                           - np.bincount(self.det, per_cell, self.size))
        out[self.adv] += per_cell.sum()
        return out

    def diagonal(self, weight: FloatArray) -> FloatArray:
        """The Hessian's diagonal for cell weights ``n p (1 - p)``."""
        out: FloatArray = (np.bincount(self.mrx, weight, self.size).astype(np.float64)
                           + np.bincount(self.det, weight, self.size) + self.ridge)
        out[self.adv] += weight.sum()
        return out

    def dense_hessian(self, weight: FloatArray) -> FloatArray:
        rows = np.stack([self.mrx, self.det, np.full_like(self.mrx, self.adv)])
        signs = np.array([1.0, -1.0, 1.0])
        flat = (rows[:, None, :] * self.size + rows[None, :, :]).ravel()
        values = ((signs[:, None] * signs[None, :])[:, :, None] * weight).ravel()
        h = np.bincount(flat, weights=values, minlength=self.size * self.size)
        return h.reshape(self.size, self.size) + self.ridge * np.eye(self.size)

    def solve(self, weight: FloatArray, rhs: FloatArray) -> FloatArray:
        """``H^-1 rhs`` by conjugate gradients preconditioned by the diagonal: each step
        costs ``O(cells)``, so a fit of a thousand bots is not ``O(n^3)``."""
        diagonal = self.diagonal(weight)

        def product(v: FloatArray) -> FloatArray:
            return self.spread(weight * self.logits(v)) + self.ridge * v

        x = np.zeros(self.size)
        r = rhs.copy()
        z = r / diagonal
        d = z.copy()
        rz = float(r @ z)
        limit = _CG_TOLERANCE * float(np.linalg.norm(rhs))
        for _ in range(_CG_ITERATIONS):
            if float(np.linalg.norm(r)) <= limit:
                break
            hd = product(d)
            alpha = rz / float(d @ hd)
            x += alpha * d
            r -= alpha * hd
            z = r / diagonal
            rz, previous = float(r @ z), rz
            d = z + (rz / previous) * d
        return x


def _newton(theta: FloatArray, cells: _Cells) -> tuple[FloatArray, FloatArray]:
    """Maximise the penalised binomial likelihood of ``P(Mister X wins) = σ(r_mrx - r_det
    + A)`` from ``theta`` (Newton steps with step halving, as
    :func:`ratings.elo.fit_logistic`); returns the optimum and the cell weights
    ``n p (1 - p)`` there."""
    current = cells.loss(theta)
    for _ in range(_MAX_ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-cells.logits(theta)))
        gradient = cells.spread(cells.n * p - cells.wins) + cells.ridge * theta
        step = cells.solve(cells.n * p * (1.0 - p), gradient)
        scale = 1.0
        while True:
            candidate = theta - scale * step
            new = cells.loss(candidate)
            if new <= current + 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, current = candidate, new
        if float(np.max(np.abs(scale * step), initial=0.0)) < _TOLERANCE:
            break
    p = 1.0 / (1.0 + np.exp(-cells.logits(theta)))
    return theta, cells.n * p * (1.0 - p)


__all__ = ["DEFAULT_REFRESH_S", "RankRow", "Ranking"]
