"""Hostile clients against a real server over loopback: nothing they do stops the server
for others or loses a result. Real websockets clients, real SQLite, real sockets."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

import host.writer as writer_module
from bots.client import BotClient
from bots.registry import make_bot
from db.portable import from_portable
from db.store import Database
from host.writer import GameWriter
from protocol import StartMatch, TimeControl
from protocol.messages import Policy
from server.admin import AdminClient, AdminError
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE

ROOT = Path(__file__).resolve().parents[2]


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait (polling) until ``condition()`` holds; fail after ``timeout`` seconds (only to
    turn a hang into a failure, so generous for a busy machine)."""
    async with asyncio.timeout(timeout * SCALE):
        while not condition():
            await asyncio.sleep(0.01)


class Client:
    """A hand-driven protocol client."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, name: str | None = None, max_queue: int | None = None,
                   **hello: Any) -> Client:
        client = cls(await connect(url, proxy=None, max_size=2**22, max_queue=max_queue))
        if name is not None:
            await client.send({"type": "hello", "protocol": 1, "name": name, **hello})
            assert (await client.expect("welcome"))["session"]
        return client

    async def send(self, msg: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(json.dumps(msg) if isinstance(msg, dict) else msg)

    async def next(self, timeout: float = 30.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout * SCALE):
            data: dict[str, Any] = json.loads(await self.ws.recv())
            return data

    async def expect(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        """Read frames until one of type ``kind`` arrives."""
        async with asyncio.timeout(timeout * SCALE):
            while True:
                msg = await self.next(timeout)
                if msg["type"] == kind:
                    return msg

    async def closed(self, timeout: float = 30.0) -> tuple[int | None, str]:
        """Read until the server closes; the close code and reason."""
        async with asyncio.timeout(timeout * SCALE):
            with pytest.raises(ConnectionClosed) as info:
                while True:
                    await self.ws.recv()
        rcvd = info.value.rcvd
        return (rcvd.code, rcvd.reason) if rcvd is not None else (None, "")


async def running(config: ServerConfig, sink: Database | None = None) -> MatchServer:
    server = MatchServer(config, GameWriter(sink), port=0)
    await server.start()
    return server


async def start_bots(url: str, *names: str, token: str | None = None
                     ) -> list[asyncio.Task[int]]:
    clients = [BotClient(partial(make_bot, n), url, n, token=token) for n in names]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    for client in clients:
        await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
    return tasks


# ---------------------------------------------------------------- slow readers, idle sockets


async def test_a_spectator_that_does_not_read_is_disconnected_and_its_buffer_freed() -> None:
    """On a token-protected server a spectator needs no token; flooding ``watch`` without
    reading fills its outbox up to the bound, then it is dropped: the server's queued
    bytes never pass the bound and the game and other spectators go on."""
    limit = 256 * 1024
    server = await running(ServerConfig(bot_tokens={"sleepy": "s3"}, max_send_bytes=limit,
                                        rate_per_s=100_000, burst=100_000))
    try:
        sleepy = await Client.open(server.url, "sleepy", token="s3")
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch(
                "classic", "sleepy", ["sleepy"], seed=1, time_control=TimeControl(60.0)))
            await sleepy.expect("your_turn")
            hog = await Client.open(server.url, "hog", max_queue=2, role="spectator")
            peak = 0
            for _ in range(2000):  # ~ 2000 snapshots of several KiB: far over the bound
                await hog.send({"type": "watch", "game": game})
                peak = max(peak, server.queued_bytes)
            await until(lambda: server.overflows == 1 and len(server.core.conns) == 2)
            assert peak <= limit and server.queued_bytes <= limit
            fan = await Client.open(server.url, "fan", role="spectator")
            await fan.send({"type": "watch", "game": game})
            assert (await fan.expect("watching"))["game"] == game
            await sleepy.send({"type": "ping", "nonce": 5})
            assert (await sleepy.expect("pong"))["nonce"] == 5
    finally:
        await server.stop()


async def test_connections_without_hello_are_closed_after_the_hello_timeout() -> None:
    # Long enough for the prompt client's hello on a busy machine.
    server = await running(ServerConfig(hello_timeout_s=2.0 * SCALE))
    try:
        # A bare TCP socket that never finishes the HTTP handshake (checked below; its
        # deadline runs meanwhile).
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port_number)
        idle = await Client.open(server.url)
        prompt = await Client.open(server.url, "prompt")
        code, reason = await idle.closed()
        assert code == 1008 and "no hello" in reason
        # The prompt client is past the same deadline and still served.
        await prompt.send({"type": "ping", "nonce": 1})
        assert (await prompt.expect("pong"))["nonce"] == 1
        # The bare socket is dropped too.
        async with asyncio.timeout(10 * SCALE):
            assert await reader.read() == b""
        writer.close()
        await until(lambda: server.open_sockets == 1)
    finally:
        await server.stop()


# ---------------------------------------------------------------- caps and descriptors


async def test_connection_caps_refuse_with_503_and_free_slots_are_reused() -> None:
    server = await running(ServerConfig(max_connections=5, max_per_address=3,
                                        hello_timeout_s=30.0))
    try:
        first = [await Client.open(server.url, f"c{i}") for i in range(3)]
        with pytest.raises(InvalidStatus) as info:
            await Client.open(server.url)
        assert info.value.response.status_code == 503
        assert b"per address" in info.value.response.body
        await first[0].ws.close()
        await until(lambda: server.open_sockets == 2)
        again = await Client.open(server.url, "again")
        await again.send({"type": "ping", "nonce": 2})
        assert (await again.expect("pong"))["nonce"] == 2
    finally:
        await server.stop()
    total = await running(ServerConfig(max_connections=2, max_per_address=100,
                                       hello_timeout_s=30.0))
    try:
        kept = [await Client.open(total.url, f"k{i}") for i in range(2)]
        with pytest.raises(InvalidStatus) as info:
            await Client.open(total.url)
        assert b"server limit 2" in info.value.response.body
        # Far over the cap, sockets are dropped at once (no 503: no descriptor spent).
        raw = [await asyncio.open_connection("127.0.0.1", total.port_number)
               for _ in range(16)]
        await until(lambda: total.open_sockets == 18)
        reader, writer = await asyncio.open_connection("127.0.0.1", total.port_number)
        async with asyncio.timeout(15 * SCALE):  # not the handshake timeout's 30 s
            assert await reader.read() == b""
        for _, w in [*raw, (reader, writer)]:
            w.close()
        await kept[0].send({"type": "ping", "nonce": 3})
        assert (await kept[0].expect("pong"))["nonce"] == 3
    finally:
        await total.stop()


EMFILE_SERVER = """
import asyncio, os, resource, sys
from server.app import MatchServer
from server.config import ServerConfig
from server.logs import configure

