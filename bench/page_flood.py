"""Bots' move times while the pages are flooded from 8 addresses (issue 40.5).

    taskset -c 0,1 .venv/bin/python bench/page_flood.py --seconds 30

Starts ``yard serve --ladder grid5`` pinned to CPU ``--server-cpu`` (0) and ``--bots``
ladder bots (a process of their own, pinned to ``--client-cpu``, 1) that answer each
``your_turn`` at once with a random legal move; a move's time is from sending ``move`` to
receiving its ``move_ok`` (the server's work and its event loop's delay, not the bot's).
First ``--seconds`` without a flood, then as long with a flood: ``--threads`` threads per
source address 127.0.0.2-9 asking ``/api`` pages in turn, each on a new connection, as fast
as they are answered (its own process, on ``--client-cpu`` under ``nice 10`` so that the bots
are not slowed by it). Prints p50, p99 and max move times per phase, the flood's answers
per HTTP status, and the load average (the machine may be shared), as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
YARD = ("-c", "import sys; from yard.cli import main; main(sys.argv[1:])")
PAGES = ("/api/games?limit=50", "/api/leaderboard", "/api/live", "/api/tournaments",
         "/api/ladder", "/api/games?limit=200", "/api/matrix?rules=grid5")


async def bots(url: str, count: int, seconds: float, flood_after: float) -> dict[str, Any]:
    """``count`` bots playing for ``flood_after + seconds``; move times before and after
    ``flood_after`` seconds."""
    from websockets.asyncio.client import connect

    start = time.monotonic()
    times: dict[str, list[float]] = {"idle": [], "flood": []}

    async def bot(i: int) -> None:
        rng = random.Random(i)
        sent: dict[tuple[str, int], float] = {}
        async with connect(url, proxy=None, max_size=2**22) as ws:
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": f"steady-{i}",
                                      "ladder": ["grid5"], "max_games": 2}))
            while time.monotonic() < start + flood_after + seconds:
                try:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 1.0))
                except TimeoutError:
                    continue
                if frame["type"] == "your_turn":
                    sent[(frame["game"], frame["turn"])] = time.monotonic()
                    await ws.send(json.dumps({"type": "move", "game": frame["game"],
                                              "turn": frame["turn"], "seat": frame["seat"],
                                              "move": rng.choice(frame["legal"])}))
                elif frame["type"] == "move_ok":
                    t0 = sent.pop((frame["game"], frame["turn"]), None)
                    now = time.monotonic()
                    if t0 is not None and now - start > 3.0:  # past the first pairings
                        phase = "idle" if now - start < flood_after else "flood"
                        times[phase].append(now - t0)

    await asyncio.gather(*(bot(i) for i in range(count)))
    return times


def flood(base: str, seconds: float, addresses: int, threads_per: int) -> None:
    """Ask ``/api`` pages from 127.0.0.2.. (``addresses`` of them, ``threads_per`` threads
    each) for ``seconds``; print the answers per status as JSON."""
    port = int(base.rsplit(":", 1)[1].split("/")[0])
    counts: Counter[int] = Counter()
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(k: int) -> None:
        i = k
        while time.monotonic() < stop:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                              source_address=(f"127.0.0.{2 + k % addresses}",
                                                              0))
            try:
                conn.request("GET", PAGES[i % len(PAGES)])
                response = conn.getresponse()
                response.read()
                status = response.status
            except OSError:
                status = 0
            finally:
                conn.close()
            i += 1
            with lock:
                counts[status] += 1

    threads = [threading.Thread(target=worker, args=(k,))
               for k in range(addresses * threads_per)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({str(k): v for k, v in sorted(counts.items())}), flush=True)


def summary(times: list[float]) -> dict[str, float]:
    ms = sorted(t * 1000 for t in times)
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50": round(ms[len(ms) // 2], 2),
            "p99": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 2),
            "max": round(ms[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="per phase")
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--addresses", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="flood threads per address")
    parser.add_argument("--server-cpu", default="0")
    parser.add_argument("--client-cpu", default="1")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--flood", help=argparse.SUPPRESS)  # the flood process: its URL
    parser.add_argument("--bots-of", help=argparse.SUPPRESS)  # the bots' process: its URL
    args = parser.parse_args()
    if args.flood:
        flood(args.flood, args.seconds, args.addresses, args.threads)
        return
    if args.bots_of:
        times = asyncio.run(bots(args.bots_of, args.bots, args.seconds, args.seconds))
        print(json.dumps(times))
        return
    tmp = Path(tempfile.mkdtemp(prefix="yard-pageflood-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "YARD_ADMIN_TOKEN": secrets.token_urlsafe(24)}
    server = subprocess.Popen(
        ["taskset", "-c", args.server_cpu, sys.executable, *YARD, "serve", "--port", "0",
         "--db", f"sqlite:///{tmp / 'flood.db'}", "--ladder", "grid5",
         "--admin-token-file", str(tmp / "admin")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split()[-1]
    me = [sys.executable, str(Path(__file__).resolve()), "--seconds", str(args.seconds),
          "--bots", str(args.bots), "--addresses", str(args.addresses), "--threads",
          str(args.threads)]
    try:
        player = subprocess.Popen(["taskset", "-c", args.client_cpu, *me, "--bots-of", url],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        time.sleep(args.seconds)
        flooder = subprocess.run(["taskset", "-c", args.client_cpu, "nice", "-n", "10", *me,
                                  "--flood", url.replace("ws://", "http://")],
                                 cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        load = os.getloadavg()
        out, _ = player.communicate(timeout=120)
    finally:
        server.terminate()
        server.wait()
    times = json.loads(out)
    report = {"bots": args.bots, "seconds": args.seconds, "addresses": args.addresses,
              "threads_per_address": args.threads,
              "idle_ms": summary(times["idle"]), "flood_ms": summary(times["flood"]),
              "flood_answers": json.loads(flooder.stdout.strip().splitlines()[-1]),
              "loadavg": [round(x, 2) for x in load]}
    if not args.json:
        print(f"idle:  {report['idle_ms']}\nflood: {report['flood_ms']}\nanswers "
              f"{report['flood_answers']}; load {report['loadavg']}", file=sys.stderr)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
