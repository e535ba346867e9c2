"""``match_over``: the admin hears that a game ended before its record is stored, and the
tournament runner starts a slot's next game on it (real server on loopback, real bot
clients, real SQLite file; the store is held back by an event the test controls)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

import host.writer as writer_module
import tournament.runner as runner_module
from bots.base import Bot
from bots.client import BotClient
from bots.registry import make_bot
from db.errors import DatabaseError
from db.store import Database
from host.writer import GameWriter
from protocol import ErrorCode
from records import GameRecord
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE
from tournament.runner import TournamentRunner
from tournament.spec import TournamentRunError, TournamentSpec, create


class GatedStore:
    """The real database as the server's sink; every write first waits for ``gate`` (set
    by the test), and with ``fail`` set it raises instead of storing."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.gate = threading.Event()
        self.fail = False
        self.committed = 0
        self._lock = threading.Lock()

    def save_game(self, record: GameRecord) -> None:
        self.save_games([record])

    def save_games(self, records: list[GameRecord]) -> None:
        assert self.gate.wait(60 * SCALE), "the test never opened the gate"
        if self.fail:
            raise DatabaseError("the disk is gone (test)")
        self.db.save_games(records)
        with self._lock:
            self.committed += len(records)


#: A served match server, its gated store, and the writer between them.
Gated = tuple[MatchServer, GatedStore, GameWriter]


@pytest.fixture
async def gated(db: Database, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Gated]:
    # A failing store is tried three times, without the back-off between the tries.
    monkeypatch.setattr(writer_module, "STORE_RETRIES_S", (0.0, 0.0))
    store = GatedStore(db)
    writer = GameWriter(store)
    server = MatchServer(ServerConfig(), writer, port=0)
    await server.start()
    try:
        yield server, store, writer
    finally:
        store.gate.set()  # let the writer finish, whatever the test did
        await server.stop()
        db.close()


async def bots(url: str, factories: dict[str, Callable[[], Bot]]
               ) -> list[asyncio.Task[int]]:
    clients = [BotClient(factory, url, name) for name, factory in factories.items()]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    for client in clients:
        await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
    return tasks


def plain(*names: str) -> dict[str, Callable[[], Bot]]:
    return {name: partial(make_bot, name) for name in names}


async def admin_frames(server: MatchServer, starts: list[dict[str, Any]], until: int
                       ) -> list[dict[str, Any]]:
    """Start ``starts`` on a raw admin connection; every frame until ``until`` results
    (``match_result`` or ``store_failed``) came."""
    async with connect(server.url, proxy=None, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": "t",
                                  "role": "admin", "token": server.admin_token}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        for start in starts:
            await ws.send(json.dumps({"type": "start_match", "rules": "grid5", **start}))
        frames: list[dict[str, Any]] = []
        async with asyncio.timeout(60 * SCALE):
            while sum(f["type"] == "match_result" or f.get("code") == "store_failed"
                      for f in frames) < until:
                frames.append(json.loads(await ws.recv()))
    return frames


async def test_match_over_comes_before_match_result_with_the_same_ids(
        gated: Gated, db: Database) -> None:
    server, store, _ = gated
    tasks = await bots(server.url, plain("random", "greedy"))
    starts = [{"mrx": "random", "detectives": ["greedy"], "seed": i, "tag": f"t{i}",
               "tournament_id": None, "schedule_id": None, "match_over": True}
              for i in range(4)]
    starts.append({"mrx": "greedy", "detectives": ["random"], "seed": 9, "tag": "plain"})
    store.gate.set()
    frames = await admin_frames(server, starts, until=5)
    for task in tasks:
        task.cancel()
    games = {f["tag"]: f["game"] for f in frames if f["type"] == "match_started"}
    for i in range(4):
        game = games[f"t{i}"]
        mine = [f for f in frames if f.get("game") == game and f["type"] != "match_started"]
        assert [f["type"] for f in mine] == ["match_over", "match_result"]
        over, result = mine
        assert {**over, "type": None} == {**result, "type": None}  # same ids and outcome
        assert over["tag"] == f"t{i}" and db.load_game(game).moves == result["moves"]
    # Without the flag an admin gets no match_over (old admins never see the type).
    assert [f["type"] for f in frames if f.get("game") == games["plain"]] == [
        "match_started", "match_result"]


