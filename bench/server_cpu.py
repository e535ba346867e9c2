#!/usr/bin/env python3
"""Server CPU per move, as a ratio to a plain websockets JSON echo server, in one run.

Runs (one after the other, each server pinned to core 0 and its load client to core 1):

1. ``ws_echo/echo_server.py`` (websockets + stdlib json + asyncio) under ``ws_echo/load.py``
   for ``--echo-seconds``: the server's CPU per round trip;
2. ``yard serve`` (this checkout, SQLite in a temporary directory) under
   ``ws_echo/yard_load.py`` with random bots until ``--games`` games finished, ``-c`` at once:
   the server's CPU per move (storage included).

Prints one JSON line with both numbers, their ratio, the stored bytes per game and the load
average (the machine may be shared: compare ratios, not times)::

    .venv/bin/python bench/server_cpu.py -c 100 --games 300 --rules classic

``--rules grid5 -c 5000 --games 5000`` runs 5,000 games at once (the server's resident
memory is sampled: ``rss_kib_per_game`` is the peak over the idle server per running game);
``--skip-echo`` leaves out the echo server.

and the same for an older commit, side by side (run from outside that tree)::

    git archive e5b359f | tar -x -C /tmp/base
    .venv/bin/python bench/server_cpu.py -c 100 --games 300 --yard-src /tmp/base

The load clients need ``orjson`` and ``uvloop`` (both installed with yard; uvloop except on
Windows).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ECHO = HERE / "ws_echo"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early ({proc.returncode})")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit("server did not start")


def _last_json(out: str) -> dict[str, object]:
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            result: dict[str, object] = json.loads(line)
            return result
    raise SystemExit(f"no result from the load client:\n{out[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def echo_run(args: argparse.Namespace) -> dict[str, object]:
    """CPU per round trip of the websockets echo server."""
    port = _free_port()
    server = subprocess.Popen(
        ["taskset", "-c", "0", sys.executable, str(ECHO / "echo_server.py"), "--port",
         str(port), "--json", args.echo_json, "--loop", args.echo_loop, "--compression",
         "none"], stdout=subprocess.DEVNULL)
    try:
        _wait_port(port, server)
        out = subprocess.run(
            ["taskset", "-c", "1", sys.executable, str(ECHO / "load.py"), "--port", str(port),
             "--server-pid", str(server.pid), "-c", str(args.concurrent), "--duration",
             str(args.echo_seconds)], capture_output=True, text=True, check=True).stdout
    finally:
        _stop(server)
    return _last_json(out)


ADMIN_TOKEN = secrets.token_urlsafe(32)
"""The admin token of the ``yard serve`` measured (given to it and to the load client)."""


def yard_run(args: argparse.Namespace) -> dict[str, object]:
    """CPU per move of ``yard serve`` under random bots."""
    port = _free_port()
    yard = Path(sys.executable).parent / "yard"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "load.db"
        conns = 2 * args.concurrent + 64
        server = subprocess.Popen(
            ["taskset", "-c", "0", str(yard), "serve", "--port", str(port), "--db",
             f"sqlite:///{db}", "--max-connections", str(conns), "--max-per-address",
             str(conns), "--move-time", "60",
             *(["--loop", args.loop] if args.loop != "asyncio" else [])],
            env={**os.environ, "YARD_ADMIN_TOKEN": ADMIN_TOKEN,
                 **({"PYTHONPATH": args.yard_src} if args.yard_src else {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        rss = _RssPeak(server.pid)
        try:
            _wait_port(port, server)
            idle = _rss_bytes(server.pid)
            rss.start()
            out = subprocess.run(
                ["taskset", "-c", "1", sys.executable, str(ECHO / "yard_load.py"), "--port",
                 str(port), "--server-pid", str(server.pid), "-c", str(args.concurrent),
                 "--games", str(args.games), "--rules", args.rules],
                env={**os.environ, "YARD_ADMIN_TOKEN": ADMIN_TOKEN},
                capture_output=True, text=True, check=True).stdout
        finally:
            rss.stop()
            _stop(server)
        result = _last_json(out)
        result["rss_idle_mib"] = round(idle / 2**20, 1)
        result["rss_peak_mib"] = round(rss.peak / 2**20, 1)
        # Server memory per running game (its two bot connections included): the peak
        # over the idle server, divided by the games running at once.
        result["rss_kib_per_game"] = round((rss.peak - idle) / 1024 / args.concurrent, 1)
        result["db_bytes_per_game"] = round(os.path.getsize(db) / max(args.games, 1))
        result["stored_bytes_per_game"] = _stored_bytes(db)
        return result


def _rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` (VmRSS)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class _RssPeak(threading.Thread):
    """Samples a process's resident memory every 0.1 s; ``peak`` is the largest seen."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.1):
            try:
                self.peak = max(self.peak, _rss_bytes(self.pid))
            except OSError:
                return

    def stop(self) -> None:
        self._done.set()
        if self.is_alive():
            self.join()


def _stored_bytes(db: Path) -> float | None:
    """Mean bytes of the stored game payload columns per game (what the records weigh)."""
    import sqlite3

    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total = 0
        for table in tables:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            for col in cols:
                total += con.execute(
                    f"SELECT COALESCE(SUM(LENGTH({col})), 0) FROM {table}").fetchone()[0]
        games = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return round(total / games) if games else None
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-c", "--concurrent", type=int, default=100)
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--rules", default="classic")
    ap.add_argument("--echo-seconds", type=float, default=8.0)
    ap.add_argument("--echo-json", default="stdlib", choices=["stdlib", "orjson"])
    ap.add_argument("--echo-loop", default="asyncio", choices=["asyncio", "uvloop"])
    ap.add_argument("--skip-echo", action="store_true")
    ap.add_argument("--loop", default="asyncio", choices=["auto", "asyncio", "uvloop"],
                    help="yard serve's event loop")
    ap.add_argument("--yard-src", default="",
                    help="run yard serve from this source tree (PYTHONPATH; e.g. an older "
                         "commit unpacked with git archive) to compare")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    echo = None if args.skip_echo else echo_run(args)
    yard = yard_run(args)
    echo_us = echo.get("server_us_per_rt") if echo else None
    yard_us = yard.get("server_us_per_move")
    keys = ("moves", "games", "server_us_per_move", "out_frames_per_move", "rtt_p99_ms",
            "errors", "db_bytes_per_game", "stored_bytes_per_game", "conn_lost",
            "rss_idle_mib", "rss_peak_mib", "rss_kib_per_game")
    print(json.dumps({
        "concurrent": args.concurrent, "rules": args.rules, "loop": args.loop,
        "yard_src": args.yard_src or "this checkout", "games": args.games,
        "loadavg_before": round(load0, 2), "loadavg_after": round(os.getloadavg()[0], 2),
        "echo_us_per_rt": echo_us, "yard_us_per_move": yard_us,
        "ratio": round(float(yard_us) / float(echo_us), 2)  # type: ignore[arg-type]
        if echo_us and yard_us else None,
        "echo": echo, "yard": {k: yard.get(k) for k in keys} | {"all": yard}}))


if __name__ == "__main__":
    main()
