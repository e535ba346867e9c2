"""Real server on port 0, real websocket clients, real SQLite: games and misbehaviour."""

from __future__ import annotations

import asyncio
import json
import os
from functools import partial
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bots.client import BotClient
from bots.registry import make_bot
from db.store import Database
from game import Termination
from host.writer import GameWriter
from protocol import OnTimeout, Policy, StartMatch, TimeControl
from server.admin import AdminClient, AdminError
from server.app import MatchServer
from server.config import ServerConfig
from server.transcript import transcripts
from tests import SCALE

RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}


class Raw:
    """A hand-driven protocol client."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, name: str | None = None, **hello: Any) -> Raw:
        raw = cls(await connect(url, proxy=None, max_size=2**22, max_queue=None))
        if name is not None:
            await raw.send({"type": "hello", "protocol": 1, "name": name, **hello})
            assert (await raw.expect("welcome"))["session"]
        return raw

    async def send(self, msg: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(json.dumps(msg) if isinstance(msg, dict) else msg)

    async def expect(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        """Read frames until one of type ``kind`` arrives (``timeout``: only to turn a
        hang into a failure)."""
        async with asyncio.timeout(timeout * SCALE):
            while True:
                msg: dict[str, Any] = json.loads(await self.ws.recv())
                if msg["type"] == kind:
                    return msg


async def start_bots(url: str, *names: str) -> list[asyncio.Task[int]]:
    clients = [BotClient(partial(make_bot, n.split("-")[0]), url, n) for n in names]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    for client in clients:
        await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
    return tasks


async def test_full_games_between_builtin_bots(server: MatchServer, db: Database) -> None:
    tasks = await start_bots(server.url, "random", "greedy")
    async with AdminClient(server.url, server.admin_token) as admin:
        assert [b.name for b in await admin.list_bots()] == ["greedy", "random"]
        games = [await admin.start_match(StartMatch(rules, mrx, [det], seed=i))
                 for i, (rules, mrx, det) in enumerate([
                     ("classic", "random", "greedy"), ("classic", "greedy", "random"),
                     ("grid5", "random", "greedy"), ("dash", "greedy", "greedy")])]
        results = [await admin.result(g, 60 * SCALE) for g in games]
    for game, result in zip(games, results, strict=True):
        record = db.load_game(game)
        assert result.termination in RULE_ENDINGS
        assert record.outcome.termination is result.termination
        assert record.moves == result.moves and len(record.mrx_path) == result.moves + 1
        assert all(t.fault is None for t in record.turns)
    assert len(db.list_games()) == 4
    for task in tasks:
        task.cancel()


async def test_garbage_and_oversized_frames_get_errors_and_games_go_on(
        server: MatchServer, db: Database) -> None:
    await start_bots(server.url, "random")
    rogue = await Raw.open(server.url)
    await rogue.send("not json")
    assert (await rogue.expect("error"))["code"] == "bad_json"
    await rogue.send({"type": "hello", "protocol": 1, "name": "rogue", "colour": "red"})
    assert (await rogue.expect("error"))["code"] == "extra_field"
    await rogue.send({"type": "move", "game": "g", "turn": 1, "move": "taxi:1"})
    assert (await rogue.expect("error"))["code"] == "not_authenticated"
    await rogue.send(json.dumps({"type": "ping", "nonce": 1}) + " " * 70_000)
    assert (await rogue.expect("error"))["code"] == "too_large"
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch("grid5", "random", ["random"], seed=3))
        await rogue.send(b"\xff\xfe binary junk")
        huge = await Raw.open(server.url, "huge")
        with pytest.raises(ConnectionClosed):
            await huge.send("x" * 300_000)
            await huge.expect("error")
        result = await admin.result(game, 30 * SCALE)
    assert result.termination in RULE_ENDINGS
    assert db.load_game(game).outcome.termination is result.termination


async def test_illegal_moves_stale_turns_then_a_stall_are_recorded(
        server: MatchServer, db: Database) -> None:
    await start_bots(server.url, "random")
    bad = await Raw.open(server.url, "bad")
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch(
            "classic", "bad", ["random"], seed=1, time_control=TimeControl(3.0 * SCALE),
            policy=Policy(max_illegal=5)))  # time for the three errors, even on a busy machine
        turn = await bad.expect("your_turn")
        await bad.send({"type": "move", "game": game, "turn": turn["turn"], "move": "taxi:7777"})
        assert (await bad.expect("error"))["code"] == "illegal_move"
        await bad.send({"type": "move", "game": game, "turn": turn["turn"] - 1,
                        "move": turn["legal"][0]})
        assert (await bad.expect("error"))["code"] == "stale_turn"
        await bad.send({"type": "move", "game": game, "turn": turn["turn"], "move": "d1",
                        "seat": "d1"})
        assert (await bad.expect("error"))["code"] == "not_your_seat"
        over = await bad.expect("game_over")
        result = await admin.result(game, 30 * SCALE)
    assert over["termination"] == "timeout" and over["seat"] == "mrx"
    assert result.termination is Termination.TIMEOUT
    record = db.load_game(game)
    assert record.outcome.termination is Termination.TIMEOUT
    assert record.turns[-1].fault == "timeout"
    assert "illegal_move" in (record.turns[-1].detail or "")


async def test_random_move_on_timeout_keeps_the_game_going(
        server: MatchServer, db: Database) -> None:
    await start_bots(server.url, "random")
    idle = await Raw.open(server.url, "idle")
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch(
            "grid5", "idle", ["random"], seed=2, time_control=TimeControl(0.05 * SCALE),
            policy=Policy(OnTimeout.RANDOM)))
        result = await admin.result(game, 30 * SCALE)
    await idle.ws.close()
    assert result.termination in RULE_ENDINGS
    faults = {t.fault for t in db.load_game(game).turns if t.seat == 0}
    assert faults == {"random_move_on_timeout"}


async def test_disconnect_resume_then_vanish(server: MatchServer, db: Database) -> None:
    await start_bots(server.url, "random")
    first = await Raw.open(server.url)
    await first.send({"type": "hello", "protocol": 1, "name": "flaky"})
    token = (await first.expect("welcome"))["resume_token"]
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch(
            "classic", "flaky", ["random"], seed=4, time_control=TimeControl(20.0)))
        turn = await first.expect("your_turn")
        await first.ws.close()
        second = await Raw.open(server.url, "flaky", resume=token)
        again = await second.expect("your_turn")
        assert again["turn"] == turn["turn"] and again["view"]["mrx"] == turn["view"]["mrx"]
        await second.send({"type": "move", "game": game, "turn": again["turn"],
                           "move": again["legal"][0]})
        assert (await second.expect("move_ok"))["turn"] == turn["turn"]
        await second.ws.close()
        result = await admin.result(game, 30 * SCALE)
    assert (result.termination, result.seat) == (Termination.DISCONNECTED, "mrx")
    record = db.load_game(game)
    assert record.turns[0].move == again["legal"][0]
    assert record.turns[-1].fault == "disconnected"


async def test_bot_not_connected_and_forbidden_admin(server: MatchServer) -> None:
    async with AdminClient(server.url, server.admin_token) as admin:
        with pytest.raises(AdminError) as info:
            await admin.start_match(StartMatch("grid5", "nobody", ["random"]))
    assert info.value.code.value == "bot_not_connected"
    locked = MatchServer(ServerConfig(admin_token="t0k"), None, port=0)
    await locked.start()
    try:
        for token in ("wrong", None):  # no admin without the token, on loopback too
            with pytest.raises(AdminError, match="admin token"):
                async with AdminClient(locked.url, token=token):
                    pass
        async with AdminClient(locked.url, token="t0k") as admin:
            assert await admin.list_bots() == []
    finally:
        await locked.stop()


async def test_shutdown_stores_running_games_as_aborted(db: Database) -> None:
    srv = MatchServer(ServerConfig(), GameWriter(db), port=0)
    await srv.start()
    await start_bots(srv.url, "random")
    sleepy = await Raw.open(srv.url, "sleepy")
    async with AdminClient(srv.url, srv.admin_token) as admin:
        game = await admin.start_match(StartMatch("classic", "sleepy", ["random"], seed=5,
                                                  time_control=TimeControl(60.0)))
        await sleepy.expect("your_turn")
        await srv.stop()
    assert (await sleepy.expect("game_over"))["termination"] == "aborted"
    record = db.load_game(game)
    assert record.outcome.termination is Termination.ABORTED and record.outcome.winner is None


async def test_one_bot_playing_many_games_at_once_is_never_rate_limited(db: Database) -> None:
    """Replies to turns the server sent do not count against the flood limit."""
    srv = MatchServer(ServerConfig(rate_per_s=1.0, burst=5.0), GameWriter(db), port=0)
    await srv.start()
    try:
        tasks = await start_bots(srv.url, "random")
        async with AdminClient(srv.url, srv.admin_token) as admin:
            games = [await admin.start_match(StartMatch("classic", "random", ["random"],
                                                        seed=i)) for i in range(4)]
            results = [await admin.result(g, 60 * SCALE) for g in games]
        assert all(r.termination in RULE_ENDINGS for r in results)
        assert all(t.fault is None for g in games for t in db.load_game(g).turns)
        for task in tasks:
            task.cancel()
    finally:
        await srv.stop()


async def test_start_already_decided_is_stored_with_its_rule_ending(
        server: MatchServer, db: Database) -> None:
    from game import Winner, load_ruleset

    idle = {**load_ruleset("grid5").definition(), "name": "idle",
            "detective_tickets": {"taxi": 0}}  # no detective can ever move
    tasks = await start_bots(server.url, "random", "greedy")
    async with AdminClient(server.url, server.admin_token) as admin:
        game = await admin.start_match(StartMatch(idle, "random", ["greedy"], seed=1))
        result = await admin.result(game, 30 * SCALE)
        # The bots were not broken by a game without turns: the next one is played.
        after = await admin.start_match(StartMatch("grid5", "greedy", ["random"], seed=106865))
        later = await admin.result(after, 60 * SCALE)
    assert (result.winner, result.termination, result.moves) == (
        Winner.MRX, Termination.DETECTIVES_STUCK, 0)
    record = db.load_game(game)
    assert record.outcome.termination is Termination.DETECTIVES_STUCK
    assert record.turns == [] and record.ruleset == "idle"
    sent = [m["type"] for seat in transcripts(record).values() for m in seat]
    assert "game_start" in sent and "game_over" in sent and "your_turn" not in sent
    assert later.termination in RULE_ENDINGS and later.moves > 0
    for task in tasks:
        assert not task.done()
        task.cancel()


async def test_fragmented_and_whole_frames_are_answered_in_order(server: MatchServer) -> None:
    """Whole frames skip websockets' message queue; a fragmented message switches the
    connection to websockets' own path, and replies still come in the order sent."""
    raw = await Raw.open(server.url, "frag")
    await raw.send({"type": "ping", "nonce": 1})
    await raw.ws.send(iter(['{"type": "ping",', ' "nonce": 2}']))  # two frames
    await raw.send({"type": "ping", "nonce": 3})
    await raw.ws.send(iter(['{"type": "ping", "non', 'ce": 4}']))
    nonces = [(await raw.expect("pong"))["nonce"] for _ in range(4)]
    assert nonces == [1, 2, 3, 4]


