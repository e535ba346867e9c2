"""Soak test: normal games and hostile traffic against one ``yard serve`` for a long time.

Starts ``yard serve`` as a subprocess (SQLite in a temp dir, its log in a file), keeps
``--games-at-once`` games of random bots running over loopback, and at the same time:

- non-readers: spectators that flood ``watch`` and never read (the server must drop them);
- idlers: websockets that never send ``hello`` and bare TCP sockets with half an HTTP
  request (slowloris), reopened whenever the server closes them;
- connection floods: bursts of ``--flood`` connections at once (over the per-address cap);
- junk: binary frames, invalid JSON, oversized frames, server-only message types, lone
  surrogates, fuzzed messages and unparsable moves.

Every ``--interval`` seconds it prints the server's RSS, open descriptors, log size and the
games completed and stored; at the end a JSON summary. Nothing lost means every game whose
``match_result`` arrived is in the database, and no ``store_failed`` came.

    .venv/bin/python bench/soak.py --minutes 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

# This folder has a file named like the `server` package; keep it off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

from protocol import OnTimeout, Policy, StartMatch, TimeControl  # noqa: E402
from protocol.tokens import new_token  # noqa: E402
from server.admin import AdminClient, AdminError  # noqa: E402
from tournament.processes import start_server  # noqa: E402

ADMIN_TOKEN = new_token()
"""The admin token of the server the soak test starts."""

counts: Counter[str] = Counter()
running_games: set[str] = set()


def proc_stats(pid: int) -> tuple[float, int]:
    """RSS in MiB and open descriptors of process ``pid``."""
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return rss, len(list(Path(f"/proc/{pid}/fd").iterdir()))


def stored_games(db: Path) -> int | None:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True,
                                                timeout=5)) as con:
            return int(con.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return None


async def player(url: str, name: str, rng: random.Random, ready: asyncio.Event) -> None:
    """A raw random bot that plays every turn it gets, forever."""
    while True:
        try:
            async with connect(url, proxy=None, compression=None, max_size=2**22,
                               max_queue=None) as ws:
                await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name}))
                async for frame in ws:
                    msg: dict[str, Any] = json.loads(frame)
                    if msg["type"] == "welcome":
                        ready.set()
                    elif msg["type"] == "your_turn":
                        await ws.send(json.dumps({
                            "type": "move", "game": msg["game"], "turn": msg["turn"],
                            "move": rng.choice(msg["legal"])}))
        except (OSError, ConnectionClosed, InvalidStatus):
            counts["player_reconnects"] += 1


async def games(url: str, at_once: int, stop: asyncio.Event, rng: random.Random) -> None:
    """Keep ``at_once`` games running until ``stop``; count results and failures."""
    async with AdminClient(url, ADMIN_TOKEN, name="soak-admin") as admin:
        gate = asyncio.Semaphore(at_once)

        async def one(seed: int) -> None:
            async with gate:
                if stop.is_set():
                    return
                rules = rng.choice(["grid5", "classic", "dash"])
                mrx, det = rng.sample(["soak-a", "soak-b"], 2)
                try:
                    game = await admin.start_match(StartMatch(
                        rules, mrx, [det], seed=seed, time_control=TimeControl(5.0),
                        policy=Policy(OnTimeout.RANDOM)))
                except AdminError as exc:
                    counts[f"start_error_{exc.code.value}"] += 1
                    await asyncio.sleep(0.5)  # back-off before the next start
                    return
                running_games.add(game)
                try:
                    result = await admin.result(game)
                    counts["games_completed"] += 1
                    counts[f"termination_{result.termination.value}"] += 1
                except AdminError as exc:
                    counts[f"result_error_{exc.code.value}"] += 1
                finally:
                    running_games.discard(game)

        seed = 0
        tasks: set[asyncio.Task[None]] = set()
        while not stop.is_set():
            while len(tasks) < at_once * 2 and not stop.is_set():
                seed += 1
                task = asyncio.create_task(one(seed))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if tasks:
            await asyncio.gather(*tasks)


async def non_readers(url: str, stop: asyncio.Event, n: int) -> None:
    """``n`` spectators at a time that flood ``watch`` (each frame asks for a snapshot of a
    running game) under the rate limit and never read."""
    await asyncio.gather(*(non_reader(url, stop) for _ in range(n)))


async def non_reader(url: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        ws = None
        try:
            ws = await connect(url, proxy=None, max_queue=1, max_size=2**22)
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": "hog",
                                      "role": "spectator"}))
            for _ in range(20_000):
                game = next(iter(running_games), None)
                if stop.is_set():
                    break
                await ws.send(json.dumps({"type": "watch", "game": game or "none"}))
                await asyncio.sleep(0.006)  # under the server's rate limit (200/s)
            counts["non_reader_survived"] += 1
            await ws.close()
        except ConnectionClosed:
            counts["non_reader_dropped"] += 1
        except (OSError, InvalidStatus):
            counts["non_reader_refused"] += 1
        if ws is not None:
            ws.transport.abort()


async def idlers(url: str, port: int, stop: asyncio.Event, n: int) -> None:
    """Keep ``n`` hello-less websockets and ``n`` half-HTTP sockets open."""

    async def silent_ws() -> None:
        while not stop.is_set():
            try:
                async with connect(url, proxy=None) as ws:
                    await ws.wait_closed()
                    counts["idle_ws_closed"] += 1
            except (OSError, InvalidStatus, ConnectionClosed, TimeoutError):
                counts["idle_ws_refused"] += 1
                await asyncio.sleep(0.2)  # back-off

    async def slowloris() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
                await reader.read()
                counts["slowloris_closed"] += 1
                writer.close()
            except OSError:
                counts["slowloris_refused"] += 1
                await asyncio.sleep(0.2)  # back-off

    tasks = [asyncio.create_task(f()) for f in [silent_ws] * n + [slowloris] * n]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def floods(url: str, stop: asyncio.Event, size: int, every: float) -> None:
    """Every ``every`` seconds, ``size`` connections at once, then all closed."""
    while not stop.is_set():
        results = await asyncio.gather(*(connect(url, proxy=None, open_timeout=10)
                                         for _ in range(size)), return_exceptions=True)
        for item in results:
            if isinstance(item, InvalidStatus):
                counts[f"flood_http_{item.response.status_code}"] += 1
            elif isinstance(item, BaseException):
                counts["flood_failed"] += 1
            else:
                counts["flood_open"] += 1
                item.transport.abort()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


JUNK: list[str | bytes] = [
    b"\x00\xff binary", "not json", "[]", '{"type": 7}', '{"type": "welcome", "session": "s", '
    '"resume_token": "r", "server": "x", "protocol": 1}', '{"type": "hello", "protocol": 1, '
    '"name": "x\\udfff"}', '{"type": "move", "game": "g", "turn": 1, "move": "TAXI:04"}',
    '{"type": "start_match", "rules": "classic", "mrx": "a", "detectives": ["b"]}',
    "x" * 70_000, '{"type": "ping", "nonce": 1e999}', '{"type": "watch", "game": "nope"}',
    '{"type": "hello", "protocol": 1, "name": "' + "n" * 100 + '"}',
]


async def junk(url: str, stop: asyncio.Event, rng: random.Random) -> None:
    """Junk frames at about 100/s; reconnects whenever the server closes the connection."""
    while not stop.is_set():
        try:
            async with connect(url, proxy=None, max_size=2**22) as ws:
                while not stop.is_set():
                    frame = rng.choice(JUNK)
                    if rng.random() < 0.01:
                        frame = "y" * 300_000  # over the hard frame limit: closed (1009)
                    await ws.send(frame)
                    counts["junk_frames"] += 1
                    await asyncio.sleep(0.01)  # pace: ~100 frames/s
        except ConnectionClosed:
            counts["junk_closed"] += 1
        except (OSError, InvalidStatus):
            counts["junk_refused"] += 1
            await asyncio.sleep(0.2)  # back-off


async def report(pid: int, db: Path, log: Path, start: float, stop: asyncio.Event,
                 interval: float, rows: list[dict[str, Any]]) -> None:
    while True:
        rss, fds = proc_stats(pid)
        row = {"t_s": round(time.monotonic() - start), "rss_mib": round(rss, 1), "fds": fds,
               "log_bytes": log.stat().st_size, "games_completed": counts["games_completed"],
               "games_stored": stored_games(db), "running": len(running_games),
               "non_readers_dropped": counts["non_reader_dropped"],
               "flood_503": counts["flood_http_503"], "junk_frames": counts["junk_frames"]}
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="yard-soak-"))
    db, log = tmp / "soak.db", tmp / "server.log"
    server, url = await start_server(f"sqlite:///{db}", "--move-time", "5",
                                     "--hello-timeout", str(args.hello_timeout),
                                     stderr_log=log, admin_token=ADMIN_TOKEN)
    port = int(url.rsplit(":", 1)[1])
    pid = server.proc.pid
    rng = random.Random(args.seed)
    stop = asyncio.Event()
    ready = [asyncio.Event(), asyncio.Event()]
    players = [asyncio.create_task(player(url, name, random.Random(i), ready[i]))
               for i, name in enumerate(["soak-a", "soak-b"])]
    for event in ready:
        await event.wait()
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    reporter = asyncio.create_task(report(pid, db, log, start, stop, args.interval, rows))
    hostile = [asyncio.create_task(non_readers(url, stop, args.non_readers)),
               asyncio.create_task(idlers(url, port, stop, args.idlers)),
               asyncio.create_task(floods(url, stop, args.flood, args.flood_every)),
               asyncio.create_task(junk(url, stop, rng))]
    played = asyncio.create_task(games(url, args.games_at_once, stop, rng))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(played), args.minutes * 60)
    stop.set()
    await asyncio.gather(*hostile, return_exceptions=True)
    await played
    await reporter
    for task in players:
        task.cancel()
    await asyncio.gather(*players, return_exceptions=True)
    await server.stop()
    final = stored_games(db)
    lost = counts["games_completed"] - (final or 0)
    return {"minutes": args.minutes, "url": url, "log": str(log), "rows": rows,
            "games_completed": counts["games_completed"], "games_stored": final,
            "lost": lost, "rss_mib_first_last": [rows[0]["rss_mib"], rows[-1]["rss_mib"]],
            "rss_mib_max": max(r["rss_mib"] for r in rows),
            "fds_max": max(r["fds"] for r in rows),
            "log_bytes_final": log.stat().st_size, "counts": dict(sorted(counts.items()))}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=30.0, help="seconds per report")
    parser.add_argument("--games-at-once", type=int, default=8)
    parser.add_argument("--idlers", type=int, default=50)
    parser.add_argument("--non-readers", type=int, default=4)
    parser.add_argument("--flood", type=int, default=400, help="connections per flood")
    parser.add_argument("--flood-every", type=float, default=20.0)
    parser.add_argument("--hello-timeout", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    summary = asyncio.run(main(parser.parse_args()))
    summary.pop("rows")
    print(json.dumps(summary, indent=2))
