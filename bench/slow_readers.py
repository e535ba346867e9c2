"""Server memory under spectators that never read: the issue-12 reproduction.

Starts ``yard serve`` from a source tree (``--tree``, default this one: pass an older
checkout to compare), one game that stays running (a bot that never moves, long move
time), then ``--hogs`` spectators that send ``watch`` for it just under the rate limit and
never read. Prints the server's RSS every ``--interval`` seconds, then again after the hogs
have closed.

    .venv/bin/python bench/slow_readers.py --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def hog(url: str, game: str, stop: asyncio.Event, dropped: list[int]) -> None:
    ws = await connect(url, proxy=None, max_queue=1, max_size=2**22)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": "hog",
                              "role": "spectator"}))
    try:
        while not stop.is_set():
            await ws.send(json.dumps({"type": "watch", "game": game}))
            await asyncio.sleep(1 / 190)  # under the default 200 messages/s
    except ConnectionClosed:
        dropped.append(1)
    ws.transport.abort()


async def main(args: argparse.Namespace) -> None:
    tree = Path(args.tree).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="yard-slow-"))
    token = secrets.token_urlsafe(32)  # the server's admin token (older trees ignore it)
    env = {**os.environ, "PYTHONPATH": str(tree), "YARD_ADMIN_TOKEN": token}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])",
        "serve", "--port", "0", "--db", f"sqlite:///{tmp / 'slow.db'}", cwd=tree, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    url = (await proc.stdout.readline()).decode().split()[-1]
    try:
        sleepy: ClientConnection = await connect(url, proxy=None, max_queue=None)
        await sleepy.send(json.dumps({"type": "hello", "protocol": 1, "name": "sleepy"}))
        admin = await connect(url, proxy=None, max_queue=None)
        await admin.send(json.dumps({"type": "hello", "protocol": 1, "name": "a",
                                     "role": "admin", "token": token}))
        await admin.recv()
        await admin.send(json.dumps({
            "type": "start_match", "rules": "classic", "mrx": "sleepy",
            "detectives": ["sleepy"], "seed": 1, "time_control": {"move_s": 3600.0}}))
        game = json.loads(await admin.recv())["game"]
        stop = asyncio.Event()
        dropped: list[int] = []
        start = time.monotonic()
        print(f"t=0 rss_mib={rss_mib(proc.pid):.1f}", flush=True)
        hogs = [asyncio.create_task(hog(url, game, stop, dropped)) for _ in range(args.hogs)]
        while time.monotonic() - start < args.seconds:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.Event().wait(), args.interval)
            print(f"t={time.monotonic() - start:.0f} rss_mib={rss_mib(proc.pid):.1f} "
                  f"dropped={len(dropped)}", flush=True)
        stop.set()
        await asyncio.gather(*hogs, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), args.interval)
        print(f"after close: rss_mib={rss_mib(proc.pid):.1f}", flush=True)
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--hogs", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