async def test_frames_in_the_handshake_packet_are_kept_for_the_handler(
        server: MatchServer) -> None:
    """hello and ping written together with the upgrade request (one TCP write) arrive
    before the connection's handler runs: they wait for it, in order."""
    import base64
    import struct

    def frame(text: str) -> bytes:
        data, mask = text.encode(), b"\x01\x02\x03\x04"
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        return struct.pack("!BB", 0x81, 0x80 | len(data)) + mask + masked

    reader, writer = await asyncio.open_connection("127.0.0.1", server.port_number)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
                 + frame('{"type":"hello","protocol":1,"name":"eager"}')
                 + frame('{"type":"ping","nonce":7}'))
    await writer.drain()
    async with asyncio.timeout(10 * SCALE):
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101")
        kinds: list[dict[str, Any]] = []
        while len(kinds) < 2:
            head = await reader.readexactly(2)
            size = head[1] & 0x7F
            if size == 126:
                size = struct.unpack("!H", await reader.readexactly(2))[0]
            kinds.append(json.loads(await reader.readexactly(size)))
    writer.close()
    assert [k["type"] for k in kinds] == ["welcome", "pong"] and kinds[1]["nonce"] == 7


async def test_text_frame_that_is_not_utf8_closes_with_1007(server: MatchServer) -> None:
    raw = await Raw.open(server.url, "badtext")
    raw.ws.protocol.send_text(b'{"type":"ping","nonce":"\xff"}')
    raw.ws.send_data()
    with pytest.raises(ConnectionClosed) as closed:
        await raw.expect("pong")
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007


def test_server_frames_are_framed_as_websockets_frames_them() -> None:
    from websockets.frames import Frame, Opcode

    from server.frames import text_header

    for size in (0, 1, 125, 126, 127, 65535, 65536, 70000):
        payload = b"x" * size
        assert text_header(size) + payload == \
            Frame(Opcode.TEXT, payload).serialize(mask=False, extensions=[])
