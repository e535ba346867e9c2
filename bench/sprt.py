"""SPRT benchmark: how often the test (ratings/sprt.py) accepts H1 and H0 on simulated
role-swapped pairs, and how many pairs it needs, at true Elo differences from below elo0
to above elo1. At elo0 the H1 rate should be about alpha (a little less: the LLR
overshoots the bound), at elo1 about 1 - beta.

    .venv/bin/python bench/sprt.py --elo0 0 --elo1 10 --alpha 0.05 --beta 0.05 \
        --elos -5,0,5,10,15 --runs 1000 --advantage 0 --seed 1

Model: player A against B; in each pair A hunts B once and is hunted once. A game is won
with the Bradley-Terry probability of ``yard leaderboard`` with a Mister X advantage
``--advantage`` (Elo): P(A wins as Mister X) = score(d + advantage), as detectives
score(d - advantage), where ``d`` is set so that A's mean score over the pair is exactly
``score(elo)`` (the quantity the test is about). A large advantage (Scotland Yard is
lopsided) makes pairs more often 1-1, so the pentanomial variance falls and tests end
sooner. Every run checks the LLR after every pair, as the tournament runner does.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ratings.sprt import SprtSpec, logistic_score, simulate_tests
from ratings.stats import wilson_interval


def pair_probabilities(elo: float, advantage: float) -> tuple[float, float]:
    """(P(A wins as detectives), P(A wins as Mister X)) with mean score(elo)."""
    target = logistic_score(elo)
    low, high = -4000.0, 4000.0
    for _ in range(200):
        d = 0.5 * (low + high)
        mean = 0.5 * (logistic_score(d - advantage) + logistic_score(d + advantage))
        low, high = (d, high) if mean < target else (low, d)
    d = 0.5 * (low + high)
    return logistic_score(d - advantage), logistic_score(d + advantage)


def simulate(spec: SprtSpec, elo: float, advantage: float, runs: int, max_pairs: int,
             rng: np.random.Generator, block: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Per run: decision (+1 H1, -1 H0, 0 inconclusive) and pairs used."""
    p_det, p_mrx = pair_probabilities(elo, advantage)

    def draw(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
        wins = ((rng.random((n, size)) < p_det).astype(np.int64)
                + (rng.random((n, size)) < p_mrx))
        return 2 * wins

    return simulate_tests(spec, draw, runs, max_pairs, rng, block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--elos", default="-5,0,5,10,15",
                        help="true Elo differences to simulate (comma-separated)")
    parser.add_argument("--runs", type=int, default=1000, help="tests per Elo value")
    parser.add_argument("--advantage", type=float, default=0.0,
                        help="Mister X advantage in Elo (0: both roles alike)")
    parser.add_argument("--max-pairs", type=int, default=200_000,
                        help="pairs after which a test is inconclusive")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    spec = SprtSpec(args.elo0, args.elo1, args.alpha, args.beta)
    rng = np.random.default_rng(args.seed)
    print(f"SPRT {spec}; bounds [{spec.lower:.3f}, {spec.upper:.3f}]; {args.runs} runs per "
          f"Elo; Mister X advantage {args.advantage:g} Elo; seed {args.seed}")
    print(f"{'elo':>6} {'P(H1)':>7} {'95% CI':>15} {'P(H0)':>7} {'inconcl.':>8} "
          f"{'mean pairs':>10} {'median':>7} {'p90':>7} {'s':>6}")
    for elo in (float(e) for e in args.elos.split(",")):
        started = time.perf_counter()
        decision, used = simulate(spec, elo, args.advantage, args.runs, args.max_pairs, rng)
        h1 = int((decision == 1).sum())
        low, high = wilson_interval(h1, args.runs)
        print(f"{elo:>6g} {h1 / args.runs:>7.3f} {f'[{low:.3f}, {high:.3f}]':>15} "
              f"{(decision == -1).mean():>7.3f} {(decision == 0).mean():>8.3f} "
              f"{used.mean():>10.0f} {np.median(used):>7.0f} "
              f"{np.percentile(used, 90):>7.0f} {time.perf_counter() - started:>6.1f}",
              flush=True)
    print(f"expected: P(H1) ~ alpha = {spec.alpha:g} at elo0 = {spec.elo0:g}, "
          f"~ 1 - beta = {1 - spec.beta:g} at elo1 = {spec.elo1:g}")


if __name__ == "__main__":
    main()
