"""What deals a role-swapped pair is played from cost statistically: the variance of a
pair's score and the pairs an SPRT needs, under the three ways to deal the two games.

    .venv/bin/python bench/pairing.py --rules grid5,classic --pairs 3000,1500 --jobs 2

Modes (``yard tournament run --pairing``):

* ``same-deal``: both games from one seed (Mister X starts where he started in game 1:
  a bot that remembers game 1 knows it);
* ``fresh-mrx`` (the default): one seed for the detectives' starts, Mister X's start drawn
  afresh for each game (``new_game(rules, seed, mrx_seed=...)``);
* ``independent``: two unrelated deals.

In-process with the engine and the arena (no server, no processes per bot), for each
ruleset and two matchups of cheap bots: A hunts B and B hunts A in every pair; a pair
scores A's points, 0, 1 or 2 (no draws in Scotland Yard). ``var`` is the variance of that
score (0..2); ``ratio`` is it over ``same-deal``'s. An SPRT (``--elo0``/``--elo1``,
alpha = beta = 0.05, the pentanomial GSPRT of ``ratings/sprt.py``) is then simulated
``--runs`` times on pairs drawn from each mode's observed distribution of pair scores,
tilted (exponentially, as the GSPRT's own estimate is) to a true Elo of ``elo0`` and of
``elo1``: the matchups keep their shape (how often a pair splits 1-1), only the
strength difference is set, so the mean pairs to a decision compare the modes at one true
strength. Deals are from ``tournament.schedule.Deals`` with public seed ``--seed``;
bots are seeded per game from the game seed, as in ``bots.arena``.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# bench/tournament.py would shadow the tournament package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import numpy as np  # noqa: E402

from bots.arena import play_game  # noqa: E402
from bots.registry import make_bot  # noqa: E402
from game import load_ruleset, new_game  # noqa: E402
from ratings.sprt import SprtSpec, logistic_elo, logistic_score, simulate_tests  # noqa: E402
from tournament.schedule import Deals, mrx_bot, team_members  # noqa: E402

MODES = ("same-deal", "fresh-mrx", "independent")
#: (A, B) player specs: a bot for both roles, or MISTER_X_BOT/DETECTIVE_BOT.
MATCHUPS = (("greedy", "run2/rush"), ("run/rush", "run2/greedy"))


@dataclass(frozen=True)
class Job:
    """A block of pairs of one ruleset, matchup and mode."""

    rules: str
    a: str
    b: str
    mode: str
    seed: int
    first: int
    count: int


def _deal(job: Job, number: int) -> list[tuple[int, int | None]]:
    """(seed, mrx_seed) of game 1 (A hunts B) and game 2 (B hunts A) of pair ``number``."""
    deals = Deals(seed=job.seed)
    shared = deals.pair_seed(job.a, job.b, number)
    key = f"{job.a}|{job.b}|{number}"
    if job.mode == "same-deal":
        return [(shared, None), (shared, None)]
    if job.mode == "fresh-mrx":
        return [(shared, deals.mrx_seed(key, job.b)), (shared, deals.mrx_seed(key, job.a))]
    other = deals.pair_seed(job.a, job.b, number + 10_000_000)  # another pair's deal
    return [(shared, None), (other, None)]


def _points(job: Job) -> list[int]:
    """A's points (0..2) in each pair of ``job``."""
    rules = load_ruleset(job.rules)
    out = []
    for number in range(job.first, job.first + job.count):
        (s1, m1), (s2, m2) = _deal(job, number)
        points = 0
        for (seed, mrx_seed), mrx, det, a_is_mrx in (
                ((s1, m1), job.b, job.a, False), ((s2, m2), job.a, job.b, True)):
            start = new_game(rules, seed, mrx_seed=mrx_seed)
            result = play_game(rules, make_bot(mrx_bot(mrx)),
                               [make_bot(n) for n in team_members(det)], seed=seed,
                               start=start)
            points += result.mrx_won == a_is_mrx
        out.append(points)
    return out


