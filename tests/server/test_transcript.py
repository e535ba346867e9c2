"""Game records keep no copy of the messages: a real server over loopback, real websocket
clients that keep every message they receive, a real SQLite file; then every seat's and the
spectators' messages are rebuilt from the stored record and compared with what arrived."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bots.client import BotClient
from bots.registry import make_bot
from db.errors import RecordError
from db.portable import from_portable, to_line
from db.store import Database
from host.writer import GameWriter
from protocol import OnTimeout, Policy, StartMatch, TimeControl
from records import GameRecord
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from server.transcript import TranscriptError, regenerate, transcripts
from tests import SCALE

MAX_RECORD_BYTES = 8 * 1024
YARD = str(Path(sys.executable).with_name("yard"))


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([YARD, *args], capture_output=True, text=True, timeout=120)


SERVER_CONFIG = ServerConfig(grace_s=10.0 * SCALE)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """The SQLite file of the ``db`` fixture, which the ``server`` fixture stores into."""
    return tmp_path / "yard.db"


Action = Callable[[dict[str, Any], int], list[dict[str, Any]] | str]
"""What a player does on its n-th ``your_turn``: messages to send, ``"ignore"`` (let the
clock run out) or ``"reconnect"`` (drop the connection, resume on a new one)."""


class Player:
    """A hand-driven bot that keeps every message it receives, over all its connections."""

    def __init__(self, url: str, name: str, act: Action, role: str = "bot") -> None:
        self.url, self.name, self.act, self.role = url, name, act, role
        self.received: list[dict[str, Any]] = []
        self.ws: ClientConnection | None = None
        self.token = ""
        self.turns = 0
        self.game: str | None = None  # stop at this game's game_over
        self.done = asyncio.Event()
        self.over: list[str] = []  # every game_over's game, in order
        self.ended = asyncio.Event()  # set at each game_over

    async def open(self, resume: str | None = None) -> None:
        self.ws = await connect(self.url, proxy=None, max_size=2**22)
        hello = {"type": "hello", "protocol": 1, "name": self.name, "role": self.role}
        await self.ws.send(json.dumps({**hello, **({"resume": resume} if resume else {})}))
        welcome = json.loads(await self.ws.recv())
        assert welcome["type"] == "welcome", welcome
        self.token = welcome["resume_token"]

    async def wait_over(self, games: list[str]) -> None:
        """Until every game in ``games`` has ended."""
        async with asyncio.timeout(60 * SCALE):
            while not set(games) <= set(self.over):
                self.ended.clear()
                await self.ended.wait()

    async def send(self, msg: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(msg))

    async def run(self) -> None:
        while not self.done.is_set():
            assert self.ws is not None
            try:
                msg = json.loads(await self.ws.recv())
            except ConnectionClosed:
                return
            self.received.append(msg)
            if msg["type"] == "game_over":
                self.over.append(msg["game"])
                self.ended.set()
            if msg["type"] == "game_over" and msg["game"] == self.game:
                self.done.set()
            elif msg["type"] == "your_turn":
                self.turns += 1
                action = self.act(msg, self.turns)
                if action == "reconnect":
                    await self.ws.close()
                    await self.open(resume=self.token)
                elif action != "ignore":
                    assert not isinstance(action, str), f"unknown action {action!r}"
                    for out in action:
                        await self.send(out)

    def of(self, game: str) -> list[dict[str, Any]]:
        """What arrived about ``game``: its messages and the errors naming it."""
        return [m for m in self.received
                if m.get("game") == game or (m["type"] == "error" and m.get("ref") == game)]


def move(msg: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "move", "game": msg["game"], "turn": msg["turn"], "move": text, **extra}


async def test_every_message_is_rebuilt_from_the_stored_record(
        server: MatchServer, db_path: Path) -> None:
    rng = random.Random(7)

    def mrx(msg: dict[str, Any], n: int) -> list[dict[str, Any]] | str:
        legal = rng.choice(msg["legal"])
        if n == 1:  # a bad try (illegal), then a real move
            return [move(msg, "taxi:7777"), move(msg, legal)]
        if n == 2:  # a move for a seat that is not ours, then one that is late by a turn
            return [move(msg, legal, seat="d1"), move(msg, legal),
                    move(msg, legal)]  # the last one: stale_turn
        if n == 3:  # loose text (refused: bad_move), then the move (the detectives time out)
            return [move(msg, "  " + legal.upper(), seat="mrx"), move(msg, legal, seat="mrx")]
        return [move(msg, legal, seat=msg["seat"])]

    def detectives(msg: dict[str, Any], n: int) -> list[dict[str, Any]] | str:
        if n == 2:
            return "ignore"  # the server plays a random move on timeout
        if n == 5:
            return "reconnect"  # game_start and this your_turn again, with the clock left
        if n == 7:
            return [move(msg, "not a move")]  # unparsable: a bad try, then a timeout
        return [move(msg, rng.choice(msg["legal"]), seat=msg["seat"])]

    x = Player(server.url, "xbot", mrx)
    d = Player(server.url, "dbot", detectives)
    watcher = Player(server.url, "eye", lambda m, n: [], role="spectator")
    for player in (x, d, watcher):
        await player.open()
    tasks = [asyncio.create_task(p.run()) for p in (x, d)]
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch(
            "classic", "xbot", ["dbot"], seed=11,
            time_control=TimeControl(1.0 * SCALE, 0.5 * SCALE),  # its answers are quick
            policy=Policy(OnTimeout.RANDOM, max_illegal=3)))
        x.game = d.game = watcher.game = game
        await watcher.send({"type": "watch", "game": game})
        watching = asyncio.create_task(watcher.run())
        result = await admin.result(game, 120 * SCALE)
        async with asyncio.timeout(30 * SCALE):
            await asyncio.gather(*tasks, watching)

    with Database.connect(f"sqlite:///{db_path}") as store:
        record = store.load_game(game)
    faults = {t.fault for t in record.turns}
    assert {"illegal_move", "random_move_on_timeout"} <= faults
    assert any("bad_move" in (t.detail or "") for t in record.turns)
    assert record.outcome.termination is result.termination
    sent = regenerate(record)
    assert sent.turns == record.turns  # (these clients report no search effort)

    # Each seat holder: byte for byte (as JSON values) what it received, in order.
    assert sent.seats["mrx"] == x.of(game)
    assert all(sent.seats[f"d{i}"] == d.of(game) for i in range(1, 6))
    kinds = [m["type"] for m in d.of(game)]
    assert kinds.count("game_start") == 2  # resumed once
    errors = [m["code"] for m in x.of(game) if m["type"] == "error"]
    assert {"illegal_move", "not_your_seat", "stale_turn"} <= set(errors)
    clocks = [m["clock"] for m in d.of(game) if m["type"] == "your_turn"]
    assert any(c["move_s"] < 1.0 * SCALE for c in clocks)  # the resumed turn's clock

    # The spectator: the snapshot it got on watch, then the tail of the public messages.
    seen = watcher.of(game)
    assert seen[0]["type"] == "watching" and seen[-1]["type"] == "game_over"
    tail = len(seen) - 1
    assert seen[1:] == sent.public[len(sent.public) - tail:]
    assert seen[0] == sent.watching[len(sent.public) - tail]
    assert transcripts(record)["public"] == sent.public

    # The same from the command line, one JSON object a line.
    shown = await asyncio.to_thread(yard, "replay", game, "--db", f"sqlite:///{db_path}",
                                    "--messages", "d3")
    assert shown.returncode == 0, shown.stderr
    assert [json.loads(line) for line in shown.stdout.splitlines()] == d.of(game)
    wrong = await asyncio.to_thread(yard, "replay", game, "--db", f"sqlite:///{db_path}",
                                    "--messages", "d9")
    assert wrong.returncode == 2 and "no seat 'd9'" in wrong.stderr

    # The exported record carries the log: after export and import, the same messages.
    again = from_portable(json.loads(to_line(record)))
    assert again.record.log == record.log
    assert regenerate(again.record).transcripts() == sent.transcripts()
    broken = json.loads(to_line(record))
    broken["log"]["holders"] = [[0, 1]]
    with pytest.raises(RecordError, match="holders"):
        from_portable(broken)


async def test_a_typical_classic_game_is_stored_in_8_kb(
        server: MatchServer, db_path: Path) -> None:
    clients = [BotClient(lambda: make_bot("random"), server.url, name) for name in ("a", "b")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    for client in clients:
        await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
    async with AdminClient(server.url, server.admin_token) as admin:
        # The seat seed fixed too: the same three games (bots' moves included) every run.
        games = [await admin.start_match(StartMatch("classic", "a", ["b"], seed=s,
                                                    seat_seed=s))
                 for s in range(3)]
        for game in games:
            await admin.result(game, 60 * SCALE)
    for task in tasks:
        task.cancel()
    con = sqlite3.connect(db_path)
    try:
        sizes = dict(con.execute("SELECT game_id, LENGTH(CAST(record AS BLOB)) "
                                 "FROM game_records").fetchall())
        turns = dict(con.execute("SELECT game_id, COUNT(*) FROM turns GROUP BY game_id"))
    finally:
        con.close()
    assert set(sizes) == set(games)
    for game in games:
        assert turns[game] > 10
        assert sizes[game] <= MAX_RECORD_BYTES, (game, turns[game], sizes[game])
    with Database.connect(f"sqlite:///{db_path}") as store:
        for game in games:
            record = store.load_game(game)
            sent = regenerate(record)
            assert [t.move for t in sent.turns] == [t.move for t in record.turns]
            assert sent.public[-1]["type"] == "game_over"


def test_a_damaged_log_is_a_clear_error_not_a_crash() -> None:
    import dataclasses

    from tests.server.test_match_core_harness import Harness

    h = Harness()
    x, d, admin = h.connect("x"), h.connect("d"), h.admin()
    game = h.start(admin, "x", ["d"], seed=3)
    record = h.play_out([x, d], game, random.Random(3)).record
    assert record.log is not None
    assert regenerate(record).seats["mrx"] == h.game_messages(x, game)
    damaged: list[list[Any]] = [
        [*record.log.events[:-1]], ["nonsense"], [{"dt": 1, "kind": "warp"}],
        [{"dt": 1, "kind": "attach", "h": 9}], [*record.log.events, "5 taxi:1"]]
    for events in damaged:
        broken = dataclasses.replace(record, log=dataclasses.replace(record.log,
                                                                     events=events))
        with pytest.raises(TranscriptError, match=game):
            regenerate(broken)
    with pytest.raises(TranscriptError, match="holders"):
        regenerate(dataclasses.replace(record, log=dataclasses.replace(
            record.log, holders=[[0]])))


class SlowDatabase(Database):
    """A real database whose writes wait for ``gate`` (a database that is slow)."""

    gate: threading.Event
    entered: threading.Event
    batches: list[int]

    def save_game(self, record: GameRecord) -> bool:
        self.batches.append(1)
        self.entered.set()
        self.gate.wait(60 * SCALE)
        return super().save_game(record)

    def save_games(self, records: Sequence[GameRecord]) -> list[bool]:
        self.batches.append(len(records))
        self.gate.wait(60 * SCALE)
        return super().save_games(records)


async def test_games_finish_while_the_database_is_slow_and_are_then_stored_in_a_batch(
        tmp_path: Path) -> None:
    store = SlowDatabase.connect(f"sqlite:///{tmp_path / 'slow.db'}")
    assert isinstance(store, SlowDatabase)
    store.gate, store.entered, store.batches = threading.Event(), threading.Event(), []
    writer = GameWriter(store)
    server = MatchServer(ServerConfig(), writer, port=0)
    await server.start()
    rng = random.Random(1)
    x = Player(server.url, "xbot", lambda m, n: [move(m, rng.choice(m["legal"]))])
    d = Player(server.url, "dbot", lambda m, n: [move(m, rng.choice(m["legal"]))])
    try:
        for player in (x, d):
            await player.open()
        tasks = [asyncio.create_task(p.run()) for p in (x, d)]
        async with AdminClient(server.url, server.admin_token) as admin:
            first = await admin.start_match(StartMatch("grid5", "xbot", ["dbot"], seed=1))
            await asyncio.to_thread(store.entered.wait, 60 * SCALE)  # its write hangs
            more = [await admin.start_match(StartMatch("grid5", "xbot", ["dbot"], seed=s))
                    for s in (2, 3, 4)]
            await x.wait_over([first, *more])  # played to the end meanwhile
            assert writer.games_saved == 0 and store.list_games() == []  # no result yet
            store.gate.set()
            results = [await admin.result(g, 60 * SCALE) for g in [first, *more]]
        assert store.batches == [1, 3]  # the three that ended meanwhile: one transaction
        assert writer.games_saved == 4
        for game, result in zip([first, *more], results, strict=True):
            assert store.load_game(game).outcome.termination is result.termination
        for task in tasks:
            task.cancel()
    finally:
        store.gate.set()
        await server.stop()
        store.close()


async def test_a_connection_closed_for_violations_gets_nothing_more_and_neither_does_its_rebuild(
        db_path: Path) -> None:
    """Mister X's bot breaks the protocol until the server closes its connection and
    forfeits its game: the ``game_over`` the server then addresses to it is never sent
    (its connection is closing), and the rebuilt messages of its seat stop at the same
    point, while the detectives' (still connected) end with that ``game_over``."""
    database = Database.connect(f"sqlite:///{db_path}")
    server = MatchServer(ServerConfig(max_violations=3), GameWriter(database), port=0)
    await server.start()
    try:
        def mrx(msg: dict[str, Any], n: int) -> list[dict[str, Any]] | str:
            if n == 2:  # three server-only messages: violations, the third closes
                return [{"type": "welcome"}] * 3
            return [move(msg, msg["legal"][0])]

        def detectives(msg: dict[str, Any], n: int) -> list[dict[str, Any]] | str:
            return [move(msg, msg["legal"][0], seat=msg["seat"])]

        x = Player(server.url, "xbot", mrx)
        d = Player(server.url, "dbot", detectives)
        for player in (x, d):
            await player.open()
        tasks = [asyncio.create_task(p.run()) for p in (x, d)]
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("classic", "xbot", ["dbot"], seed=5,
                                                      time_control=TimeControl(30.0)))
            x.game = d.game = game
            result = await admin.result(game, 60 * SCALE)
            async with asyncio.timeout(30 * SCALE):
                await asyncio.gather(*tasks)
        assert result.termination.value == "protocol_violation" and result.seat == "mrx"
        record = database.load_game(game)
    finally:
        await server.stop()
        database.close()
    sent = regenerate(record)
    assert [m["type"] for m in x.of(game)][-1] == "your_turn"  # then the close
    assert sent.seats["mrx"] == x.of(game)
    assert d.of(game)[-1]["type"] == "game_over"
    assert all(sent.seats[f"d{i}"] == d.of(game) for i in range(1, 6))


