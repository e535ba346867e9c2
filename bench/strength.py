"""Strength of two bots in role-swapped pairs on the in-process arena, with 95% intervals.

    .venv/bin/python bench/strength.py --rules grid5 --pairs 500 \\
        --a "mcts:iterations=200,profile=tuned" --b "greedy" --seed 1 --jobs 1
    .venv/bin/python bench/strength.py ... --jobs 16 --cluster auto   # chunks on Ray

Pair ``i`` uses game seed ``seed + i`` twice: A as Mister X against B's detectives, then B
as Mister X against A's detectives. A bot spec is ``name`` or ``name:key=value,...``
(the grammar of ``bots/spec.py``). Prints one JSON line: A's overall score and per-role
win rates, each with a Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# The checkout this script is in, not bench/ (whose records.py, server.py and tournament.py
# would shadow those packages): a copy of the repository benchmarks its own code, and
# scripts import each other as ``bench.NAME``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bots.arena import play_game, wilson_interval  # noqa: E402
from bots.base import Bot  # noqa: E402
from bots.registry import bot_from_spec  # noqa: E402
from game import Winner, YardError, load_ruleset  # noqa: E402


def make(spec: str, seed: int) -> Bot:
    """A bot from a bot spec, ``name:key=value,...`` (see ``bots/spec.py``)."""
    return bot_from_spec(spec, seed)


def play_pair(rules_name: str, a: str, b: str, seed: int) -> tuple[bool, bool, int]:
    """(A won as Mister X, A won as detectives, plies played) for one seed."""
    rules = load_ruleset(rules_name)
    first = play_game(rules, make(a, seed), [make(b, seed + 1)], seed)
    second = play_game(rules, make(b, seed), [make(a, seed + 1)], seed)
    plies = len(first.moves) + len(second.moves)
    return (first.outcome.winner is Winner.MRX,
            second.outcome.winner is Winner.DETECTIVES, plies)


def _chunk(args: tuple[str, str, str, list[int]]) -> list[tuple[bool, bool, int]]:
    rules_name, a, b, seeds = args
    return [play_pair(rules_name, a, b, s) for s in seeds]


def run(rules_name: str, a: str, b: str, pairs: int, seed: int, jobs: int,
        cluster: str | None = None) -> dict[str, Any]:
    """Play ``pairs`` role-swapped pairs and summarise A's results (``cluster``: split the
    seeds over ``jobs`` Ray tasks, one CPU each, merged as the process chunks are)."""
    seeds = [seed + i for i in range(pairs)]
    started = time.perf_counter()
    if cluster is not None:
        parts = [(rules_name, a, b, seeds[i::max(1, jobs)]) for i in range(max(1, jobs))]
        results = [r for part in _on_cluster(cluster, parts) for r in part]
    elif jobs <= 1:
        results = _chunk((rules_name, a, b, seeds))
    else:
        parts = [(rules_name, a, b, seeds[i::jobs]) for i in range(jobs)]
        with ProcessPoolExecutor(jobs) as pool:
            results = [r for part in pool.map(_chunk, parts) for r in part]
    as_mrx = sum(r[0] for r in results)
    as_det = sum(r[1] for r in results)
    total = as_mrx + as_det

    def rate(wins: int, n: int) -> list[float]:
        lo, hi = wilson_interval(wins, n)
        return [round(wins / n, 3), round(lo, 3), round(hi, 3)]

    return {"rules": rules_name, "a": a, "b": b, "pairs": pairs, "seed": seed,
            "a_score": rate(total, 2 * pairs), "a_as_mrx": rate(as_mrx, pairs),
            "a_as_detectives": rate(as_det, pairs),
            "a_wins_as_mrx": as_mrx, "a_wins_as_detectives": as_det,
            "mean_plies": round(sum(r[2] for r in results) / (2 * pairs), 1),
            "seconds": round(time.perf_counter() - started, 1)}


def _on_cluster(address: str, parts: list[tuple[str, str, str, list[int]]]
                ) -> list[list[tuple[bool, bool, int]]]:
    """Each chunk as a one-CPU Ray task (``auto``, ``ray://HOST:PORT`` or ``local[:N]``)."""
    from bench.on_cluster import map_on_cluster

    return map_on_cluster(address, _chunk, parts)


def main() -> None:
    """Parse arguments, run, print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="grid5")
    parser.add_argument("--a", required=True, help="bot spec, e.g. mcts:iterations=200")
    parser.add_argument("--b", required=True)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes, or with --cluster Ray tasks (seed chunks)")
    parser.add_argument("--cluster", default=None,
                        help="run the chunks on Ray: auto, ray://HOST:PORT or local[:N]")
    args = parser.parse_args()
    if args.cluster is not None:
        from bench.on_cluster import local_cpus

        try:
            local_cpus(args.cluster)
        except YardError as exc:
            parser.error(str(exc))
    print(json.dumps(run(args.rules, args.a, args.b, args.pairs, args.seed, args.jobs,
                         args.cluster)), flush=True)


if __name__ == "__main__":
    main()
