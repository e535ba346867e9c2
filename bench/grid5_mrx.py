"""grid5 Mister X candidates against the detectives of the Brno thesis (issue 14 targets).

    .venv/bin/python bench/grid5_mrx.py --mrx dqn "mcts:profile=tuned,iterations=1000,time=0" \\
        --detectives random "alphabeta:depth=4,time=0" --games 1000 --seed 100000 --workers 2

Each pairing is one ``yard reproduce``-style cell (game i uses seed ``seed + i``, bots reseeded
per game, chunks merged exactly), so any row can be rerun or extended in chunks. Prints one
JSON line per pairing: Mister X's and the detectives' win rates with 95% Wilson intervals.
"""

from __future__ import annotations

import argparse
import json

from yard.reproduce.model import Cell, Experiment
from yard.reproduce.runner import run_experiment


def main() -> None:
    """Parse arguments, play every Mister X against every detective team, print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mrx", nargs="+", required=True, help="Mister X bot specs")
    parser.add_argument("--detectives", nargs="+", required=True, help="detective bot specs")
    parser.add_argument("--rules", default="grid5")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    for mrx in args.mrx:
        for det in args.detectives:
            cell = Cell("pairing", f"{mrx} vs {det}", args.rules, mrx, (det,), "mrx",
                        args.games, args.games, subject="mrx")
            report = run_experiment(Experiment("grid5-mrx", "grid5 Mister X", "", (cell,)),
                                    games=args.games, seed=args.seed, workers=args.workers)
            row = report["cells"][0]
            lo, hi = row["ci95"]
            print(json.dumps({"rules": args.rules, "mrx": mrx, "detectives": det,
                              "games": row["n"], "seeds": row["seeds"],
                              "mrx_win": round(row["rate"], 4),
                              "mrx_ci95": [round(lo, 4), round(hi, 4)],
                              "det_win": round(row["detective_wins"] / row["n"], 4),
                              "det_ci95": [round(1 - hi, 4), round(1 - lo, 4)],
                              "cpu_seconds": row["cpu_seconds"]}), flush=True)


if __name__ == "__main__":
    main()
