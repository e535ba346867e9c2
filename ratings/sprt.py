"""Sequential probability ratio test (SPRT) of one player against another on role-swapped
pairs, as the chess engine testing frameworks (Fishtest) do it.

Outcomes. A pair is two games between players A and B from the same start, A once on each
side. A's *pair score* is its points over the two games divided by two (a win is 1 point, a
draw — which Scotland Yard does not have — would be ½), so it is one of the five values
0, ¼, ½, ¾, 1: the *pentanomial* outcome. Pairs, not games, are the independent units: the
role-swapped games share a start and are strongly correlated.

Hypotheses. Elo is *logistic* Elo of the mean pair score: ``score(elo) = 1 / (1 +
10^(-elo/400))`` (the same scale as ``yard leaderboard``), and the test is
H0: elo = elo0 against H1: elo = elo1 (A's Elo over B; ``elo0 < elo1``).

LLR. The generalised SPRT (GSPRT) of Michel Van den Bergh: the log-likelihood ratio of the
observed pentanomial counts under the maximum-likelihood distribution with mean score s1
against the one with mean score s0. The constrained maximum for mean ``s`` is
``p_i = p̂_i / (1 + θ (a_i − s))`` (``a_i`` the five pair scores, ``p̂`` the empirical
frequencies) with the Lagrange multiplier θ the root of ``Σ p̂_i (a_i − s) / (1 + θ (a_i −
s)) = 0`` (monotone in θ; solved by safeguarded Newton). Like Fishtest, empty categories get
a count of ``EPSILON`` = 0.001 first, so the maximum exists from the first pair on (with no
draws, categories ¼ and ¾ always hold just that). :func:`llr_normal` is the normal
approximation ``N (s1 − s0) (2 x̄ − s0 − s1) / (2 σ²)`` (x̄, σ²: mean and variance of the
pair score), kept as a cross-check.

Decision. Wald's bounds ``lower = ln(β / (1 − α))`` and ``upper = ln((1 − β) / α)``: H1 is
accepted when the LLR reaches the upper bound, H0 when it reaches the lower one; a test
that has used all its pairs without either is *inconclusive*.

Elo estimate. ``elo(x̄)`` with the 95% interval ``elo(x̄ ± 1.96 σ / √N)``; an end is ±inf
when it falls outside (0, 1) (all pairs won or lost).

>>> spec = SprtSpec.parse("elo0=0,elo1=10,alpha=0.05,beta=0.05")
>>> round(spec.lower, 4), round(spec.upper, 4)
(-2.9444, 2.9444)
>>> state = evaluate(spec, [5, 0, 20, 0, 30], max_pairs=1000)
>>> state.decision.value, state.pairs
('continue', 55)
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import numpy.typing as npt

from ratings.outcomes import RatingsError
from ratings.stats import Z95

FloatArray = npt.NDArray[np.float64]

#: The five pair scores (A's points over a role-swapped pair, divided by two).
PAIR_SCORES: FloatArray = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: Count given to an empty pentanomial category before the maximum-likelihood fit.
EPSILON = 1e-3
#: Pairs a test may use at most when the user names no ``--pairs``.
DEFAULT_MAX_PAIRS = 10_000

_NEWTON_STEPS = 100
_TOLERANCE = 1e-13


class SprtError(RatingsError):
    """An SPRT specification or input is invalid."""


class Decision(Enum):
    """Where a test stands."""

    H0 = "H0"                     #: the lower bound was reached: elo0 accepted
    H1 = "H1"                     #: the upper bound was reached: elo1 accepted
    INCONCLUSIVE = "inconclusive"  #: every allowed pair was used, no bound reached
    CONTINUE = "continue"          #: no bound reached yet: play more pairs

    @property
    def final(self) -> bool:
        """True when no more pairs are to be played."""
        return self is not Decision.CONTINUE


def logistic_score(elo: float) -> float:
    """Expected score for a logistic Elo difference: ``1 / (1 + 10^(-elo/400))``."""
    try:
        return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))
    except OverflowError:
        return 0.0


def logistic_elo(score: float) -> float:
    """Inverse of :func:`logistic_score`; ±inf at scores 1 and 0 (and outside [0, 1])."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class SprtSpec:
    """The hypotheses (logistic Elo of the first player over the second) and error rates."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        """Refuse bounds that are not finite or not in order."""
        values = (self.elo0, self.elo1, self.alpha, self.beta)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            raise SprtError("elo0, elo1, alpha and beta must be finite numbers")
        if not self.elo0 < self.elo1:
            raise SprtError(f"elo0 must be below elo1 (got elo0={self.elo0:g}, "
                            f"elo1={self.elo1:g})")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise SprtError("alpha and beta must be in (0, 1) with alpha + beta < 1")
        if not 0 < logistic_score(self.elo0) < logistic_score(self.elo1) < 1:
            raise SprtError("elo0 and elo1 are too extreme to tell apart")

    @classmethod
    def parse(cls, text: str) -> SprtSpec:
        """``"elo0=0,elo1=10,alpha=0.05,beta=0.05"``; keys left out keep their defaults."""
        values: dict[str, float] = {}
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in cls.__dataclass_fields__:
                raise SprtError(f"{part!r}: expected KEY=VALUE with KEY one of elo0, elo1, "
                                "alpha, beta")
            if key in values:
                raise SprtError(f"{key} is given twice")
            try:
                values[key] = float(value)
            except ValueError:
                raise SprtError(f"{key}={value.strip()!r} is not a number") from None
        return cls(**values)

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form (stored with the tournament)."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SprtSpec:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(**{k: float(data[k]) for k in cls.__dataclass_fields__ if k in data})
        except (TypeError, ValueError):
            raise SprtError(f"invalid stored SPRT specification {data!r}") from None

    @property
    def lower(self) -> float:
        """Wald's lower bound ``ln(β / (1 − α))``: reaching it accepts H0."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Wald's upper bound ``ln((1 − β) / α)``: reaching it accepts H1."""
        return math.log((1.0 - self.beta) / self.alpha)

    def __str__(self) -> str:
        """The test as ``elo0=...,elo1=...,alpha=...,beta=...``."""
        return (f"elo0={self.elo0:g},elo1={self.elo1:g},alpha={self.alpha:g},"
                f"beta={self.beta:g}")


def _counts(counts: Sequence[float] | Sequence[Sequence[float]] | FloatArray) -> FloatArray:
    array = np.asarray(counts, dtype=np.float64)
    if array.shape[-1:] != (5,):
        raise SprtError(f"pentanomial counts need 5 entries, got shape {array.shape}")
    if np.any(array < 0) or not np.all(np.isfinite(array)):
        raise SprtError("pentanomial counts must be finite and >= 0")
    return array


def _regularize(counts: FloatArray) -> FloatArray:
    return np.where(counts > 0, counts, EPSILON)


def _log_dual(freq: FloatArray, s: float) -> FloatArray:
    """``max over p with mean s`` of ``Σ p̂ log p`` minus ``Σ p̂ log p̂``, per row of
    ``freq`` (frequencies over :data:`PAIR_SCORES`, every entry positive):
    ``−Σ p̂_i log(1 + θ (a_i − s))`` at the root θ of the secular equation."""
    d = PAIR_SCORES - s                      # a_i − s: from −s (< 0) to 1 − s (> 0)
    low = np.full(freq.shape[:-1], -1.0 / (1.0 - s))  # 1 + θ d > 0 for every i inside
    high = np.full(freq.shape[:-1], 1.0 / s)
    theta = np.zeros(freq.shape[:-1])
    for _ in range(_NEWTON_STEPS):
        denom = 1.0 + theta[..., None] * d
        f = np.sum(freq * d / denom, axis=-1)            # decreasing in θ
        slope = -np.sum(freq * d * d / (denom * denom), axis=-1)
        done = np.abs(f) < _TOLERANCE
        if np.all(done):
            break
        low = np.where(f > 0, theta, low)
        high = np.where(f < 0, theta, high)
        step = theta - f / slope
        inside = (step > low) & (step < high)
        theta = np.where(done, theta, np.where(inside, step, 0.5 * (low + high)))
    result: FloatArray = -np.sum(freq * np.log1p(theta[..., None] * d), axis=-1)
    return result


def llr_batch(counts: Sequence[float] | Sequence[Sequence[float]] | FloatArray, elo0: float,
              elo1: float) -> FloatArray:
    """:func:`llr` for an array of pentanomial counts (shape ``(..., 5)``), vectorised."""
    array = _counts(counts)
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    regular = _regularize(array)
    total = regular.sum(axis=-1)
    freq = regular / total[..., None]
    value = total * (_log_dual(freq, s1) - _log_dual(freq, s0))
    return np.where(array.sum(axis=-1) > 0, value, 0.0)



def simulate_tests(spec: SprtSpec,
                   draw: Callable[[np.random.Generator, int, int], npt.NDArray[np.int64]],
                   runs: int, max_pairs: int, rng: np.random.Generator, block: int = 400
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``runs`` simulated tests of ``spec``, each checking the LLR after every pair (as the
    tournament runner does), stopping at a bound or after ``max_pairs``. ``draw(rng, n,
    size)`` gives the next ``size`` pairs of ``n`` running tests as pentanomial cells (0..4:
    the first player's points out of 2, in halves). Per test: the decision (+1 H1, -1 H0,
    0 none) and the pairs it used. For benchmarks of the test's operating characteristic."""
    decision = np.zeros(runs, dtype=np.int64)
    used = np.full(runs, max_pairs, dtype=np.int64)
    counts = np.zeros((runs, 5))
    active = np.arange(runs)
    played = 0
    while active.size and played < max_pairs:
        size = min(block, max_pairs - played)
        steps = np.zeros((active.size, size, 5))
        np.put_along_axis(steps, draw(rng, active.size, size)[..., None], 1.0, axis=-1)
        cumulative = counts[active][:, None, :] + np.cumsum(steps, axis=1)
        value = llr_batch(cumulative, spec.elo0, spec.elo1)
        crossed = (value >= spec.upper) | (value <= spec.lower)
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        done = active[hit]
        decision[done] = np.where(value[hit, first[hit]] >= spec.upper, 1, -1)
        used[done] = played + first[hit] + 1
        counts[active] = cumulative[:, -1, :]
        active = active[~hit]
        played += size
    return decision, used

