"""Full-stack tournament throughput vs the same games in-process.

Runs ``yard tournament run --bots random --self-play --pairs N`` (server + bot processes +
SQLite, over websockets) and ``yard play --mrx random --detectives random --games N``
(in-process arena), and prints games/s for both.

    .venv/bin/python bench/tournament.py --rules classic --games 200
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

YARD = [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="classic")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        started = time.perf_counter()
        done = subprocess.run([*YARD, "tournament", "run", "--rules", args.rules, "--bots",
                               "random", "--self-play", "--pairs", str(args.games),
                               "--concurrency", str(args.concurrency), "--db", url, "--json"],
                              capture_output=True, text=True, check=True)
        elapsed = time.perf_counter() - started
        games = json.loads(done.stdout)["games"]
    play = subprocess.run([*YARD, "play", "--rules", args.rules, "--mrx", "random",
                           "--detectives", "random", "--games", str(args.games), "--json"],
                          capture_output=True, text=True, check=True)
    in_process = json.loads(play.stdout)["games_per_s"]
    print(f"rules {args.rules}, {games} games, concurrency {args.concurrency}")
    print(f"full stack (server + bot processes + SQLite, incl. startup): "
          f"{games / elapsed:8.1f} games/s ({elapsed:.1f} s)")
    print(f"in-process arena (yard play):                                 "
          f"{in_process:8.1f} games/s")
    print(f"ratio in-process / full stack: {in_process / (games / elapsed):.0f}x")


if __name__ == "__main__":
    main()
