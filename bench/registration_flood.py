"""A registered bot's login time while one address floods the server with registrations:
the issue-40 reproduction (one address made 346 accounts in 121 s; a registered bot's
``hello``->``welcome`` went from 101 ms to 1.8 s median).

Starts ``yard serve --accounts --open-registration`` from a source tree (``--tree``,
default this one: pass an older checkout to compare), adds the account ``steady``, then
times its logins (``hello`` with its token, until ``welcome``; one every 0.1 s for
``--seconds``): first on an idle server, then while ``--flooders`` connections from this
address register new names as fast as the server answers. ``--unbounded`` lifts this
tree's registration bounds (per address, in all, in flight) to show what the separate
registration thread does alone.

Measured on the 2-core development machine (shared), 20 s per phase, 8 flooders: before
issue 40 (``--tree`` of that checkout) idle median 2.6 ms, flood median 720 ms (p90 930
ms, max 2.1 s; 185 accounts made); now with the default bounds idle 4.6 ms, flood 17.8 ms
(p90 36 ms; 10 accounts made, 7,694 refused: the cost left is the refused connections'
handshakes); ``--unbounded`` idle 2.1 ms, flood 5.1 ms (p90 13 ms; 276 accounts made).

    .venv/bin/python bench/registration_flood.py
    .venv/bin/python bench/registration_flood.py --unbounded
    .venv/bin/python bench/registration_flood.py --tree ../older-yard
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

YARD = ("-c", "import sys; from yard.cli import main; main(sys.argv[1:])")


async def login(url: str, token: str) -> float:
    """Seconds from sending ``hello`` to receiving ``welcome``."""
    async with connect(url, proxy=None) as ws:
        start = time.perf_counter()
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": "steady",
                                  "token": token}))
        reply = json.loads(await ws.recv())
        took = time.perf_counter() - start
    assert reply["type"] == "welcome", reply
    return took


async def logins(url: str, token: str, seconds: float) -> list[float]:
    """Login times, one login every 0.1 s for ``seconds``."""
    end = time.monotonic() + seconds
    times = []
    while time.monotonic() < end:
        times.append(await login(url, token))
        await asyncio.sleep(0.1)
    return times


async def flooder(url: str, stop: asyncio.Event, counts: dict[str, int]) -> None:
    """Register new names, one connection at a time, until ``stop``."""
    while not stop.is_set():
        name = f"flood-{secrets.token_hex(6)}"
        try:
            async with connect(url, proxy=None) as ws:
                await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name,
                                          "register": True}))
                reply = json.loads(await ws.recv())
        except OSError:
            counts["failed"] += 1
            continue
        key = "made" if reply["type"] == "welcome" else reply.get("code", "error")
        counts[key] = counts.get(key, 0) + 1


def summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return (f"median {statistics.median(ms):.1f} ms, p90 {ms[int(0.9 * (len(ms) - 1))]:.1f} "
            f"ms, max {ms[-1]:.1f} ms ({len(ms)} logins)")


async def main(args: argparse.Namespace) -> None:
    tree = Path(args.tree).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="yard-regflood-"))
    db = f"sqlite:///{tmp / 'flood.db'}"
    env = {**os.environ, "PYTHONPATH": str(tree), "YARD_ADMIN_TOKEN": secrets.token_urlsafe(24)}
    token = subprocess.run([sys.executable, *YARD, "accounts", "add", "steady", "--db", db],
                           cwd=tree, env=env, check=True, capture_output=True,
                           text=True).stdout.split()[-1]
    bounds = (["--registrations-per-address", "1000000", "--registrations-total", "1000000",
               "--registration-queue", "1000000"] if args.unbounded else [])
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *YARD, "serve", "--port", "0", "--db", db, "--accounts",
        "--open-registration", *bounds, "--admin-token-file", str(tmp / "admin"), cwd=tree,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    url = (await proc.stdout.readline()).decode().split()[-1]
    try:
        idle = await logins(url, token, args.seconds)
        print(f"idle:  {summary(idle)}")
        stop = asyncio.Event()
        counts: dict[str, int] = {"made": 0, "failed": 0}
        tasks = [asyncio.create_task(flooder(url, stop, counts)) for _ in range(args.flooders)]
        await asyncio.sleep(1.0)  # the flood under way
        start = time.monotonic()
        flooded = await logins(url, token, args.seconds)
        seconds = time.monotonic() - start
        stop.set()
        await asyncio.gather(*tasks)
        print(f"flood: {summary(flooded)}")
        refused = {k: v for k, v in counts.items() if k not in ("made", "failed") and v}
        print(f"flood: {counts['made']} accounts made, refused {refused or 'none'} "
              f"({args.flooders} connections, {seconds:.1f} s)")
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parents[1]),
                        help="source tree of the server to measure (default: this one)")
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="how long each phase (idle, flood) logs in")
    parser.add_argument("--flooders", type=int, default=8)
    parser.add_argument("--unbounded", action="store_true",
                        help="lift the registration bounds (this tree's flags)")
    asyncio.run(main(parser.parse_args()))