def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (logistic Elo ``elo1``) against H0 (``elo0``)
    for pentanomial ``counts`` (pairs scoring 0, ¼, ½, ¾, 1 for the tested player); 0 for
    no pairs."""
    return float(llr_batch(counts, elo0, elo1))


def _moments(counts: FloatArray) -> tuple[float, float, float]:
    n = float(counts.sum())
    mean = float(counts @ PAIR_SCORES) / n
    var = float(counts @ (PAIR_SCORES - mean) ** 2) / n
    return n, mean, var


def llr_normal(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The normal approximation of :func:`llr` (Fishtest's ``LLR_logistic`` of old),
    on the same regularised counts: ``N (s1 − s0) (2 x̄ − s0 − s1) / (2 σ²)``."""
    array = _counts(counts)
    if array.sum() == 0:
        return 0.0
    n, mean, var = _moments(_regularize(array))
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def elo_estimate(counts: Sequence[float]) -> tuple[float, tuple[float, float]] | None:
    """Logistic Elo of the mean pair score and its 95% interval from the pentanomial
    variance; ``None`` for no pairs. Interval ends outside (0, 1) in score are ±inf."""
    array = _counts(counts)
    if array.sum() == 0:
        return None
    n, mean, var = _moments(array)
    half = Z95 * math.sqrt(var / n)
    return logistic_elo(mean), (logistic_elo(mean - half), logistic_elo(mean + half))


