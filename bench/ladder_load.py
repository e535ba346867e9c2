"""A ladder that holds 1,000 bots (issue 40.4): idle-to-game time, matchmaking CPU per game,
server memory per bot and games per second.

    .venv/bin/python bench/ladder_load.py --bots 1000 --procs 4 --seconds 60
    .venv/bin/python bench/ladder_load.py --cpu-only --json     # matchmaking CPU alone
    .venv/bin/python bench/ladder_load.py --tree ../older-yard  # an older server

Two parts:

* **Matchmaking CPU** (sans-I/O, no sockets): :class:`server.ladder.Ladder` driven as the
  core drives it, for 10, 100 and 1,000 bots (``--sizes``) with ``max_games`` 1-4: every
  free slot offered to ``propose``, each game finishing after a simulated 5-15 s, then
  ``result`` and the two ``rank`` look-ups of the ``standing`` frames, and ``propose``
  again. Reported: CPU seconds (``time.process_time``) of that ladder work per game
  started, and :data:`server.ladder.OPS` (the opponent candidates examined) per proposal:
  it must grow no faster than the bots waiting.
* **Live load**: a real ``yard serve --ladder grid5`` on loopback with a fresh SQLite file,
  and ``--bots`` websocket bots in ``--procs`` client processes speaking the protocol
  directly (``hello`` with ``ladder`` and ``max_games`` 1-4; a random legal move after a
  think time of 0.2-1 s). ``--drop`` of them drop their connection once (at a random time)
  and resume their session 0.5-2 s later. Reported after ``--warmup`` seconds, over
  ``--seconds``: the time from a bot's game slot becoming free (``welcome``, ``game_over``)
  to the next ``game_start`` on it (p50, p99, max), games per second, the server's RSS
  growth per connected bot, and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

ROOT = Path(__file__).resolve().parents[1]
YARD = ("-c", "import sys; from yard.cli import main; main(sys.argv[1:])")


# ---------------------------------------------------------------------- matchmaking CPU

def matchmaking_cpu(bots: int, games: int, seed: int = 0) -> dict[str, Any]:
    """Drive a :class:`server.ladder.Ladder` of ``bots`` bots until ``games`` games have
    started after a warm-up of as many; CPU seconds of the ladder's work per game, and
    opponent candidates examined per proposal."""
    import heapq

    from game import Termination, Winner
    from server import ladder as ladder_module
    from server.ladder import Ladder, Result

    counter = getattr(ladder_module, "OPS", None)  # None: an older tree (--tree)
    rng = random.Random(seed)
    ladder = Ladder(["grid5"], rng=random.Random(seed))
    slots = {f"bot-{i:04d}": rng.randint(1, 4) for i in range(bots)}
    for name in slots:
        ladder.join(name, ["grid5"])
    free = dict(slots)
    ends: list[tuple[float, int, str, str]] = []
    now, started, counted, cpu, rating, proposals, ops = 0.0, 0, 0, 0.0, 0.0, 0, 0
    serial = 0
    while counted < games:
        t0 = time.process_time()
        ops0 = 0 if counter is None else counter.value
        proposed = ladder.propose(free, now)
        if started >= games:
            cpu += time.process_time() - t0
            proposals += 1
            ops += 0 if counter is None else counter.value - ops0
            counted += len(proposed)
        started += len(proposed)
        for game in proposed:
            free[game.mrx] -= 1
            free[game.detective] -= 1
            serial += 1
            heapq.heappush(ends, (now + rng.uniform(5, 15), serial, game.mrx, game.detective))
        if not ends:
            raise RuntimeError(f"{bots} bots: the ladder proposes nothing")
        now, _, mrx, det = heapq.heappop(ends)
        free[mrx] += 1
        free[det] += 1
        t0 = time.process_time()
        winner = rng.choice([Winner.MRX, Winner.DETECTIVES])
        ladder.result(Result("grid5", mrx, det, winner, Termination.CAUGHT
                             if winner is Winner.DETECTIVES else Termination.SURVIVED), now)
        for name in (mrx, det):
            ladder.rank("grid5", name, now)
        if started > games:
            rating += time.process_time() - t0
    return {"bots": bots, "games": counted,
            "cpu_ms_per_game": round(1000 * (cpu + rating) / counted, 4),
            "propose_ms_per_game": round(1000 * cpu / counted, 4),
            "rate_ms_per_game": round(1000 * rating / counted, 4),
            "ops_per_proposal": round(ops / max(proposals, 1), 1),
            "ops_per_bot_per_proposal": round(ops / max(proposals, 1) / bots, 3)}


# ---------------------------------------------------------------------- live load

class Bot:
    """One ladder bot on one websocket: random legal moves after a think time."""

    def __init__(self, url: str, name: str, max_games: int, drop_at: float | None,
                 stats: dict[str, Any], rng: random.Random) -> None:
        self.url, self.name, self.max_games, self.drop_at = url, name, max_games, drop_at
        self.stats, self.rng = stats, rng
        self.idle: list[float] = []  # when each free slot became free
        self.games: set[str] = set()
        self.resume: str | None = None
        self.moving: set[asyncio.Task[None]] = set()

    async def run(self, stop: float) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        while time.time() < stop:
            try:
                async with connect(self.url, proxy=None, max_size=2**22,
                                   open_timeout=60) as ws:
                    hello: dict[str, Any] = {"type": "hello", "protocol": 1, "name": self.name,
                                             "ladder": ["grid5"], "max_games": self.max_games}
                    if self.resume is not None:
                        hello["resume"] = self.resume
                    await ws.send(json.dumps(hello))
                    dropped = await self.session(ws, stop)
            except OSError:
                self.stats["connect_errors"] += 1
                dropped = False
                await asyncio.sleep(1.0)
            except ConnectionClosed:  # e.g. its resume refused: it connects afresh
                self.stats["closed"] += 1
                self.resume = None
                dropped = True
            if dropped:
                self.stats["drops"] += 1
                await asyncio.sleep(self.rng.uniform(0.5, 2.0))
            elif time.time() >= stop:
                return

    async def session(self, ws: Any, stop: float) -> bool:
        """Play until ``stop`` (False) or until it is time to drop (True)."""
        while True:
            now = time.time()
            if now >= stop:
                return False
            timeout = stop - now
            if self.drop_at is not None:
                if now >= self.drop_at:
                    self.drop_at = None
                    if not self.games:  # the server forgets a session without games
                        self.resume = None
                    return True
                timeout = min(timeout, self.drop_at - now)
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout))
            except TimeoutError:
                continue
            self.on_frame(ws, frame, time.time())

    def on_frame(self, ws: Any, frame: dict[str, Any], now: float) -> None:
        """Take one frame from the server, received at ``now``."""
        kind = frame["type"]
        if kind == "welcome":
            self.resume = frame["resume_token"]
            self.games = set(frame["resumed"])
            self.idle = [now] * (self.max_games - len(self.games))
        elif kind == "game_start":
            self.games.add(frame["game"])
            if self.idle:
                self.stats["idle_to_game"].append((now, now - self.idle.pop(0)))
        elif kind == "your_turn":
            task = asyncio.create_task(self.move(ws, frame))
            self.moving.add(task)
            task.add_done_callback(self.moving.discard)
        elif kind == "game_over":
            if frame["game"] in self.games:
                self.games.discard(frame["game"])
                self.idle.append(now)
                self.stats["game_over"].append(now)
        elif kind == "error":
            self.stats["errors"][frame.get("code", "?")] += 1

    async def move(self, ws: Any, turn: dict[str, Any]) -> None:
        await asyncio.sleep(self.rng.uniform(0.2, 1.0))
        # If the connection dropped meanwhile, the resumed game asks again.
        with contextlib.suppress(Exception):
            await ws.send(json.dumps({"type": "move", "game": turn["game"], "turn": turn["turn"],
                                      "seat": turn["seat"],
                                      "move": self.rng.choice(turn["legal"])}))


def client_process(url: str, first: int, count: int, seed: int, stop: float, ramp_s: float,
                   drop: float, out: Any) -> None:
    """``count`` bots (names from ``first``) in one process; their stats to ``out``."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rng = random.Random(seed)
    stats: dict[str, Any] = {"idle_to_game": [], "game_over": [], "drops": 0, "closed": 0,
                             "connect_errors": 0, "errors": Counter()}

    async def main() -> None:
        start = time.time()
        tasks = []
        for i in range(count):
            drop_at = (start + rng.uniform(ramp_s, stop - start) if rng.random() < drop
                       else None)
            bot = Bot(url, f"load-{first + i:04d}", rng.randint(1, 4), drop_at, stats,
                      random.Random(rng.random()))
            tasks.append(asyncio.create_task(bot.run(stop)))
            await asyncio.sleep(ramp_s / count)
        await asyncio.gather(*tasks)

    asyncio.run(main())
    out.put({**stats, "errors": dict(stats["errors"])})


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def live(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="yard-ladderload-"))
    tree = Path(args.tree).resolve()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cap = str(args.bots * 2 + 64)
    server = subprocess.Popen(
        [sys.executable, *YARD, "serve", "--port", "0", "--db", f"sqlite:///{tmp / 'load.db'}",
         "--ladder", "grid5", "--max-connections", cap, "--max-per-address", cap,
         "--admin-token-file", str(tmp / "admin"), "--move-time", "10", "--grace", "10"],
        cwd=tree, env={**env, "YARD_ADMIN_TOKEN": secrets.token_urlsafe(24)},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split()[-1]
    try:
        time.sleep(0.5)
        rss_before = rss_kib(server.pid)
        start = time.time()
        stop = start + args.ramp + args.warmup + args.seconds
        queue: Any = multiprocessing.Queue()
        per = -(-args.bots // args.procs)
        procs = [multiprocessing.Process(
            target=client_process,
            args=(url, k * per, min(per, args.bots - k * per), args.seed + k, stop, args.ramp,
                  args.drop, queue))
            for k in range(args.procs) if k * per < args.bots]
        for proc in procs:
            proc.start()
        time.sleep(args.ramp + args.warmup / 2)
        rss_connected = rss_kib(server.pid)
        load_during = os.getloadavg()
        results = [queue.get(timeout=stop - time.time() + 120) for _ in procs]
        for proc in procs:
            proc.join()
    finally:
        server.terminate()
        server.wait()
    since = start + args.ramp + args.warmup
    waits = [w for r in results for t, w in r["idle_to_game"] if t >= since]
    ends = [t for r in results for t in r["game_over"] if t >= since]
    errors: Counter[str] = Counter()
    for r in results:
        errors.update(r["errors"])
    return {"bots": args.bots, "procs": args.procs, "seconds": args.seconds,
            "idle_to_game_s": {"n": len(waits), "p50": round(percentile(waits, 0.5), 3),
                               "p99": round(percentile(waits, 0.99), 3),
                               "max": round(max(waits, default=float("nan")), 3)},
            "games_per_s": round(len(ends) / 2 / args.seconds, 2),  # both seats see it
            "rss_mib": {"idle": round(rss_before / 1024, 1),
                        "connected": round(rss_connected / 1024, 1)},
            "rss_kib_per_bot": round((rss_connected - rss_before) / args.bots, 1),
            "drops": sum(r["drops"] for r in results),
            "connect_errors": sum(r["connect_errors"] for r in results),
            "closed_by_server": sum(r["closed"] for r in results),
            "errors": dict(errors), "loadavg": [round(x, 2) for x in load_during]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=15.0,
                        help="seconds after the ramp before measuring")
    parser.add_argument("--ramp", type=float, default=10.0,
                        help="seconds over which the bots connect")
    parser.add_argument("--drop", type=float, default=0.05,
                        help="share of the bots that drop once and resume")
    parser.add_argument("--sizes", default="10,100,1000",
                        help="bot counts of the matchmaking CPU measurement")
    parser.add_argument("--cpu-games", type=int, default=2000,
                        help="games per matchmaking CPU measurement")
    parser.add_argument("--cpu-only", action="store_true", help="skip the live load")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tree", default=str(ROOT),
                        help="source tree of the server to load (default: this one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "matchmaking": [matchmaking_cpu(int(n), args.cpu_games, args.seed)
                        for n in args.sizes.split(",")]}
    for row in report["matchmaking"]:
        print(f"matchmaking {row['bots']:5d} bots: {row['cpu_ms_per_game']:.3f} ms CPU/game ("
              f"propose {row['propose_ms_per_game']:.3f}, rate {row['rate_ms_per_game']:.3f}), "
              f"{row['ops_per_proposal']:.0f} candidates/proposal "
              f"({row['ops_per_bot_per_proposal']:.2f}/bot)", file=sys.stderr)
    if not args.cpu_only:
        report["live"] = live(args)
        row = report["live"]
        wait = row["idle_to_game_s"]
        print(f"live {row['bots']} bots: idle->game_start p50 {wait['p50']} s, p99 "
              f"{wait['p99']} s, max {wait['max']} s ({wait['n']}); {row['games_per_s']} "
              f"games/s; RSS {row['rss_mib']} MiB, {row['rss_kib_per_bot']} KiB/bot; drops "
              f"{row['drops']}, errors {row['errors']}; load {row['loadavg']}", file=sys.stderr)
    print(json.dumps(report, indent=None if args.json else 1))


if __name__ == "__main__":
    main()
