"""The SPRT mathematics (ratings/sprt.py) against independent computations."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from ratings.sprt import (
    EPSILON,
    Decision,
    PairTally,
    SprtError,
    SprtSpec,
    decide,
    elo_estimate,
    evaluate,
    llr,
    llr_batch,
    llr_normal,
    logistic_elo,
    logistic_score,
    simulate_tests,
)

SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def brute_max_loglik(weights: np.ndarray, s: float, rounds: int = 7) -> float:
    """max of Σ w_i log p_i over distributions p on the five pair scores with mean s, by
    a zooming grid search over (p¼, p½, p¾): p1 and p0 follow from the mean and the sum."""
    lo, hi = np.zeros(3), np.ones(3)
    best = -math.inf
    n = 61
    for _ in range(rounds):
        axes = [np.linspace(lo[k], hi[k], n) for k in range(3)]
        q1, q2, q3 = np.meshgrid(*axes, indexing="ij")
        p4 = s - (0.25 * q1 + 0.5 * q2 + 0.75 * q3)
        p0 = 1.0 - q1 - q2 - q3 - p4
        ps = np.stack([p0, q1, q2, q3, p4], axis=-1)
        ok = np.all(ps > 0, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(ok, np.sum(weights * np.log(np.where(ps > 0, ps, 1.0)), axis=-1),
                             -np.inf)
        at = np.unravel_index(int(np.argmax(value)), value.shape)
        best = max(best, float(value[at]))
        centre = np.array([q1[at], q2[at], q3[at]])
        width = (hi - lo) / (n - 1) * 3
        lo, hi = np.maximum(centre - width, 0.0), np.minimum(centre + width, 1.0)
    return best


def brute_llr(counts: list[int], elo0: float, elo1: float) -> float:
    regular = np.where(np.array(counts) > 0, counts, EPSILON).astype(float)
    return (brute_max_loglik(regular, logistic_score(elo1))
            - brute_max_loglik(regular, logistic_score(elo0)))


@pytest.mark.parametrize(("counts", "elo0", "elo1"), [
    ([3, 7, 20, 9, 5], 0.0, 10.0),
    ([12, 0, 25, 0, 18], 0.0, 10.0),      # Scotland Yard: no draws, a trinomial
    ([40, 0, 10, 0, 2], -20.0, 5.0),
    ([1, 2, 3, 4, 5], 0.0, 50.0),
])
def test_llr_is_the_constrained_maximum_likelihood_ratio(counts: list[int], elo0: float,
                                                         elo1: float) -> None:
    assert llr(counts, elo0, elo1) == pytest.approx(brute_llr(counts, elo0, elo1), abs=1e-7)


def test_llr_of_wins_and_losses_only_is_the_bernoulli_ratio() -> None:
    # Only 0 and 1 pair scores: the constrained maximum puts 1 − s and s on them, so the
    # LLR is n1 ln(s1/s0) + n0 ln((1 − s1)/(1 − s0)) up to the 0.001 counts of the others.
    s0, s1 = logistic_score(0), logistic_score(10)
    assert s0 == 0.5 and s1 == pytest.approx(0.514387, abs=1e-6)
    for n0, n1 in [(0, 10), (7, 13), (30, 2)]:
        by_hand = n1 * math.log(s1 / s0) + n0 * math.log((1 - s1) / (1 - s0))
        assert llr([n0, 0, 0, 0, n1], 0, 10) == pytest.approx(by_hand, abs=2e-3)
    assert llr([0, 0, 0, 0, 10], 0, 10) == pytest.approx(0.28375, abs=1e-4)


def test_llr_symmetry_sign_and_normal_approximation() -> None:
    # Hypotheses symmetric around 0 and mirrored counts: the LLR is exactly 0.
    assert llr([4, 1, 9, 1, 4], -10, 10) == pytest.approx(0.0, abs=1e-12)
    # Mirroring the counts mirrors the test.
    assert llr([1, 2, 3, 4, 5], -10, 10) == pytest.approx(-llr([5, 4, 3, 2, 1], -10, 10))
    assert llr([0] * 5, 0, 10) == 0.0
    # Many pairs between the hypotheses: exact and normal approximation agree closely.
    counts = [1000, 0, 2000, 0, 1100]
    assert llr(counts, 0, 10) == pytest.approx(llr_normal(counts, 0, 10), rel=2e-3)
    assert llr(counts, 0, 10) == pytest.approx(2.3048, abs=1e-4)
    # Batched evaluation gives the same numbers.
    batch = llr_batch([[3, 7, 20, 9, 5], [0, 0, 0, 0, 0], [12, 0, 25, 0, 18]], 0, 10)
    assert batch.tolist() == pytest.approx([llr([3, 7, 20, 9, 5], 0, 10), 0.0,
                                            llr([12, 0, 25, 0, 18], 0, 10)])


def test_elo_estimate_and_interval() -> None:
    counts = [5, 0, 20, 0, 30]   # 55 pairs, mean score (20 * .5 + 30) / 55
    mean = 40 / 55
    var = (5 * mean**2 + 20 * (0.5 - mean) ** 2 + 30 * (1 - mean) ** 2) / 55
    half = 1.959964 * math.sqrt(var / 55)
    estimate = elo_estimate(counts)
    assert estimate is not None
    elo, (low, high) = estimate
    assert elo == pytest.approx(-400 * math.log10(1 / mean - 1))
    assert low == pytest.approx(logistic_elo(mean - half))
    assert high == pytest.approx(logistic_elo(mean + half))
    assert low < elo < high
    assert elo_estimate([0] * 5) is None
    assert elo_estimate([0, 0, 0, 0, 3]) == (math.inf, (math.inf, math.inf))
    assert logistic_elo(logistic_score(123.0)) == pytest.approx(123.0)


def test_bounds_and_decisions() -> None:
    spec = SprtSpec.parse("elo0=0,elo1=10,alpha=0.05,beta=0.1")
    assert spec.lower == pytest.approx(math.log(0.1 / 0.95))
    assert spec.upper == pytest.approx(math.log(0.9 / 0.05))
    assert decide(spec, spec.upper, 5, 100) is Decision.H1
    assert decide(spec, spec.lower, 5, 100) is Decision.H0
    assert decide(spec, 0.0, 99, 100) is Decision.CONTINUE
    assert decide(spec, 0.0, 100, 100) is Decision.INCONCLUSIVE
    assert decide(spec, 0.0, 10**6, None) is Decision.CONTINUE
    assert not Decision.CONTINUE.final and Decision.INCONCLUSIVE.final

    # A strong player crosses the upper bound; a weak one the lower.
    strong = evaluate(spec, [0, 0, 2, 0, 120], max_pairs=1000, players=("greedy", "random"))
    assert strong.llr >= spec.upper and strong.decision is Decision.H1
    weak = evaluate(spec, [120, 0, 2, 0, 0], max_pairs=1000)
    assert weak.decision is Decision.H0
    capped = evaluate(spec, [10, 0, 20, 0, 10], max_pairs=40)
    assert capped.decision is Decision.INCONCLUSIVE

    data = strong.to_dict()
    assert {"llr", "lower", "upper", "elo", "elo_ci", "decision", "pairs",
            "pentanomial"} <= set(data)
    assert data["decision"] == "H1" and data["pairs"] == 122
    assert data["pentanomial"] == [0, 0, 2, 0, 120]
    assert data["elo_ci"][1] is None  # the upper end is unbounded (score interval hits 1)
    json.dumps(data, allow_nan=False)
    assert "H1 accepted: greedy is stronger" in strong.summary()
    assert "inconclusive" in capped.summary()


def test_summary_explains_the_pentanomial_and_its_elo() -> None:
    state = evaluate(SprtSpec(0, 100), [0, 0, 20, 0, 84], max_pairs=1000,
                     players=("dqn+alphabeta", "run2/rush"))
    text = state.summary()
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    flat = " ".join(text.split())
    assert ("pentanomial [0, 0, 20, 0, 84]: pairs in which dqn+alphabeta scored 0, 0.5, 1, "
            "1.5, 2 of 2 points") in flat
    elo = next(i for i, line in enumerate(lines) if line.startswith("Elo +389.3  95% ["))
    note = " ".join(" ".join(lines[elo + 1:]).split())    # right under the Elo line
    assert note.startswith("(logistic Elo of dqn+alphabeta's mean pair score against "
                           "run2/rush, these pairs only; yard leaderboard's is a "
                           "maximum-likelihood fit of all games in its pool")
    assert lines[-1] == "H1 accepted: dqn+alphabeta is stronger (elo >= 100)"
    # No pairs yet: no Elo, so no note about it.
    empty = evaluate(SprtSpec(), [0, 0, 0, 0, 0]).summary()
    assert "pairs in which A scored" in " ".join(empty.split()) and "logistic Elo" not in empty


@pytest.mark.parametrize(("text", "message"), [
    ("elo0=10,elo1=0", "elo0 must be below elo1"),
    ("elo0=0,elo1=10,alpha=0", "alpha and beta"),
    ("alpha=0.6,beta=0.5", "alpha and beta"),
    ("elo=3", "expected KEY=VALUE"),
    ("elo1", "expected KEY=VALUE"),
    ("elo1=ten", "is not a number"),
    ("elo1=5,elo1=6", "given twice"),
    ("elo1=nan", "finite numbers"),
    ("elo0=-1e6,elo1=-9e5", "too extreme"),
])
def test_bad_specs_are_refused(text: str, message: str) -> None:
    with pytest.raises(SprtError, match=message):
        SprtSpec.parse(text)


def test_spec_round_trip_and_defaults() -> None:
    spec = SprtSpec.parse("elo1=5")
    assert spec == SprtSpec(0.0, 5.0, 0.05, 0.05)
    assert SprtSpec.from_dict(spec.to_dict()) == spec
    assert str(spec) == "elo0=0,elo1=5,alpha=0.05,beta=0.05"
    with pytest.raises(SprtError, match="invalid stored"):
        SprtSpec.from_dict({"elo0": "x"})


def test_pair_tally_counts_complete_pairs_once() -> None:
    tally = PairTally()
    tally.add("p0", "g0", 1.0)
    assert tally.counts == [0] * 5 and tally.incomplete == 1
    tally.add("p0", "g0", 1.0)           # the same game again: still half a pair
    assert tally.counts == [0] * 5
    tally.add("p0", "g1", 1.0)
    tally.add("p0", "g1", 0.0)           # a finished pair is not changed afterwards
    tally.add("p1", "g2", 0.0)
    tally.add("p1", "g3", 0.5)
    assert tally.counts == [0, 1, 0, 0, 1] and tally.incomplete == 0
    with pytest.raises(SprtError):
        tally.add("p2", "g4", 2.0)
    with pytest.raises(SprtError, match="5 entries"):
        llr([1, 2, 3], 0, 10)
    with pytest.raises(SprtError, match=">= 0"):
        llr([1, 2, 3, -1, 0], 0, 10)


def test_simulated_tests_stop_at_the_first_pair_past_a_bound() -> None:
    """simulate_tests (bench/sprt.py, bench/pairing.py): a test that only sees 2-0 pairs
    accepts H1 at the first pair whose LLR reaches the upper bound; only 0-2 pairs, H0;
    only 1-1 pairs between symmetric hypotheses never decides."""
    spec = SprtSpec(-10, 10)
    rng = np.random.default_rng(0)

    def always(cell: int) -> Any:
        return lambda _rng, n, size: np.full((n, size), cell, dtype=np.int64)

    first = next(k for k in range(1, 1000) if llr([0, 0, 0, 0, k], -10, 10) >= spec.upper)
    decision, used = simulate_tests(spec, always(4), 3, 1000, rng, block=7)
    assert decision.tolist() == [1, 1, 1] and used.tolist() == [first] * 3
    decision, used = simulate_tests(spec, always(0), 2, 1000, rng)
    assert decision.tolist() == [-1, -1] and used.tolist() == [first] * 2
    decision, used = simulate_tests(spec, always(2), 2, 50, rng)
    assert decision.tolist() == [0, 0] and used.tolist() == [50, 50]