def decide(spec: SprtSpec, value: float, pairs: int, max_pairs: int | None) -> Decision:
    """The decision for LLR ``value`` after ``pairs`` pairs (of at most ``max_pairs``)."""
    if value >= spec.upper:
        return Decision.H1
    if value <= spec.lower:
        return Decision.H0
    if max_pairs is not None and pairs >= max_pairs:
        return Decision.INCONCLUSIVE
    return Decision.CONTINUE


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class SprtState:
    """Where a test stands after some pairs: what ``yard sprt`` prints and stores."""

    spec: SprtSpec
    pentanomial: tuple[int, int, int, int, int]
    llr: float
    decision: Decision
    elo: float | None = None
    elo_ci: tuple[float, float] | None = None
    max_pairs: int | None = None
    #: (tested player, opponent), when known.
    players: tuple[str, str] | None = None
    #: Pairs with only one decided game so far (not counted).
    incomplete_pairs: int = 0

    @property
    def pairs(self) -> int:
        """Complete pairs counted."""
        return sum(self.pentanomial)

    @property
    def lower(self) -> float:
        """Lower (H0) bound."""
        return self.spec.lower

    @property
    def upper(self) -> float:
        """Upper (H1) bound."""
        return self.spec.upper

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``llr``, ``lower``, ``upper``, ``elo``, ``elo_ci``,
        ``decision``, ``pairs``, ``pentanomial`` and the spec; infinite Elo values (all
        pairs won or lost) are ``null``."""
        ci = None if self.elo_ci is None else [_finite(self.elo_ci[0]),
                                               _finite(self.elo_ci[1])]
        return {"llr": self.llr, "lower": self.lower, "upper": self.upper,
                "elo": None if self.elo is None else _finite(self.elo), "elo_ci": ci,
                "decision": self.decision.value, "pairs": self.pairs,
                "pentanomial": list(self.pentanomial), "max_pairs": self.max_pairs,
                "incomplete_pairs": self.incomplete_pairs,
                "players": None if self.players is None else list(self.players),
                **self.spec.to_dict()}

    def summary(self) -> str:
        """A few human lines: the pentanomial with its legend, LLR and bounds, Elo and
        interval with a note on how it differs from the leaderboard's, decision."""
        a, b = self.players or ("A", "B")
        lines = [*_wrap(f"SPRT {a} vs {b} ({self.spec}): {self.pairs} pairs"),
                 *_wrap(f"pentanomial {list(self.pentanomial)}: {pentanomial_legend(a)}"),
                 f"LLR {self.llr:.3f}  bounds [{self.lower:.3f}, {self.upper:.3f}]"]
        if self.elo is not None and self.elo_ci is not None:
            lines.append(f"Elo {_fmt(self.elo)}  95% [{_fmt(self.elo_ci[0])}, "
                         f"{_fmt(self.elo_ci[1])}]")
            lines.extend(_wrap(f"  ({elo_note(a, b)})"))
        lines.append({Decision.H1: f"H1 accepted: {a} is stronger (elo >= {self.spec.elo1:g})",
                      Decision.H0: f"H0 accepted: elo <= {self.spec.elo0:g}",
                      Decision.INCONCLUSIVE: f"inconclusive: {self.pairs} pairs used, no "
                                             "bound reached",
                      Decision.CONTINUE: "no decision yet: the test continues",
                      }[self.decision])
        return "\n".join(lines)


