"""Elo ratings by maximum likelihood over all games at once (Bradley–Terry with a Mister X
advantage term). The order of games does not matter.

Overall model, for Mister X player ``i`` against detective player ``j``::

    P(Mister X wins) = σ((R_i − R_j + A) · ln10 / 400)

``A`` is the Mister X advantage of the ruleset in Elo points. Per-role model, with ``A``
fixed at the overall estimate::

    P(Mister X wins) = σ((M_i − D_j + A) · ln10 / 400)

``M`` is a player's rating as Mister X and ``D`` as detectives, on the same scale as ``R``.

Both are fitted by Newton's method on the penalised log-likelihood. A tiny Gaussian prior
(standard deviation ``prior_sd`` Elo around 0, on every parameter) keeps undefeated players
and one-sided rulesets finite. Anchor: ``random`` has rating 0 when it played (its
per-role ratings average 0); otherwise the mean rating of all players is 0 (and the mean
of all per-role ratings is 0).

>>> games = [GameOutcome("a", "b", True, None, "grid5"), GameOutcome("b", "a", False, None,
...          "grid5")] * 3
>>> fit = fit_elo(games)
>>> fit.anchor, fit.ratings["a"] > fit.ratings["b"]
('mean', True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ratings.outcomes import GameOutcome, RatingsError, players_of

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Elo points per natural-log unit of odds (400 / ln 10).
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Standard deviation of the ridge prior, in Elo points.
DEFAULT_PRIOR_SD = 1000.0
#: The player rated 0 when present.
DEFAULT_ANCHOR = "random"
MEAN_ANCHOR = "mean"

_MAX_ITERATIONS = 200
_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Cells:
    """Games aggregated by (Mister X player, detective player): ``n`` games, ``wins`` of
    them won by Mister X. Indices refer to a player list."""

    mrx: IntArray
    det: IntArray
    n: FloatArray
    wins: FloatArray


@dataclass(frozen=True)
class EloFit:
    """Anchored ratings of one ruleset, in Elo points. A per-role rating is ``None`` for a
    player who never played that role."""

    players: tuple[str, ...]
    ratings: dict[str, float]
    mrx_ratings: dict[str, float | None]
    det_ratings: dict[str, float | None]
    mrx_advantage: float
    anchor: str


@dataclass(frozen=True)
class RawFit:
    """Anchored parameter vectors (Elo) of one fit, indexed like the player list; ``NaN``
    where a player has no games (in that role)."""

    overall: FloatArray
    mrx: FloatArray
    det: FloatArray
    advantage: float


def ridge_for(prior_sd: float) -> float:
    """Ridge coefficient in natural units for a prior standard deviation in Elo."""
    if prior_sd <= 0 or math.isinf(prior_sd):
        return 0.0
    return float((ELO_PER_NAT / prior_sd) ** 2)


def tabulate(games: Sequence[GameOutcome], players: Sequence[str]) -> Cells:
    """Aggregate ``games`` into cells over ``players``."""
    index = {name: i for i, name in enumerate(players)}
    counts: dict[tuple[int, int], list[int]] = {}
    for game in games:
        cell = counts.setdefault((index[game.mrx], index[game.detectives]), [0, 0])
        cell[0] += 1
        cell[1] += game.mrx_won
    keys = sorted(counts)
    return Cells(np.array([k[0] for k in keys], dtype=np.int64),
                 np.array([k[1] for k in keys], dtype=np.int64),
                 np.array([counts[k][0] for k in keys], dtype=np.float64),
                 np.array([counts[k][1] for k in keys], dtype=np.float64))


def _neg_log_likelihood(x: FloatArray, n: FloatArray, wins: FloatArray, beta: FloatArray,
                        ridge: float) -> float:
    # log(1 + e^x) computed stably.
    return float(np.sum(n * np.logaddexp(0.0, x) - wins * x) + 0.5 * ridge * beta @ beta)


def fit_logistic(design: FloatArray, n: FloatArray, wins: FloatArray, offset: FloatArray,
                 ridge: float) -> FloatArray:
    """Maximise the binomial log-likelihood of ``wins`` out of ``n`` with log-odds
    ``design @ beta + offset`` minus ``ridge/2·|beta|²``, by Newton steps with step halving.
    A singular Hessian (``ridge`` 0, gauge freedom) takes the minimum-norm step."""
    beta = np.zeros(design.shape[1])
    loss = _neg_log_likelihood(design @ beta + offset, n, wins, beta, ridge)
    for _ in range(_MAX_ITERATIONS):
        x = design @ beta + offset
        p = 1.0 / (1.0 + np.exp(-x))
        gradient = design.T @ (n * p - wins) + ridge * beta
        hessian = (design.T * (n * p * (1.0 - p))) @ design + ridge * np.eye(beta.size)
        step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        scale = 1.0
        while scale > 1e-6:
            candidate = beta - scale * step
            new_loss = _neg_log_likelihood(design @ candidate + offset, n, wins, candidate,
                                           ridge)
            if new_loss <= loss + 1e-12:
                break
            scale /= 2
        beta, loss = candidate, new_loss
        if float(np.max(np.abs(scale * step), initial=0.0)) < _TOLERANCE:
            break
    return beta


def _overall_design(cells: Cells, n_players: int) -> FloatArray:
    rows = np.arange(cells.n.size)
    design = np.zeros((cells.n.size, n_players + 1))
    design[rows, cells.mrx] += 1.0
    design[rows, cells.det] -= 1.0
    design[:, n_players] = 1.0
    return design


def _role_design(cells: Cells, n_players: int) -> FloatArray:
    rows = np.arange(cells.n.size)
    design = np.zeros((cells.n.size, 2 * n_players))
    design[rows, cells.mrx] = 1.0
    design[rows, n_players + cells.det] = -1.0
    return design


def fit_cells(cells: Cells, n_players: int, anchor: int | None, ridge: float) -> RawFit:
    """Fit both models on aggregated games and anchor them. ``anchor`` is a player index,
    or ``None`` to centre on the mean of the players who played."""
    played_mrx = np.bincount(cells.mrx, weights=cells.n, minlength=n_players) > 0
    played_det = np.bincount(cells.det, weights=cells.n, minlength=n_players) > 0
    played = played_mrx | played_det
    beta = fit_logistic(_overall_design(cells, n_players), cells.n, cells.wins,
                        np.zeros(cells.n.size), ridge) * ELO_PER_NAT
    advantage = float(beta[n_players])
    roles = fit_logistic(_role_design(cells, n_players), cells.n, cells.wins,
                         np.full(cells.n.size, advantage / ELO_PER_NAT), ridge) * ELO_PER_NAT
    overall = np.where(played, beta[:n_players], np.nan)
    mrx = np.where(played_mrx, roles[:n_players], np.nan)
    det = np.where(played_det, roles[n_players:], np.nan)
    if anchor is None:
        shift = float(np.mean(overall[played]))
        role_shift = float(np.mean(np.concatenate([mrx[played_mrx], det[played_det]])))
    else:
        shift = float(overall[anchor])
        role_shift = float((roles[anchor] + roles[n_players + anchor]) / 2)
    return RawFit(overall - shift, mrx - role_shift, det - role_shift, advantage)


def resolve_anchor(players: Sequence[str], anchor: str | None = None) -> int | None:
    """Index of the anchor player: ``anchor`` if given (``"mean"`` for none), else
    ``random`` when present, else ``None`` (mean anchor)."""
    if anchor == MEAN_ANCHOR:
        return None
    if anchor is None:
        return players.index(DEFAULT_ANCHOR) if DEFAULT_ANCHOR in players else None
    if anchor not in players:
        raise RatingsError(f"anchor {anchor!r} played no game; players: {', '.join(players)}")
    return list(players).index(anchor)


def anchor_name(players: Sequence[str], index: int | None) -> str:
    """The anchor's display name (``"mean"`` when the mean is 0)."""
    return MEAN_ANCHOR if index is None else players[index]


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def fit_elo(games: Sequence[GameOutcome], anchor: str | None = None,
            prior_sd: float = DEFAULT_PRIOR_SD) -> EloFit:
    """Ratings of every player in ``games`` (one ruleset). ``anchor``: a player rated 0,
    ``"mean"``, or ``None`` for the default (``random`` if it played, else the mean)."""
    if not games:
        raise RatingsError("no decided games to rate")
    players = players_of(games)
    anchor_index = resolve_anchor(players, anchor)
    raw = fit_cells(tabulate(games, players), len(players), anchor_index, ridge_for(prior_sd))
    return EloFit(tuple(players),
                  {p: float(raw.overall[i]) for i, p in enumerate(players)},
                  {p: _optional(raw.mrx[i]) for i, p in enumerate(players)},
                  {p: _optional(raw.det[i]) for i, p in enumerate(players)},
                  raw.advantage, anchor_name(players, anchor_index))


def expected_mrx_score(mrx_rating: float, det_rating: float, advantage: float) -> float:
    """The model's probability that Mister X wins."""
    return float(1.0 / (1.0 + 10.0 ** (-(mrx_rating - det_rating + advantage) / 400.0)))
