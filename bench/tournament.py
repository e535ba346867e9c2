"""Full-stack tournament throughput vs the same games in-process.

Runs ``yard tournament run --bots random --self-play --pairs N`` (runner and its match
server + bot processes + SQLite, over websockets) and ``yard play --mrx random
--detectives random --games N`` (in-process arena), and prints games/s for both. The full
stack's time is split into start-up (server and bot processes, until the first game
starts) and play (first game started to last game finished, from the stored games), so the
ratio once started is reported apart from the one including start-up.

    .venv/bin/python bench/tournament.py --rules classic --games 200
    .venv/bin/python bench/tournament.py --rules grid5 --games 1000 --concurrency 2 --json

With ``--processes`` (Linux) it also samples ``/proc`` every 20 ms and splits the CPU by
process kind (the runner with the match server it hosts, ``yard bots --json``, the bot
processes; ``server`` only for a runner that still starts ``yard serve``) into
start-up (until the first game started), play (until the last game finished; CPU µs per
move) and after (report, shutdown): the ``cpu_by_process`` key of ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

YARD = [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="classic")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--processes", action="store_true",
                        help="split the CPU by process and start-up/play (samples /proc)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        cpu0 = _children_cpu()
        started = time.perf_counter()
        proc = subprocess.Popen([*YARD, "tournament", "run", "--rules", args.rules, "--bots",
                                 "random", "--self-play", "--pairs", str(args.games),
                                 "--concurrency", str(args.concurrency), "--db", url,
                                 "--json"], stdout=subprocess.PIPE, text=True)
        sampler = _Sampler(proc.pid) if args.processes else None
        out, _ = proc.communicate()
        elapsed = time.perf_counter() - started
        if sampler is not None:
            sampler.stop()
        if proc.returncode:
            raise SystemExit(f"yard tournament run failed (exit {proc.returncode})")
        games = json.loads(out)["games"]
        cpu = _children_cpu() - cpu0  # runner, server and bot processes, start-up included
        playing, moves = _play_seconds(Path(tmp) / "bench.db")
        by_process = None if sampler is None else sampler.split(
            *_play_span(Path(tmp) / "bench.db"), moves)
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
            "ratio_incl_startup": round(full / in_process, 4),
            **({} if by_process is None else {"cpu_by_process": by_process})}))
        return
    print(f"rules {args.rules}, {games} games, concurrency {args.concurrency}")
    print(f"full stack (server + bot processes + SQLite, incl. startup): "
          f"{games / elapsed:8.1f} games/s ({elapsed:.1f} s)")
    print(f"in-process arena (yard play):                                 "
          f"{in_process:8.1f} games/s")
    print(f"  of which start-up {elapsed - playing:.1f} s; once started: {once:8.1f} games/s")
    print(f"ratio in-process / full stack: {in_process / full:.0f}x "
          f"({in_process / once:.0f}x once started)")
    for kind, row in (by_process or {}).items():
        print(f"  {kind:<12} x{row['processes']}: start-up {row['startup_cpu_s']:.2f} CPU s, "
              f"play {row['play_cpu_us_per_move']:.0f} CPU µs/move")


KINDS = (("tournament run", "runner"), ("bots --json", "bots-json"), ("serve", "server"),
         ("bot random", "bot"))
"""Process kinds by a piece of their command line."""


class _Sampler:
    """Samples the CPU time of ``root``'s descendants from ``/proc`` in a thread."""

    def __init__(self, root: int, period: float = 0.02) -> None:
        self.root = root
        self.period = period
        self.ticks = os.sysconf("SC_CLK_TCK")
        #: pid -> kind, and (wall time, CPU seconds) samples per pid.
        self.kinds: dict[int, str] = {}
        self.samples: dict[int, list[tuple[float, float]]] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._done.is_set():
            self._sample()
            self._done.wait(self.period)

    def _sample(self) -> None:
        stats: dict[int, tuple[int, float]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            rest = stat[stat.rindex(")") + 2:].split()
            stats[int(name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / self.ticks)
        family, grew = {self.root}, True
        while grew:
            grew = False
            for pid, (parent, _) in stats.items():
                if parent in family and pid not in family:
                    family.add(pid)
                    grew = True
        now = time.time()
        for pid in family:
            if pid not in stats:
                continue
            if pid not in self.kinds or (pid != self.root
                                         and self.kinds[pid] in ("runner", "other")):
                self.kinds[pid] = self._kind(pid)  # a child not yet exec'd looks like us
            self.samples.setdefault(pid, []).append((now, stats[pid][1]))

    @staticmethod
    def _kind(pid: int) -> str:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "other"
        return next((kind for piece, kind in KINDS if piece in cmd), "other")

    def split(self, first_start: float, last_finish: float,
              moves: int) -> dict[str, dict[str, Any]]:
        """Per kind: processes, CPU seconds until ``first_start`` (a wall time), CPU µs per
        move from then to ``last_finish``, and CPU seconds after it (report, shutdown; the
        last sample of a process that exited is its total)."""
        out: dict[str, dict[str, Any]] = {}
        for pid, samples in self.samples.items():
            before = max((cpu for t, cpu in samples if t <= first_start), default=0.0)
            until = max((cpu for t, cpu in samples if t <= last_finish), default=0.0)
            row = out.setdefault(self.kinds[pid], {"processes": 0, "startup_cpu_s": 0.0,
                                                   "play_cpu_s": 0.0, "after_cpu_s": 0.0})
            row["processes"] += 1
            row["startup_cpu_s"] += before
            row["play_cpu_s"] += max(0.0, until - before)
            row["after_cpu_s"] += samples[-1][1] - max(until, before)
        for row in out.values():
            row["play_cpu_us_per_move"] = round(1e6 * row["play_cpu_s"] / max(1, moves), 1)
            for key in ("startup_cpu_s", "play_cpu_s", "after_cpu_s"):
                row[key] = round(row[key], 3)
        return out


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (and theirs)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _play_span(db: Path) -> tuple[float, float]:
    """Wall times (seconds since the epoch) the first stored game started and the last
    one finished."""
    import sqlite3
    from datetime import UTC, datetime

    con = sqlite3.connect(db)
    try:
        span = con.execute("SELECT MIN(started_at), MAX(finished_at) FROM games").fetchone()
    finally:
        con.close()
    whens = [datetime.fromisoformat(text) for text in span]
    first, last = ((w if w.tzinfo else w.replace(tzinfo=UTC)).timestamp() for w in whens)
    return first, last


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
