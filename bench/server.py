"""Server throughput: moves/s and move round-trip percentiles with N concurrent games.

Starts ``yard serve`` as a subprocess (SQLite in a temp dir, so storage is included), then
plays ``--games`` games of random bots over loopback, ``--concurrent`` at a time, from
``--clients`` raw protocol clients in this process. Round trip = ``move`` sent ->
``move_ok`` received, measured by the client.

    .venv/bin/python bench/server.py --games 300 --concurrent 100 --rules classic
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This file is named like the `server` package; keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from protocol import StartMatch, TimeControl  # noqa: E402
from protocol.tokens import new_token  # noqa: E402
from server.admin import AdminClient  # noqa: E402
from tournament.processes import start_server  # noqa: E402

ADMIN_TOKEN = new_token()
"""The admin token of the server this benchmark starts."""


class RandomClient:
    """A raw-JSON random bot that records move round trips."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        self.rng = rng
        self.sent: dict[tuple[str, int], float] = {}
        self.rtts: list[float] = []
        self.ws: ClientConnection | None = None

    async def run(self, url: str, ready: asyncio.Event) -> None:
        async with connect(url, proxy=None, compression=None, max_size=2**22,
                           max_queue=None) as ws:
            self.ws = ws
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": self.name}))
            async for frame in ws:
                msg: dict[str, Any] = json.loads(frame)
                if msg["type"] == "welcome":
                    ready.set()
                elif msg["type"] == "your_turn":
                    key = (msg["game"], msg["turn"])
                    self.sent[key] = time.perf_counter()
                    await ws.send(json.dumps({"type": "move", "game": msg["game"],
                                              "turn": msg["turn"],
                                              "move": self.rng.choice(msg["legal"])}))
                elif msg["type"] == "move_ok":
                    started = self.sent.pop((msg["game"], msg["turn"]), None)
                    if started is not None:
                        self.rtts.append(time.perf_counter() - started)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server, url = await start_server(f"sqlite:///{Path(tmp) / 'bench.db'}",
                                         admin_token=ADMIN_TOKEN)
        try:
            return await _play(args, url)
        finally:
            await server.stop()


async def _play(args: argparse.Namespace, url: str) -> dict[str, Any]:
    clients = [RandomClient(f"random-{i}", random.Random(i)) for i in range(args.clients)]
    tasks = []
    for client in clients:
        ready = asyncio.Event()
        tasks.append(asyncio.create_task(client.run(url, ready)))
        await ready.wait()
    moves = 0
    started = time.perf_counter()
    async with AdminClient(url, ADMIN_TOKEN) as admin:
        gate = asyncio.Semaphore(args.concurrent)

        async def one(i: int) -> int:
            async with gate:
                mrx, det = clients[i % len(clients)], clients[(i + 1) % len(clients)]
                game = await admin.start_match(StartMatch(
                    args.rules, mrx.name, [det.name], seed=i,
                    time_control=TimeControl(30.0)))
                result = await admin.result(game)
                return result.moves

        rounds = await asyncio.gather(*(one(i) for i in range(args.games)))
    elapsed = time.perf_counter() - started
    rtts = sorted(r for c in clients for r in c.rtts)
    moves = len(rtts)
    for task in tasks:
        task.cancel()
    return {"games": args.games, "concurrent": args.concurrent, "rules": args.rules,
            "clients": args.clients, "seconds": round(elapsed, 2), "moves": moves,
            "mean_rounds": round(statistics.fmean(rounds), 1),
            "moves_per_s": round(moves / elapsed, 1),
            "rtt_p50_ms": round(1000 * rtts[len(rtts) // 2], 2),
            "rtt_p99_ms": round(1000 * rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rules", default="classic")
    print(json.dumps(asyncio.run(bench(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
