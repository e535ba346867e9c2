"""A flood of page and board requests does not slow the games being played on the same
server: real match server with its pages, real bot clients, real SQLite, and the flood from
a process of its own (real HTTP clients)."""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

from bots.client import BotClient
from bots.registry import make_bot
from db.store import Database
from protocol import StartMatch, TimeControl
from server.admin import AdminClient
from tests.host.web_helpers import CLASSIC_GAME, Seeded, running_server, seed_database

FLOOD_CLIENT = Path(__file__).with_name("web_flood_client.py")
BOARD_THREADS = 2
PAGE_THREADS = 2
GAMES_PER_PHASE = 3
PHASES = 3
SEED = 11


def flood_args(seeded: Seeded) -> list[str]:
    """The flood client's groups: threads asking board drawings of many sizes (each new to
    the server, a 404 now: no ruleset here uses them), threads asking API pages and the
    boards in use."""
    sizes = [(w, h) for w in range(2, 101) for h in range(2, 101)]
    random.Random(5).shuffle(sizes)
    boards = [f"/api/boards/grid{w}x{h}" for w, h in sizes[:3000]]
    pages = ["/api/games?limit=50", "/api/tournaments", "/api/leaderboard", "/api/live",
             f"/api/games/{CLASSIC_GAME}", f"/api/tournaments/{seeded.tournament_id}",
             "/api/matrix?rules=grid5", "/api/boards/london", "/api/boards/grid5x5",
             f"/api/games?tournament={seeded.tournament_id}", "/"]
    return [str(BOARD_THREADS), *boards, "--", str(PAGE_THREADS), *pages]


async def _turn_times(admin: AdminClient, store: Database, seed: int) -> list[float]:
    """Play one classic game between the connected bots; the think time the server charged
    for each move (sending ``your_turn`` to receiving the move). The seat seed is the game
    seed, so the same ``seed`` plays the same game with the same bots' seeds."""
    game = await admin.start_match(StartMatch("classic", "x", ["d"], seed, None,
                                              TimeControl(60.0, 0.0), seat_seed=seed))
    await admin.result(game, timeout=120)
    record = await asyncio.to_thread(store.load_game, game)
    return [turn.time_used for turn in record.turns if turn.move is not None]


async def test_a_flood_of_page_requests_leaves_move_times_within_twice_idle(
        tmp_path: Path) -> None:
    """Games between real bot clients, idle and under a flood of board and API requests
    in turn (the same games each time): the median move time the server charges the bots
    (``your_turn`` sent to move received, as stored) under the flood is at most twice the
    idle one. Before boards were limited to those in use and built off the event loop, each
    new size blocked the loop for milliseconds to a tenth of a second."""
    seeded = seed_database(tmp_path / "flood.db")
    idle: list[float] = []
    flooded: list[float] = []
    statuses: dict[str, int] = {}
    async with running_server(seeded.url) as (server, app, base):
        clients = [BotClient(lambda: make_bot("random"), server.url, name)
                   for name in ("x", "d")]
        tasks = [asyncio.create_task(c.run()) for c in clients]
        store = Database.connect(seeded.url)
        try:
            for c in clients:
                await asyncio.wait_for(c.connected.wait(), 30)
            async with AdminClient(server.url, server.admin_token) as admin:
                await _turn_times(admin, store, SEED)  # warm-up: nothing measured
                for phase in range(2 * PHASES):
                    # Idle and flooded in turn, each pair of phases playing the same games.
                    seeds = range(SEED + phase // 2 * GAMES_PER_PHASE,
                                  SEED + (phase // 2 + 1) * GAMES_PER_PHASE)
                    if phase % 2 == 0:
                        for seed in seeds:
                            idle += await _turn_times(admin, store, seed)
                        continue
                    proc = await asyncio.create_subprocess_exec(
                        sys.executable, str(FLOOD_CLIENT), base, *flood_args(seeded),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                    assert proc.stdin is not None and proc.stdout is not None
                    assert (await proc.stdout.readline()).strip() == b"flooding"
                    for seed in seeds:
                        flooded += await _turn_times(admin, store, seed)
                    proc.stdin.close()
                    out, _ = await proc.communicate()
                    for status, n in json.loads(out).items():
                        statuses[status] = statuses.get(status, 0) + n
        finally:
            for c in clients:
                c.stopped = True
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            store.close()
    idle_median, flood_median = statistics.median(idle), statistics.median(flooded)
    summary = (f"move time charged: idle median {idle_median * 1e3:.3f} ms, p90 "
               f"{statistics.quantiles(idle, n=10)[-1] * 1e3:.3f} ms; flooded median "
               f"{flood_median * 1e3:.3f} ms, p90 "
               f"{statistics.quantiles(flooded, n=10)[-1] * 1e3:.3f} ms; {len(idle)} and "
               f"{len(flooded)} moves; flood answers by status {statuses}")
    assert len(idle) == len(flooded) >= 100, summary  # the same games, flooded or not
    # Every flood thread was answered (boards 404, pages 200); nothing failed.
    assert statuses.get("404", 0) >= PHASES * BOARD_THREADS, summary
    assert statuses.get("200", 0) >= PHASES * PAGE_THREADS, summary
    assert set(statuses) <= {"200", "404", "503"}, summary
    assert app.boards.built <= 2, summary  # london and grid5x5, the boards in use
    assert flood_median <= 2 * idle_median, summary
