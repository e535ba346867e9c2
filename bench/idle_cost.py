#!/usr/bin/env python3
"""What a ladder server costs with nobody connected: CPU and database growth per hour.

Starts ``yard serve`` (this checkout) with the README's ladder command on a fresh SQLite
database (default: ``--ladder grid5,classic --accounts --open-registration --house random
--house greedy``; other arguments after ``--``), waits until every house bot is on the
ladder and ``--warm-up`` seconds more, then measures for ``--seconds``: the CPU time of the
server and its house bot processes (from /proc, so Linux only; a shared machine's load does
not count), the database's growth (the file and its WAL) and the games stored; then the
database's size per game once vacuumed. Prints one JSON line::

    .venv/bin/python bench/idle_cost.py --seconds 300
    .venv/bin/python bench/idle_cost.py --seconds 300 -- --ladder grid5 --house random \\
        --house greedy --house-rate 0
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

README_LADDER = ["--ladder", "grid5,classic", "--accounts", "--open-registration",
                 "--house", "random", "--house", "greedy"]
TICKS = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """``pid`` and every live descendant."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of ``pid``'s process tree so far (exited children
    included once waited for)."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _games(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return int(db.execute("select count(*) from games").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="Measured seconds.")
    parser.add_argument("--warm-up", type=float, default=30.0,
                        help="Seconds after the house bots connected before measuring.")
    parser.add_argument("serve_args", nargs="*", help="yard serve's arguments (after --).")
    args = parser.parse_args()
    serve_args = args.serve_args or README_LADDER
    with tempfile.TemporaryDirectory(prefix="yard-idle-") as tmp:
        folder = Path(tmp)
        db, ready = folder / "yard.db", folder / "ready"
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])",
             "serve", "--port", "0", "--db", f"sqlite:///{db}", "--ready-file", str(ready),
             "--admin-token-file", str(folder / "admin"), *serve_args],
            stdout=subprocess.DEVNULL, stderr=(folder / "server.log").open("wb"))
        try:
            houses = serve_args.count("--house")
            while not ready.exists():
                if proc.poll() is not None:
                    raise SystemExit((folder / "server.log").read_text()[-2000:])
                time.sleep(0.2)
            url = ready.read_text().strip().replace("ws://", "http://") + "/api/ladder"
            while True:
                with urllib.request.urlopen(url, timeout=10) as reply:
                    ladders = json.load(reply)["ladders"]
                if all(sum(r["connected"] for r in rows) >= houses
                       for rows in ladders.values()):
                    break
                time.sleep(0.5)
            time.sleep(args.warm_up)
            cpu0, bytes0, games0, t0 = _cpu_s(proc.pid), _db_bytes(db), _games(db), \
                time.monotonic()
            time.sleep(args.seconds)
            cpu1, bytes1, games1, t1 = _cpu_s(proc.pid), _db_bytes(db), _games(db), \
                time.monotonic()
        finally:
            proc.terminate()
            proc.wait(30)
        with sqlite3.connect(db) as conn:  # the games' share of the file, WAL folded in
            conn.execute("pragma wal_checkpoint(truncate)")
            conn.execute("vacuum")
        stored = db.stat().st_size
        hours = (t1 - t0) / 3600
        games = games1 - games0
        print(json.dumps({
            "serve_args": serve_args, "seconds": round(t1 - t0, 1),
            "cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
            "games_per_hour": round(games / hours, 1),
            "db_bytes_per_hour": round((bytes1 - bytes0) / hours),
            "games_stored": _games(db),
            "db_bytes_per_game": round(stored / _games(db)) if games1 else None,
            "db_mib_per_day_at_that_rate": round(
                24 * games / hours * (stored / _games(db) if games1 else 0) / 2**20, 1),
            "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
