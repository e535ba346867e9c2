"""Bootstrap confidence intervals for Elo fits, resampling role-swapped pairs.

The resampling unit is a pair key (both games of a role-swapped pair move together, so a
favourable start position is never counted for one side only); a game without a pair key
is its own unit. Units are put in a canonical order first, so the result depends on the
seed and the set of games, never on their order.

Likelihood of superiority (LOS) is read from the same bootstrap replicates: the share of
replicates in which one player's rating exceeds the other's (ties count half).

>>> from ratings.outcomes import GameOutcome
>>> games = [GameOutcome("a", "b", True, "p", "grid5"), GameOutcome("b", "a", False, "p",
...          "grid5")]
>>> boot = bootstrap(games, ["a", "b"], None, samples=20, seed=1)
>>> boot.overall.shape
(20, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ratings.elo import (
    DEFAULT_PRIOR_SD,
    Cells,
    FloatArray,
    RawFit,
    fit_cells,
    ridge_for,
)
from ratings.outcomes import GameOutcome

#: Bootstrap replicates used when none are asked for.
DEFAULT_SAMPLES = 200


@dataclass(frozen=True)
class BootstrapSamples:
    """Anchored ratings of every replicate (rows) and player (columns), ``NaN`` where a
    player (or role) had no game in a replicate, or a replicate missed the anchor."""

    overall: FloatArray
    mrx: FloatArray
    det: FloatArray
    advantage: FloatArray


def _units(games: Sequence[GameOutcome]) -> list[list[GameOutcome]]:
    paired: dict[str, list[GameOutcome]] = {}
    single: list[list[GameOutcome]] = []
    for game in games:
        if game.pair is None:
            single.append([game])
        else:
            paired.setdefault(game.pair, []).append(game)
    canonical = [sorted(paired[key], key=_game_key) for key in sorted(paired)]
    return canonical + sorted(single, key=lambda unit: _game_key(unit[0]))


def _game_key(game: GameOutcome) -> tuple[str, str, bool]:
    return game.mrx, game.detectives, game.mrx_won


def _unit_matrix(units: list[list[GameOutcome]], players: Sequence[str]
                 ) -> tuple[Cells, FloatArray, FloatArray]:
    """All cells, plus per-unit game counts and Mister X wins for each cell."""
    index = {name: i for i, name in enumerate(players)}
    cell_of: dict[tuple[int, int], int] = {}
    for unit in units:
        for game in unit:
            cell_of.setdefault((index[game.mrx], index[game.detectives]), len(cell_of))
    counts = np.zeros((len(units), len(cell_of)))
    wins = np.zeros((len(units), len(cell_of)))
    for u, unit in enumerate(units):
        for game in unit:
            c = cell_of[(index[game.mrx], index[game.detectives])]
            counts[u, c] += 1
            wins[u, c] += game.mrx_won
    keys = list(cell_of)
    cells = Cells(np.array([k[0] for k in keys], dtype=np.int64),
                  np.array([k[1] for k in keys], dtype=np.int64),
                  counts.sum(axis=0), wins.sum(axis=0))
    return cells, counts, wins


def bootstrap(games: Sequence[GameOutcome], players: Sequence[str], anchor: int | None,
              samples: int = DEFAULT_SAMPLES, seed: int = 0,
              prior_sd: float = DEFAULT_PRIOR_SD) -> BootstrapSamples:
    """Refit the models on ``samples`` resamples of the pair units of ``games``."""
    units = _units(games)
    cells, counts, wins = _unit_matrix(units, players)
    rng = np.random.default_rng(seed)
    ridge = ridge_for(prior_sd)
    n = len(players)
    out = [np.full((samples, n), np.nan) for _ in range(3)]
    advantage = np.full(samples, np.nan)
    # A resample is its multiplicity vector: with few units most resamples repeat one
    # already fitted (one pair: every one), so each distinct one is fitted once.
    fitted: dict[bytes, RawFit | None] = {}
    for b in range(samples):
        multiplicity = np.bincount(rng.integers(0, len(units), len(units)),
                                   minlength=len(units)).astype(np.float64)
        key = multiplicity.tobytes()
        if key not in fitted:
            fitted[key] = _fit_resample(multiplicity, cells, counts, wins, n, anchor, ridge)
        raw = fitted[key]
        if raw is None:
            continue
        out[0][b], out[1][b], out[2][b] = raw.overall, raw.mrx, raw.det
        advantage[b] = raw.advantage
    return BootstrapSamples(out[0], out[1], out[2], advantage)


def _fit_resample(multiplicity: FloatArray, cells: Cells, counts: FloatArray,
                  wins: FloatArray, n: int, anchor: int | None, ridge: float) -> RawFit | None:
    """The models refitted on one resample (None when it leaves out the anchor)."""
    n_games, n_wins = multiplicity @ counts, multiplicity @ wins
    keep = n_games > 0
    sample = Cells(cells.mrx[keep], cells.det[keep], n_games[keep], n_wins[keep])
    if anchor is not None and not _plays(sample, anchor):
        return None
    return fit_cells(sample, n, anchor, ridge)


def _plays(cells: Cells, player: int) -> bool:
    return bool(np.any(cells.mrx == player) or np.any(cells.det == player))


def interval(samples: FloatArray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the finite ``samples``; ``None`` when there are none."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def superiority(better: FloatArray, worse: FloatArray) -> float | None:
    """Share of replicates where ``better`` rates above ``worse`` (ties half); ``None``
    when no replicate rated both."""
    both = np.isfinite(better) & np.isfinite(worse)
    if not np.any(both):
        return None
    wins = np.sum(better[both] > worse[both]) + 0.5 * np.sum(better[both] == worse[both])
    share = float(wins / np.sum(both))
    return None if math.isnan(share) else share