configure()

async def main():
    server = MatchServer(ServerConfig(max_connections=5000, max_per_address=5000), None,
                         port=0)
    url = await server.start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    used = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (used + 4, hard))
    print(url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print("released", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    await server.stop()

asyncio.run(main())
"""


async def test_out_of_file_descriptors_logs_one_line_not_a_traceback_flood(
        tmp_path: Path) -> None:
    """A server whose descriptors run out keeps going: asyncio pauses accept(), the
    server logs one short line per attempt (thinned out), and once descriptors are free
    again real clients are served."""
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log_file:
        proc = subprocess.Popen([sys.executable, "-c", EMFILE_SERVER], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=log_file, text=True)
        try:
            assert proc.stdout is not None and proc.stdin is not None
            url = (await asyncio.to_thread(proc.stdout.readline)).strip()
            port = int(url.rsplit(":", 1)[1])
            flood = [await asyncio.open_connection("127.0.0.1", port) for _ in range(60)]
            await until(lambda: "cannot accept" in log_path.read_text())
            proc.stdin.write("release\n")
            proc.stdin.flush()
            assert (await asyncio.to_thread(proc.stdout.readline)).strip() == "released"
            for _, writer in flood:
                writer.close()
            client = await Client.open(url, "after-the-flood")
            await client.send({"type": "ping", "nonce": 9})
            assert (await client.expect("pong"))["nonce"] == 9
            await client.ws.close()
            proc.stdin.write("stop\n")
            proc.stdin.flush()
            assert await asyncio.to_thread(proc.wait, 30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = log_path.read_text()
    assert "Traceback" not in text
    assert 1 <= text.count("cannot accept connections") <= 5


def test_yard_serve_raises_its_open_file_limit_for_the_connection_cap(
        tmp_path: Path) -> None:
    """Started with a soft limit of 256 (hard 4096), ``yard serve`` raises it to what
    --max-connections needs, and lowers the cap when the hard limit is too low."""
    import resource

    def limits(soft: int, hard: int) -> Callable[[], None]:
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    for (soft, hard), expect_soft, warned in [((256, 4096), 2000 + 250 + 128, False),
                                              ((256, 512), 512, True)]:
        ready = tmp_path / f"ready-{hard}"
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("yard")), "serve", "--port", "0", "--db",
             f"sqlite:///{tmp_path / 'limits.db'}", "--ready-file", str(ready),
             "--max-connections", "2000"],
            preexec_fn=limits(soft, hard), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        try:
            deadline = time.monotonic() + 30 * SCALE
            while not ready.exists():  # polling for the server's ready file
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            line = next(x for x in Path(f"/proc/{proc.pid}/limits").read_text().splitlines()
                        if x.startswith("Max open files"))
            assert line.split()[3] == str(expect_soft)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
        assert ("too low for --max-connections 2000" in err) is warned


# ---------------------------------------------------------------- results are never lost


async def test_a_game_that_cannot_be_stored_is_kept_and_reported_as_an_error(
        db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tried three times, without the back-off between the tries.
    monkeypatch.setattr(writer_module, "STORE_RETRIES_S", (0.0, 0.0))
    path = tmp_path / "yard.db"
    with sqlite3.connect(path) as raw:  # a real failure: the turns table is gone
        raw.execute("ALTER TABLE turns RENAME TO turns_gone")
    writer = GameWriter(db)
    writer.fallback_path = tmp_path / "unsaved.jsonl"
    server = MatchServer(ServerConfig(), writer, port=0)
    await server.start()
    try:
        tasks = await start_bots(server.url, "random")
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("grid5", "random", ["random"], seed=7))
            with pytest.raises(AdminError) as info:
                await admin.result(game, 60 * SCALE)
        for task in tasks:
            task.cancel()
    finally:
        await server.stop()
    assert info.value.code.value == "store_failed" and "unsaved.jsonl" in str(info.value)
    assert (writer.games_saved, writer.store_failures) == (0, 1)
    kept = from_portable(json.loads(writer.fallback_path.read_text()))
    assert kept.record.game_id == game and kept.record.moves > 0
    with sqlite3.connect(path) as raw:
        raw.execute("ALTER TABLE turns_gone RENAME TO turns")
    assert db.list_games() == []  # nothing half-stored


async def test_names_that_cannot_be_stored_are_refused_at_hello(
        db: Database) -> None:
    server = await running(ServerConfig(), db)
    try:
        client = await Client.open(server.url)
        for name in ['"x\\udfff"', '"' + "n" * 65 + '"', '"line\\nbreak"', '""']:
            await client.send('{"type": "hello", "protocol": 1, "name": ' + name + "}")
            error = await client.expect("error")
            assert error["code"] == "bad_value", name
        await client.send('{"type": "hello", "protocol": 1, "name": "ok", '
                          '"version": "\\udfff"}')
        assert (await client.expect("error"))["code"] == "bad_value"
        await client.send({"type": "hello", "protocol": 1, "name": "n" * 64,
                           "version": "v" * 64, "instance": "i" * 64})
        assert (await client.expect("welcome"))["resumed"] == []
    finally:
        await server.stop()


# ---------------------------------------------------------------- resume tokens


async def test_a_resume_token_works_once_and_only_with_its_bot_name_and_token() -> None:
    server = await running(ServerConfig(bot_tokens={"alice": "a1", "mallory": "m1"}))
    try:
        alice = await Client.open(server.url)
        await alice.send({"type": "hello", "protocol": 1, "name": "alice", "token": "a1"})
        stolen = (await alice.expect("welcome"))["resume_token"]
        thief = await Client.open(server.url)
        await thief.send({"type": "hello", "protocol": 1, "name": "mallory", "token": "m1",
                          "resume": stolen})
        assert (await thief.expect("error"))["code"] == "bad_resume_token"
        thief = await Client.open(server.url)
        await thief.send({"type": "hello", "protocol": 1, "name": "alice",
                          "resume": stolen})
        assert (await thief.expect("error"))["code"] == "bad_token"
        await alice.send({"type": "ping", "nonce": 1})  # the owner was not kicked off
        assert (await alice.expect("pong"))["nonce"] == 1
        back = await Client.open(server.url)
        await back.send({"type": "hello", "protocol": 1, "name": "alice", "token": "a1",
                         "resume": stolen})
        fresh = (await back.expect("welcome"))["resume_token"]
        assert fresh != stolen
        assert (await alice.closed())[1] == "session resumed on another connection"
        replay = await Client.open(server.url)
        await replay.send({"type": "hello", "protocol": 1, "name": "alice", "token": "a1",
                           "resume": stolen})
        assert (await replay.expect("error"))["code"] == "bad_resume_token"
    finally:
        await server.stop()


# ---------------------------------------------------------------- protocol as documented


async def test_server_only_types_binary_frames_and_early_pings_are_violations() -> None:
    server = await running(ServerConfig(max_violations=4))
    try:
        client = await Client.open(server.url)
        await client.send({"type": "ping", "nonce": 1})
        assert (await client.next())["code"] == "not_authenticated"
        await client.send(b'{"type": "hello", "protocol": 1, "name": "bin"}')
        assert (await client.next())["code"] == "bad_json"
        await client.send({"type": "welcome", "session": "s", "resume_token": "r",
                           "server": "me", "protocol": 1})
        assert (await client.next())["code"] == "unknown_type"
        await client.send({"type": "match_result", "game": "g", "winner": None,
                           "termination": "aborted", "seat": None, "moves": 0})
        assert (await client.next())["code"] == "unknown_type"
        code, reason = await client.closed()
        assert code == 1008 and "violations (4)" in reason
        huge = await Client.open(server.url, "huge")
        await huge.send("x" * 300_000)
        assert (await huge.closed())[0] == 1009
    finally:
        await server.stop()


async def test_only_admin_connections_start_matches_even_on_an_open_loopback_server() -> None:
    server = await running(ServerConfig())
    try:
        for role in ("bot", "spectator"):
            client = await Client.open(server.url, f"not-admin-{role}", role=role)
            await client.send({"type": "list_bots"})
            assert (await client.expect("error"))["code"] == "forbidden"
            await client.send({"type": "start_match", "rules": "grid5", "mrx": "x",
                               "detectives": ["y"]})
            assert (await client.expect("error"))["code"] == "forbidden"
        async with AdminClient(server.url, server.admin_token) as admin:
            assert [b.name for b in await admin.list_bots()] == ["not-admin-bot"]
    finally:
        await server.stop()


ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


async def test_moves_in_non_canonical_spellings_are_bad_moves(db: Database) -> None:
    server = await running(ServerConfig(), db)
    try:
        await start_bots(server.url, "random")
        bot = await Client.open(server.url, "strict")
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch(
                "classic", "strict", ["random"], seed=3, time_control=TimeControl(60.0),
                policy=Policy(max_illegal=50)))
            turn = await bot.expect("your_turn")
            move = next(m for m in turn["legal"] if "+" not in m and int(m.split(":")[1]) > 9)
            ticket, station = move.split(":")
            spellings = [move.upper(), f" {move}", f"{move} ", f"{ticket}: {station}",
                         f"{ticket}:0{station}", f"{ticket}:{station[0]}_{station[1:]}",
                         f"{ticket}:{station.translate(ARABIC)}", f"black:{station}",
                         f"ug:{station}", f"{ticket.capitalize()}:{station}",
                         f"{ticket}:+{station}"]
            for text in spellings:
                await bot.send({"type": "move", "game": game, "turn": turn["turn"],
                                "move": text})
                error = await bot.expect("error")
                assert error["code"] == "bad_move", text
            await bot.send({"type": "move", "game": game, "turn": turn["turn"],
                            "move": move})
            assert (await bot.expect("move_ok"))["move"] == move
    finally:
        await server.stop()


async def test_a_player_watching_its_own_game_gets_each_update_once(db: Database) -> None:
    server = await running(ServerConfig(), db)
    try:
        await start_bots(server.url, "random")
        bot = await Client.open(server.url, "watcher")
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch(
                "grid5", "watcher", ["random"], seed=5, time_control=TimeControl(60.0)))
            first = await bot.expect("your_turn")
            await bot.send({"type": "watch", "game": game})
            await bot.expect("watching")
            seen: list[tuple[str, int]] = []
            pending: list[dict[str, Any]] = [first]
            while True:
                msg = pending.pop() if pending else await bot.next()
                if msg["type"] == "your_turn":
                    await bot.send({"type": "move", "game": game, "turn": msg["turn"],
                                    "move": msg["legal"][0]})
                elif msg["type"] in ("update", "game_over"):
                    seen.append((msg["type"], msg.get("turn", -1)))
                    if msg["type"] == "game_over":
                        break
            await admin.result(game, 60 * SCALE)
    finally:
        await server.stop()
    assert len(seen) == len(set(seen)) and seen[-1][0] == "game_over" and len(seen) > 2


def test_repeated_log_lines_are_thinned_out_with_a_count(tmp_path: Path) -> None:
    """1000 identical errors (with tracebacks) through the server's filter write at most
    ``burst`` lines in a period; the next period's first line counts the rest; other
    messages are not held back by them."""
    import logging

    from server.logs import RateLimitFilter

    now = [0.0]
    handler = logging.FileHandler(tmp_path / "server.log")
    handler.addFilter(RateLimitFilter(period=10.0, burst=3, clock=lambda: now[0]))
    logger = logging.getLogger("yard.test.flood")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for i in range(1000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.exception("accept failed (attempt %d)", i)
        logger.error("something else")
        now[0] = 11.0
        logger.error("accept failed (attempt %d)", 1000)
    finally:
        logger.removeHandler(handler)
        handler.close()
    lines = (tmp_path / "server.log").read_text().splitlines()
    assert sum("accept failed" in x for x in lines) == 4
    assert sum("Traceback" in x for x in lines) == 3
    assert "something else" in lines
    assert lines[-1] == ("accept failed (attempt 1000) (997 similar lines suppressed in "
                         "the last 10 s)")


def test_serve_loop_choice_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--loop uvloop`` runs on uvloop (installed with yard except on Windows); where it
    is missing, a one-line error (exit 2) and ``auto`` falls back to asyncio."""
    import asyncio as asyncio_module

    import uvloop

    from host.run import ServerConfigError, event_loop_runner

    assert event_loop_runner("asyncio") is asyncio_module.run
    assert event_loop_runner("auto") is uvloop.run
    assert event_loop_runner("uvloop") is uvloop.run
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as on a machine without it
    assert event_loop_runner("auto") is asyncio_module.run
    with pytest.raises(ServerConfigError, match="uvloop is not installed"):
        event_loop_runner("uvloop")