def pentanomial_legend(player: str = "A") -> str:
    """What the five pentanomial counts are, ``player`` being the tested one."""
    return (f"pairs in which {player} scored 0, 0.5, 1, 1.5, 2 of 2 points (a pair: two "
            f"games from one start, {player} once on each side; 0.5 and 1.5 need a draw)")


def elo_note(player: str = "A", opponent: str = "B") -> str:
    """How the SPRT's Elo differs from ``yard leaderboard``'s for the same two players."""
    return (f"logistic Elo of {player}'s mean pair score against {opponent}, these pairs "
            "only; yard leaderboard's is a maximum-likelihood fit of all games in its pool, "
            "with a Mister X advantage term and an anchor")


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=80, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def _fmt(value: float) -> str:
    return f"{value:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def evaluate(spec: SprtSpec, counts: Sequence[int], max_pairs: int | None = None,
             players: tuple[str, str] | None = None, incomplete_pairs: int = 0
             ) -> SprtState:
    """The full state of a test with these pentanomial ``counts``."""
    array = _counts(counts)
    if np.any(array != np.round(array)):
        raise SprtError("pentanomial counts must be whole numbers")
    ints = tuple(int(c) for c in array)
    value = llr(ints, spec.elo0, spec.elo1)
    pairs = sum(ints)
    estimate = elo_estimate(ints)
    elo, ci = (None, None) if estimate is None else estimate
    return SprtState(spec, (ints[0], ints[1], ints[2], ints[3], ints[4]), value,
                     decide(spec, value, pairs, max_pairs), elo, ci, max_pairs, players,
                     incomplete_pairs)


class PairTally:
    """Pentanomial counts built game by game: a pair counts once both of its games are
    decided. Games are keyed, so adding the same game twice changes nothing.

    >>> tally = PairTally()
    >>> tally.add("p0", "g0", 1.0); tally.add("p0", "g1", 0.0); tally.add("p1", "g2", 1.0)
    >>> tally.counts, tally.incomplete
    ([0, 0, 1, 0, 0], 1)
    """

    def __init__(self) -> None:
        """An empty tally."""
        self._open: dict[str, dict[str, float]] = {}
        self._done: set[str] = set()
        self.counts = [0, 0, 0, 0, 0]

    def add(self, pair: str, game: str, points: float) -> None:
        """Record ``points`` (0, ½ or 1) for the tested player in ``game`` of ``pair``."""
        if points not in (0.0, 0.5, 1.0):
            raise SprtError(f"game points must be 0, 0.5 or 1, got {points!r}")
        if pair in self._done:
            return
        games = self._open.setdefault(pair, {})
        games[game] = points
        if len(games) == 2:
            self.counts[round(2 * sum(games.values()))] += 1
            self._done.add(pair)
            del self._open[pair]

    @property
    def incomplete(self) -> int:
        """Pairs with one decided game only."""
        return len(self._open)


__all__ = ["DEFAULT_MAX_PAIRS", "EPSILON", "PAIR_SCORES", "Decision", "PairTally",
           "SprtError", "SprtSpec", "SprtState", "decide", "elo_estimate", "elo_note",
           "evaluate", "llr", "llr_batch", "llr_normal", "logistic_elo", "logistic_score",
           "pentanomial_legend"]
