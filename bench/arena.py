"""Arena vs engine: random games/s of ``yard play`` against the bare rules engine.

The engine loop is ``yard bench engine``'s random game (``random_game``: new game, then
``apply_unchecked(rng.choice(legal_moves()))`` to the end); the arena is what ``yard play
--mrx random --detectives random`` runs (:func:`bots.arena.play_many` with two
``RandomBot``s). Each of ``--runs`` runs plays ``--games`` games of each, in alternated
stretches of ``--chunk`` games on the same seeds (engine, arena, arena, engine, ...), after
a warm-up run; the report gives each side's median games/s and the ratio of the medians,
plus the median and range of the runs' own ratios, so a noisy machine shows up as a wide
range.

    .venv/bin/python bench/arena.py --rules classic --games 3000 --runs 7
    .venv/bin/python bench/arena.py --rules classic,grid5 --games 1000 --runs 5 --json

A copy of the repository (``git worktree add /tmp/base HEAD``) benchmarks its own code:
``.venv/bin/python /tmp/base/bench/arena.py ...``.

Rates are per CPU second of this process (``time.process_time``) unless ``--wall``: on a
shared machine the CPU time is the fairer clock; ``cpu_share`` says how much of the wall
time the process got.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The checkout this script is in, not bench/ (whose tournament.py would shadow the package):
# a copy of the repository (git worktree) benchmarks its own code.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bots.arena import play_many, random_game  # noqa: E402
from bots.simple import RandomBot  # noqa: E402
from game.rules import Ruleset, load_ruleset  # noqa: E402


def engine_run(rules: Ruleset, games: int, seed: int) -> None:
    """``games`` engine-only random games (seeds ``seed..``)."""
    for i in range(games):
        random_game(rules, seed + i)


def arena_run(rules: Ruleset, games: int, seed: int) -> None:
    """``games`` arena games between random bots, as ``yard play`` plays them."""
    play_many(rules, RandomBot(seed=seed), [RandomBot(seed=seed)], games, seed=seed)


def timed(run: Callable[[Ruleset, int, int], None], rules: Ruleset, games: int, seed: int
          ) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one call of ``run``."""
    w0, c0 = time.perf_counter(), time.process_time()
    run(rules, games, seed)
    return time.perf_counter() - w0, time.process_time() - c0


def one_run(rules: Ruleset, games: int, chunk: int, seed: int, flip: bool
            ) -> tuple[float, float, float, float]:
    """``games`` engine and ``games`` arena games in alternated chunks of ``chunk`` games
    on the same seeds (so a slow spell of the machine hits both): ``(engine wall,
    engine CPU, arena wall, arena CPU)`` seconds, summed over the chunks."""
    gc.collect()
    sums = [0.0, 0.0, 0.0, 0.0]
    for n, start in enumerate(range(seed, seed + games, chunk)):
        size = min(chunk, seed + games - start)
        order = [(engine_run, 0), (arena_run, 2)]
        for run, at in order if (n % 2 == 0) != flip else order[::-1]:
            wall, cpu = timed(run, rules, size, start)
            sums[at] += wall
            sums[at + 1] += cpu
    return sums[0], sums[1], sums[2], sums[3]


def measure(rules: Ruleset, games: int, runs: int, chunk: int, seed: int, wall: bool
            ) -> dict[str, Any]:
    """``runs`` runs of :func:`one_run`: each side's median games/s, the ratio of the
    medians, the range of the runs' own ratios and the lowest CPU share of a run."""
    one_run(rules, max(1, games // 5), chunk, seed, False)  # warm-up: tables, caches
    engine: list[float] = []
    arena: list[float] = []
    shares: list[float] = []
    for i in range(runs):
        e_wall, e_cpu, a_wall, a_cpu = one_run(rules, games, chunk, seed, i % 2 == 1)
        engine.append(games / (e_wall if wall else e_cpu))
        arena.append(games / (a_wall if wall else a_cpu))
        shares.append((e_cpu + a_cpu) / (e_wall + a_wall))
    pairs = [a / e for a, e in zip(arena, engine, strict=True)]
    med_e, med_a = statistics.median(engine), statistics.median(arena)
    return {"rules": rules.name, "games": games, "runs": runs, "chunk": chunk,
            "clock": "wall" if wall else "cpu",
            "engine_games_per_s": round(med_e, 1), "arena_games_per_s": round(med_a, 1),
            "ratio": round(med_a / med_e, 3), "median_run_ratio": round(
                statistics.median(pairs), 3),
            "run_ratio_range": [round(min(pairs), 3), round(max(pairs), 3)],
            "cpu_share": round(min(shares), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="classic", help="comma list of rulesets")
    parser.add_argument("--games", type=int, default=1000, help="games per run")
    parser.add_argument("--runs", type=int, default=7, help="runs (median)")
    parser.add_argument("--chunk", type=int, default=100,
                        help="games per engine / arena stretch within a run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wall", action="store_true", help="wall-clock rates")
    parser.add_argument("--json", action="store_true", help="one JSON line per ruleset")
    args = parser.parse_args()
    for name in args.rules.split(","):
        report = measure(load_ruleset(name), args.games, args.runs, args.chunk, args.seed,
                         args.wall)
        if args.json:
            print(json.dumps(report))
            continue
        lo, hi = report["run_ratio_range"]
        print(f"{report['rules']}: engine {report['engine_games_per_s']:,.1f} g/s, arena "
              f"{report['arena_games_per_s']:,.1f} g/s, ratio {report['ratio']:.3f} "
              f"(runs {lo:.3f}-{hi:.3f}; median of {report['runs']}, {report['games']} "
              f"games, {report['clock']} clock, min cpu share {report['cpu_share']:.0%})")


if __name__ == "__main__":
    main()