async def test_a_client_dropped_for_not_reading_is_offline_in_the_rebuild_from_then_on(
        db_path: Path) -> None:
    """The detectives' bot stops reading and floods ``watch`` until the server drops it
    (its send buffer is full). Mister X moves right after: the ``update`` and the
    detectives' ``your_turn`` are addressed to a connection already dropped, and the
    rebuilt messages of the detectives' seats end before them (the drop is logged as the
    disconnection); the game is then forfeited when the resume grace period ends."""
    database = Database.connect(f"sqlite:///{db_path}")
    server = MatchServer(ServerConfig(max_send_bytes=64 * 1024, rate_per_s=100_000,
                                      burst=100_000, grace_s=0.5 * SCALE),
                         GameWriter(database), port=0)
    await server.start()
    try:
        turns: list[dict[str, Any]] = []

        def mrx(msg: dict[str, Any], n: int) -> list[dict[str, Any]] | str:
            turns.append(msg)
            return "ignore"  # the test moves, once the detectives' bot is dropped

        x = Player(server.url, "xbot", mrx)
        await x.open()
        task = asyncio.create_task(x.run())
        hog = await connect(server.url, proxy=None, max_queue=2)
        await hog.send(json.dumps({"type": "hello", "protocol": 1, "name": "dbot"}))
        assert json.loads(await hog.recv())["type"] == "welcome"
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("classic", "xbot", ["dbot"], seed=8,
                                                      time_control=TimeControl(30.0)))
            x.game = game
            async with asyncio.timeout(30 * SCALE):
                while not server.overflows:  # ~1.5 kB snapshots, never read
                    for _ in range(100):
                        await hog.send(json.dumps({"type": "watch", "game": game}))
                    await asyncio.sleep(0.01)  # let the server answer them
                while not turns:
                    await asyncio.sleep(0.01)
            assert server.overflows == 1
            await x.send(move(turns[0], turns[0]["legal"][0]))
            result = await admin.result(game, 30 * SCALE)
            async with asyncio.timeout(30 * SCALE):
                await task
        hog.transport.abort()  # it was dropped: no closing handshake to wait for
        assert result.termination.value == "disconnected"
        record = database.load_game(game)
    finally:
        await server.stop()
        database.close()
    sent = regenerate(record)
    assert sent.seats["mrx"] == x.of(game)
    assert [m["type"] for m in x.of(game)] == [
        "game_start", "your_turn", "move_ok", "update", "game_over"]
    assert [m["type"] for m in sent.seats["d1"]] == ["game_start"]
