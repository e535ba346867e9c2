"""Full-stack tournament throughput vs the same games in-process.

Runs ``yard tournament run --bots random --self-play --pairs N`` (server + bot processes +
SQLite, over websockets) and ``yard play --mrx random --detectives random --games N``
(in-process arena), and prints games/s for both. The full stack's time is split into
start-up (server and bot processes, until the first game starts) and play (first game
started to last game finished, from the stored games), so the ratio once started is
reported apart from the one including start-up.

    .venv/bin/python bench/tournament.py --rules classic --games 200
    .venv/bin/python bench/tournament.py --rules grid5 --games 1000 --concurrency 2 --json
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        cpu0 = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run([*YARD, "tournament", "run", "--rules", args.rules, "--bots",
                               "random", "--self-play", "--pairs", str(args.games),
                               "--concurrency", str(args.concurrency), "--db", url, "--json"],
                              capture_output=True, text=True, check=True)
        elapsed = time.perf_counter() - started
        games = json.loads(done.stdout)["games"]
        cpu = _children_cpu() - cpu0  # runner, server and bot processes, start-up included
        playing, moves = _play_seconds(Path(tmp) / "bench.db")
    play = subprocess.run([*YARD, "play", "--rules", args.rules, "--mrx", "random",
                           "--detectives", "random", "--games", str(args.games), "--json"],
                          capture_output=True, text=True, check=True)
    in_process = json.loads(play.stdout)["games_per_s"]
    full, once = games / elapsed, games / playing
    if args.json:
        print(json.dumps({
            "rules": args.rules, "games": games, "concurrency": args.concurrency,
            "loadavg": round(os.getloadavg()[0], 2), "total_s": round(elapsed, 2),
            "startup_s": round(elapsed - playing, 2), "play_s": round(playing, 2),
            "full_stack_games_per_s": round(full, 1),
            "full_stack_games_per_s_once_started": round(once, 1),
            "in_process_games_per_s": round(in_process, 1), "moves": moves,
            "full_stack_cpu_us_per_move": round(1e6 * cpu / moves, 1),
            "ratio_once_started": round(once / in_process, 4),
            "ratio_incl_startup": round(full / in_process, 4)}))
        return
    print(f"rules {args.rules}, {games} games, concurrency {args.concurrency}")
    print(f"full stack (server + bot processes + SQLite, incl. startup): "
          f"{games / elapsed:8.1f} games/s ({elapsed:.1f} s)")
    print(f"in-process arena (yard play):                                 "
          f"{in_process:8.1f} games/s")
    print(f"  of which start-up {elapsed - playing:.1f} s; once started: {once:8.1f} games/s")
    print(f"ratio in-process / full stack: {in_process / full:.0f}x "
          f"({in_process / once:.0f}x once started)")


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (and theirs)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _play_seconds(db: Path) -> tuple[float, int]:
    """First game's start to last game's finish, from the stored games; and the moves
    played (every seat's, from the turns table)."""
    import sqlite3
    from datetime import datetime

    con = sqlite3.connect(db)
    try:
        first, last = con.execute(
            "SELECT MIN(started_at), MAX(finished_at) FROM games").fetchone()
        moves = con.execute("SELECT COUNT(*) FROM turns WHERE move IS NOT NULL").fetchone()[0]
    finally:
        con.close()
    seconds = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    return seconds, int(moves)


if __name__ == "__main__":
    main()
