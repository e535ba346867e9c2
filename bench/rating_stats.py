"""Ratings benchmark: how long a leaderboard takes, and how often its bootstrap 95%
intervals cover the true ratings of simulated players.

    .venv/bin/python bench/rating_stats.py --players 8 --pairs 50 --samples 200 --runs 20
"""

from __future__ import annotations

import argparse
import random
import time

from ratings.elo import expected_mrx_score
from ratings.leaderboard import leaderboard
from ratings.outcomes import GameOutcome


def simulate(truth: dict[str, float], advantage: float, pairs: int, seed: int
             ) -> list[GameOutcome]:
    """Round robin of role-swapped pairs with results drawn from the model."""
    rng = random.Random(seed)
    names = sorted(truth)
    games = []
    for number in range(pairs):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for mrx, det in ((a, b), (b, a)):
                    p = expected_mrx_score(truth[mrx], truth[det], advantage)
                    games.append(GameOutcome(mrx, det, rng.random() < p, f"{a}|{b}|{number}",
                                             "sim"))
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--advantage", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    truth = {"random": 0.0} | {f"bot{i}": 80.0 * i for i in range(1, args.players)}
    covered = total = 0
    adv_covered = 0
    elapsed = 0.0
    games = 0
    for run in range(args.runs):
        data = simulate(truth, args.advantage, args.pairs, args.seed + run)
        started = time.perf_counter()
        board = leaderboard(data, samples=args.samples, seed=run)
        elapsed += time.perf_counter() - started
        games = len(data)
        for row in board.rows:
            if row.player != "random" and row.ci is not None:
                total += 1
                covered += row.ci[0] <= truth[row.player] <= row.ci[1]
        ci = board.mrx_advantage_ci
        adv_covered += ci is not None and ci[0] <= args.advantage <= ci[1]
    print(f"{args.players} players, {games} games, {args.samples} bootstrap samples: "
          f"{elapsed / args.runs:.2f} s per leaderboard")
    print(f"rating CI coverage {covered}/{total} = {covered / total:.3f}; "
          f"advantage CI coverage {adv_covered}/{args.runs}")


if __name__ == "__main__":
    main()
