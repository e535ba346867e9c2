"""Tournament throughput on a local Ray instance: games/s with 1, 2, ... workers.

Each worker count plays its own copy of the same tournament (same bots, seed and pairs)
through ``tournament.cluster.ClusterRun`` (each worker: its own ``yard serve`` and
bot processes, games claimed with leases). Ray starts once with as many CPUs as the largest
worker count; the time per run includes starting its workers' processes, as a real run does.

    .venv/bin/python bench/cluster.py --workers 1,2 --pairs 60
    .venv/bin/python bench/cluster.py --workers 1,2 --pairs 5 --bots random,mcts:time=0.05
    .venv/bin/python bench/cluster.py --workers 1,4,8,16 --db postgresql+psycopg://...

Default database: a SQLite file in a temp directory (allowed: one machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# bench/server.py would shadow the server package: drop this directory from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import ray  # noqa: E402

from db.store import Database  # noqa: E402
from tournament.cluster import ClusterRun  # noqa: E402
from tournament.players import resolve_players  # noqa: E402
from tournament.ray_setup import parse_cluster  # noqa: E402
from tournament.spec import TournamentSpec, create  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="grid5")
    parser.add_argument("--bots", default="random,greedy")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--db", default=None, help="database URL (default: temp SQLite)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        db = Database.connect(url)
        ray.init(num_cpus=max(counts), include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        try:
            rows = []
            for count in counts:
                players, options, _ = resolve_players(args.bots, [], [])
                spec = TournamentSpec(rules=args.rules, bots=players, bot_options=options,
                                      pairs=args.pairs, seed=1, move_time=5.0)
                tid = create(db, spec)
                load = round(os.getloadavg()[0], 2)  # 1-minute load average (shared machine)
                started = time.perf_counter()
                report = ClusterRun(db, url, tid, parse_cluster(f"local:{max(counts)}"),
                                    workers=count, child_log=Path(tmp) / "children.log").run()
                seconds = time.perf_counter() - started
                games = report.progress.played_now
                rows.append({"workers": count, "games": games, "seconds": round(seconds, 2),
                             "games_per_s": round(games / seconds, 3),
                             "load_before_after": [load, round(os.getloadavg()[0], 2)]})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            ray.shutdown()
            db.close()
    base = rows[0]["games_per_s"]
    for row in rows:
        print(f"{row['workers']:>3} workers: {row['games_per_s']:.2f} games/s "
              f"(x{row['games_per_s'] / base:.2f})")


if __name__ == "__main__":
    main()