def tilt(freq: np.ndarray, target: float) -> np.ndarray:
    """``freq`` (pentanomial, scores 0, 1/4, ..., 1) exponentially tilted to mean
    ``target`` (cells with no mass stay empty)."""
    scores = np.linspace(0.0, 1.0, 5)
    used = freq > 0
    if not scores[used].min() < target < scores[used].max():
        raise ValueError(f"no tilt of {freq} has mean {target}")
    low, high = -200.0, 200.0
    for _ in range(200):
        lam = 0.5 * (low + high)
        weights = freq * np.exp(lam * (scores - 0.5))
        mean = float((weights * scores).sum() / weights.sum())
        low, high = (lam, high) if mean < target else (low, lam)
    tilted: np.ndarray = weights / weights.sum()
    return tilted


def sprt_pairs(spec: SprtSpec, probabilities: np.ndarray, runs: int, max_pairs: int,
               rng: np.random.Generator, block: int = 500) -> tuple[float, float]:
    """Mean pairs to a decision and P(accept H1) over ``runs`` simulated tests."""
    def draw(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
        return rng.choice(5, size=(n, size), p=probabilities)

    decision, used = simulate_tests(spec, draw, runs, max_pairs, rng, block)
    return float(used.mean()), float((decision == 1).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="grid5,classic")
    parser.add_argument("--pairs", default="3000,1500",
                        help="pairs per mode and matchup, one number or one per ruleset")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=2000, help="simulated SPRTs per cell")
    parser.add_argument("--max-pairs", type=int, default=100_000)
    args = parser.parse_args()
    rulesets = args.rules.split(",")
    sizes = [int(p) for p in args.pairs.split(",")]
    sizes = sizes * len(rulesets) if len(sizes) == 1 else sizes
    if len(sizes) != len(rulesets):
        parser.error("--pairs: one number, or one per ruleset")
    spec = SprtSpec(args.elo0, args.elo1, 0.05, 0.05)
    rng = np.random.default_rng(args.seed)
    block = 100
    jobs = [Job(rules, a, b, mode, args.seed, first, min(block, pairs - first))
            for rules, pairs in zip(rulesets, sizes, strict=True) for a, b in MATCHUPS
            for mode in MODES for first in range(0, pairs, block)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(_points, jobs))
    played: dict[tuple[str, str, str, str], list[int]] = {}
    for job, block_points in zip(jobs, results, strict=True):
        played.setdefault((job.rules, job.a, job.b, job.mode), []).extend(block_points)
    print(f"{sum(len(p) for p in played.values())} pairs in "
          f"{time.perf_counter() - started:.0f} s ({args.jobs} processes); seed {args.seed}; "
          f"SPRT elo0={args.elo0:g} elo1={args.elo1:g} alpha=beta=0.05, {args.runs} runs")
    print(f"{'rules':<8} {'A vs B':<22} {'mode':<12} {'pairs':>6} {'A score':>8} "
          f"{'Elo':>6} {'0/1/2':>17} {'var':>6} {'ratio':>6} "
          f"{'pairs@elo0':>10} {'pairs@elo1':>10} {'P(H1)@elo1':>10}")
    for rules in rulesets:
        for a, b in MATCHUPS:
            base = None
            for mode in MODES:
                points = np.array(played[(rules, a, b, mode)], dtype=np.int64)
                shares = np.bincount(points, minlength=3) / points.size
                freq = np.array([shares[0], 0.0, shares[1], 0.0, shares[2]])
                var = float(points.var())
                base = var if base is None else base
                score = float(points.mean()) / 2
                at0, _ = sprt_pairs(spec, tilt(freq, logistic_score(args.elo0)), args.runs,
                                    args.max_pairs, rng)
                at1, h1 = sprt_pairs(spec, tilt(freq, logistic_score(args.elo1)), args.runs,
                                     args.max_pairs, rng)
                elo = logistic_elo(score) if 0 < score < 1 else float("nan")
                split = "/".join(f"{s:.3f}" for s in shares)
                print(f"{rules:<8} {a + ' vs ' + b:<22} {mode:<12} {points.size:>6} "
                      f"{score:>8.3f} {elo:>6.0f} {split:>17} {var:>6.3f} "
                      f"{var / base:>6.2f} {at0:>10.0f} {at1:>10.0f} {h1:>10.3f}", flush=True)


if __name__ == "__main__":
    main()