async def test_store_failed_still_follows_match_over(
        gated: Gated, db: Database) -> None:
    server, store, writer = gated
    tasks = await bots(server.url, plain("random"))
    store.fail = True
    store.gate.set()
    frames = await admin_frames(server, [{"mrx": "random", "detectives": ["random"],
                                              "seed": 3, "match_over": True}], until=1)
    for task in tasks:
        task.cancel()
    game = next(f["game"] for f in frames if f["type"] == "match_started")
    after = [f for f in frames if f["type"] != "match_started"]
    assert [(f["type"], f.get("game", f.get("ref"))) for f in after] == [
        ("match_over", game), ("error", game)]
    assert after[1]["code"] == ErrorCode.STORE_FAILED.value
    assert (writer.games_saved, writer.store_failures) == (0, 1) and db.list_games() == []


async def test_runner_starts_the_next_game_before_the_last_one_is_stored(
        gated: Gated, db: Database, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    server, store, _ = gated
    monkeypatch.setattr(runner_module, "MAX_UNSTORED", 1)  # a bound this test reaches
    tid = create(db, TournamentSpec("grid5", ["random", "greedy"], pairs=3, seed=5,
                                    move_time=5))
    slots, total = 1, len(db.scheduled(tid))
    started: list[int] = []  # games stored when each game started
    second = asyncio.Event()

    def counting() -> Bot:  # "random" plays one side of every game
        started.append(store.committed)
        if len(started) == 2:
            second.set()
        return make_bot("random")

    tasks = await bots(server.url, {"random": counting, **plain("greedy")})
    results: list[int] = []
    runner = TournamentRunner(db, f"sqlite:///{tmp_path / 'yard.db'}", tid,
                              server_url=server.url, admin_token=server.admin_token,
                              concurrency=slots,
                              listener=lambda p, entry, outcome: results.append(entry.index))
    run = asyncio.create_task(runner.run())
    async with asyncio.timeout(60 * SCALE):
        await second.wait()
    # The slot's second game started while the first one's record could not be stored:
    # no match_result has come, nothing is counted or stored yet.
    assert results == [] and store.committed == 0 and db.list_games() == []
    store.gate.set()
    async with asyncio.timeout(120 * SCALE):
        progress = await run
    for task in tasks:
        task.cancel()
    assert progress.played_now == total and sorted(results) == list(range(total))
    assert db.pending(tid) == [] and len(db.results(tournament_id=tid)) == total
    # Never more than MAX_UNSTORED (at least the slots) ended-but-unstored games beside
    # those playing.
    assert all(i - stored < slots + max(slots, 1) for i, stored in enumerate(started))


async def test_runner_reports_a_store_failure_after_match_over(
        gated: Gated, db: Database, tmp_path: Path) -> None:
    server, store, writer = gated
    tid = create(db, TournamentSpec("grid5", ["random", "greedy"], pairs=1, seed=2,
                                    move_time=5))
    tasks = await bots(server.url, plain("random", "greedy"))
    store.fail = True
    store.gate.set()
    runner = TournamentRunner(db, f"sqlite:///{tmp_path / 'yard.db'}", tid,
                              server_url=server.url, admin_token=server.admin_token,
                              concurrency=1)
    with pytest.raises(TournamentRunError, match="was not stored"):
        async with asyncio.timeout(60 * SCALE):
            await runner.run()
    for task in tasks:
        task.cancel()
    assert len(db.pending(tid)) == len(db.scheduled(tid))  # nothing half-stored
    assert writer.store_failures >= 1


async def test_start_match_leaves_out_match_over_unless_set() -> None:
    """A server older than ``match_over`` refuses unknown fields: the admin client sends
    the field only when it is set (a stand-in old server records the frames it gets)."""
    from websockets.asyncio.server import ServerConnection, serve

    from protocol import MatchStarted, StartMatch, Welcome, encode
    from server.admin import AdminClient

    frames: list[dict[str, Any]] = []

    async def old_server(ws: ServerConnection) -> None:
        await ws.recv()  # hello
        await ws.send(encode(Welcome("s", "r", "old", 1)))
        async for text in ws:
            frames.append(json.loads(text))
            await ws.send(encode(MatchStarted(f"g{len(frames)}")))

    async with serve(old_server, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with AdminClient(f"ws://127.0.0.1:{port}") as admin:
            await admin.start_match(StartMatch("grid5", "a", ["b"], seed=3))
            await admin.start_match(StartMatch("grid5", "a", ["b"], seed=4, match_over=True))
    assert "match_over" not in frames[0] and frames[0]["seed"] == 3
    assert frames[1]["match_over"] is True
