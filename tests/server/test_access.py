"""Who may connect (issue 24): web page origins, the admin token, bot accounts. A real
server on loopback, real websockets clients (a browser is stood in for by the ``Origin``
header it would send), real SQLite; ``yard`` commands as real processes where the test is
about them."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

import host.accounts
from bots.client import BotClient
from bots.registry import make_bot
from db.errors import DatabaseError
from db.store import Database
from db.store.accounts import token_matches
from host.accounts import AccountChecker
from host.writer import GameWriter
from protocol import StartMatch, TimeControl
from records import AccountInfo
from server.admin import AdminClient, AdminError
from server.app import MatchServer
from server.auth import AdminTokenError, check_origin, client_admin_token, origin_allowed
from server.config import ServerConfig
from server.outputs import AccountStatus, Authenticate
from tests import BACKENDS, SCALE
from tests.yard_cli import YARD, yard_here


@asynccontextmanager
async def running(config: ServerConfig, db: Database | None = None
                  ) -> AsyncIterator[MatchServer]:
    """A match server on a free loopback port; with ``db``, storing games there and
    checking accounts against it."""
    server = MatchServer(config, GameWriter(db), port=0)
    if db is not None:
        server.accounts = AccountChecker(db)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def say_hello(url: str, origin: str | None = None, **hello: Any
                    ) -> tuple[dict[str, Any], ClientConnection]:
    """Open a connection (as a page from ``origin`` would), send ``hello``; the reply and
    the connection (the caller closes it)."""
    ws = await connect(url, proxy=None, origin=None if origin is None else Origin(origin))
    await ws.send(json.dumps({"type": "hello", "protocol": 1, **hello}))
    async with asyncio.timeout(30 * SCALE):
        reply: dict[str, Any] = json.loads(await ws.recv())
    return reply, ws


async def refused(url: str, origin: str | None = None, **hello: Any) -> dict[str, Any]:
    """``hello`` that must be refused: the ``error`` reply (the server then closes)."""
    reply, ws = await say_hello(url, origin, **hello)
    assert reply["type"] == "error" and reply["ref"] == "hello", reply
    async with asyncio.timeout(30 * SCALE):
        with pytest.raises(ConnectionClosed):
            await ws.recv()
    return reply


async def welcomed(url: str, origin: str | None = None, **hello: Any
                   ) -> tuple[dict[str, Any], ClientConnection]:
    reply, ws = await say_hello(url, origin, **hello)
    assert reply["type"] == "welcome", reply
    return reply, ws


# ------------------------------------------------------------------ origins


async def test_a_page_from_another_origin_cannot_play_or_start_matches() -> None:
    async with running(ServerConfig()) as server:
        evil = "https://evil.example"
        for hello in ({"name": "random"}, {"name": "x", "role": "spectator"},
                      {"name": "admin", "role": "admin", "token": server.admin_token}):
            error = await refused(server.url, evil, **hello)
            assert error["code"] == "forbidden_origin"
            assert evil in error["message"] and "--allow-origin" in error["message"]
        # A second Origin header does not sneak past the check either (websockets itself
        # refuses the handshake).
        with pytest.raises(InvalidStatus) as info:
            await connect(server.url, proxy=None, additional_headers=[
                ("Origin", server.url.replace("ws://", "http://")), ("Origin", evil)])
        assert info.value.response.status_code == 400
        # Clients without an Origin (not browsers) are unaffected; nothing was started.
        _, bot = await welcomed(server.url, name="random")
        async with AdminClient(server.url, server.admin_token) as admin:
            assert [b.name for b in await admin.list_bots()] == ["random"]
        assert server.core.matches == {}
        await bot.close()


async def test_the_servers_own_pages_and_allowed_origins_may_connect() -> None:
    allowed = ("https://tools.example", "localhost:3000")
    async with running(ServerConfig(allowed_origins=allowed)) as server:
        own = server.url.replace("ws://", "http://")
        for origin in (own, "https://tools.example", "http://localhost:3000"):
            _, bot = await welcomed(server.url, origin, name="random")
            _, det = await welcomed(server.url, origin, name="rush")
            _, admin = await welcomed(server.url, origin, name="a", role="admin",
                                      token=server.admin_token)
            await admin.send(json.dumps({"type": "start_match", "rules": "grid5",
                                         "mrx": "random", "detectives": ["rush"]}))
            async with asyncio.timeout(30 * SCALE):
                assert json.loads(await admin.recv())["type"] == "match_started"
            for ws in (bot, det, admin):
                await ws.close()
        for origin in ("http://tools.example", "https://tools.example:8443",
                       "http://localhost:3001", "null"):
            assert (await refused(server.url, origin, name="random"))["code"] == \
                "forbidden_origin"


def test_origin_rules() -> None:
    def ok(origin: str, host: str | None, allowed: tuple[str, ...] = (),
           loopback: bool = False) -> bool:
        return origin_allowed(origin, host, [check_origin(a) for a in allowed],
                              loopback=loopback)

    assert ok("http://127.0.0.1:8765", "127.0.0.1:8765", loopback=True)
    assert ok("HTTP://LOCALHOST:8765/", "localhost:8765", loopback=True)
    assert ok("http://[::1]:8765", "[::1]:8765", loopback=True)
    assert ok("https://yard.example.org", "yard.example.org")  # default port 443
    assert ok("http://yard.example.org", "yard.example.org:80")
    assert not ok("https://yard.example.org", "yard.example.org:80")
    assert not ok("http://127.0.0.1:8766", "127.0.0.1:8765", loopback=True)
    # DNS rebinding: a foreign name pointed at 127.0.0.1 matches its own Host header, but
    # a loopback server only counts loopback names as its own.
    assert not ok("http://rebind.example:8765", "rebind.example:8765", loopback=True)
    assert ok("http://rebind.example:8765", "rebind.example:8765", loopback=False)
    assert not ok("http://a.example", None)
    assert not ok("null", "127.0.0.1:8765", loopback=True)
    assert ok("null", "127.0.0.1:8765", ("null",), loopback=True)
    assert ok("http://tools.example:9000", "x", ("tools.example:9000",))
    assert not ok("http://tools.example", "x", ("tools.example:9000",))
    assert not ok("http://user@tools.example", "x", ("tools.example",))
    for bad in ("*", "https://a.example/path", "", "ftp//x"):
        with pytest.raises(ValueError):
            check_origin(bad)


# ------------------------------------------------------------------ the admin token


def state_env(tmp_path: Path) -> dict[str, str]:
    """The environment with this test's own state folder (and no admin token)."""
    env = {k: v for k, v in os.environ.items() if k != "YARD_ADMIN_TOKEN"}
    return {**env, "XDG_STATE_HOME": str(tmp_path / "state")}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    """``yard serve`` without an admin token: (its URL, the database URL, the process)."""
    db = f"sqlite:///{tmp_path / 'served.db'}"
    proc = subprocess.Popen([*YARD, "serve", "--port", "0", "--db", db],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=state_env(tmp_path))
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on"), line
    try:
        yield line.split()[-1], db, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30 * SCALE)


def test_yard_serve_makes_a_private_admin_token_that_local_admin_commands_find(
        served: tuple[str, str, subprocess.Popen[str]], tmp_path: Path) -> None:
    url, db, proc = served
    token_file = tmp_path / "state" / "yard" / "admin-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    token = token_file.read_text().strip()
    assert len(token) >= 40
    env = state_env(tmp_path)
    bots = [subprocess.Popen([*YARD, "bot", name, "--url", url], stdout=subprocess.PIPE,
                             text=True, env=env) for name in ("random", "greedy")]
    try:
        for bot in bots:
            assert bot.stdout is not None and bot.stdout.readline().startswith("connected")
        match = subprocess.run([*YARD, "match", "--server", url, "--rules", "grid5",
                                "--mrx", "random", "--detectives", "greedy", "--json"],
                               capture_output=True, text=True, env=env, timeout=120 * SCALE)
        assert match.returncode == 0, match.stderr
        assert json.loads(match.stdout)["type"] == "match_result"
        done = subprocess.run([*YARD, "tournament", "run", "--rules", "grid5", "--server", url,
                               "--bots", "random,greedy", "--pairs", "1", "--move-time", "5",
                               "--db", db, "--json"],
                              capture_output=True, text=True, env=env, timeout=120 * SCALE)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["games"] == 2
        # Elsewhere (no token file) or with a wrong token: one clear line, exit 2 (in this
        # process: both end before any game).
        elsewhere = {**env, "XDG_STATE_HOME": str(tmp_path / "other")}
        lost = yard_here("match", "--server", url, "--mrx", "random", "--detectives",
                         "greedy", env=elsewhere)
        assert lost.returncode == 2 and lost.stderr.startswith("error: no admin token for")
        assert "--admin-token-file" in lost.stderr and lost.stderr.count("\n") == 1
        wrong = yard_here("match", "--server", url, "--mrx", "random", "--detectives",
                          "greedy", "--admin-token", "guess", env=elsewhere)
        assert wrong.returncode == 2 and "admin token" in wrong.stderr
        given = subprocess.run([*YARD, "match", "--server", url, "--mrx", "random",
                                "--detectives", "greedy", "--admin-token-file",
                                str(token_file), "--rules", "grid5"],
                               capture_output=True, text=True, env=elsewhere,
                               timeout=120 * SCALE)
        assert given.returncode == 0, given.stderr
    finally:
        for bot in bots:
            bot.terminate()
            bot.wait(timeout=30 * SCALE)
    proc.terminate()
    _, err = proc.communicate(timeout=30 * SCALE)
    assert f"admin token in {token_file}" in err and token not in err


def test_an_admin_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("s3cret-token\n")
    path.chmod(0o644)
    serve = subprocess.run([*YARD, "serve", "--port", "0", "--admin-token-file", str(path),
                            "--db", f"sqlite:///{tmp_path / 'x.db'}"], capture_output=True,
                           text=True, env=state_env(tmp_path), timeout=60 * SCALE)
    assert serve.returncode == 2 and serve.stderr.count("\n") == 1
    assert "may be read by other users" in serve.stderr and "chmod 600" in serve.stderr
    assert not (tmp_path / "x.db").exists()  # refused before the database is opened


def test_client_admin_token_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    (tmp_path / "yard").mkdir()
    (tmp_path / "yard" / "admin-token").write_text("from-default\n")
    (tmp_path / "mine").write_text("from-file\n")
    assert client_admin_token("ws://127.0.0.1:1", "given") == "given"
    assert client_admin_token("ws://127.0.0.1:1", None, tmp_path / "mine") == "from-file"
    assert client_admin_token("ws://localhost:1") == "from-default"
    with pytest.raises(AdminTokenError, match="only read for servers on this machine"):
        client_admin_token("ws://yard.example.org:8765")  # never sent to another host


# ------------------------------------------------------------------ accounts


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The account tests run on a SQLite file, and on a PostgreSQL schema when
    YARD_TEST_POSTGRES_URL is set (tests/db/test_db_postgres.py)."""
    if "db" in metafunc.fixturenames:
        metafunc.parametrize("db", BACKENDS, indirect=True)


async def test_account_names_need_their_tokens_also_to_resume_and_not_once_revoked(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    alice, bob = db.add_account("alice"), db.add_account("bob")
    config = ServerConfig(accounts=True, bot_tokens={"fixed": "f1"}, grace_s=30.0)
    async with running(config, db) as server:
        url = server.url
        assert "no account" in (await refused(url, name="mallory", token="x"))["message"]
        for token in (None, bob, alice + "x"):
            error = await refused(url, name="alice", token=token)
            assert error["code"] == "bad_token" and "account's token" in error["message"]
        assert (await refused(url, name="fixed", token=alice))["code"] == "bad_token"
        _, fixed = await welcomed(url, name="fixed", token="f1")  # token-file names work
        first, ws_a = await welcomed(url, name="alice", token=alice)
        _, ws_b = await welcomed(url, name="bob", token=bob)
        assert db.account("alice").last_used is not None  # type: ignore[union-attr]
        async with AdminClient(url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("grid5", "alice", ["bob"], seed=1,
                                                      time_control=TimeControl(60.0)))
        await ws_a.close()
        # A resume needs the account's token too; with it, the game is back.
        error = await refused(url, name="alice", resume=first["resume_token"])
        assert error["code"] == "bad_token"
        back, ws_a = await welcomed(url, name="alice", token=alice,
                                    resume=first["resume_token"])
        assert back["resumed"] == [game]
        # Revoked in the database (as `yard accounts revoke` does from another process):
        # refused from the next hello on, resumes included.
        db.revoke_account("alice")
        await ws_a.close()
        error = await refused(url, name="alice", token=alice, resume=back["resume_token"])
        assert "revoked" in error["message"]
        assert "revoked" in (await refused(url, name="alice", token=alice))["message"]
        rotated = db.rotate_account("bob")
        assert (await refused(url, name="bob", token=bob))["code"] == "bad_token"
        _, ws_b2 = await welcomed(url, name="bob", token=rotated)
        for ws in (fixed, ws_b, ws_b2):
            await ws.close()
    for secret in (alice, bob, rotated):
        assert secret not in caplog.text


async def test_open_registration_binds_a_new_name_to_its_first_client(
        db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db.add_account("taken")
    config = ServerConfig(accounts=True, open_registration=True, bot_tokens={"fixed": "f"})
    async with running(config, db) as server:
        url = server.url
        tokens: list[str] = []
        client = BotClient(lambda: make_bot("random"), url, "newbie", register=True,
                           on_token=tokens.append)
        task = asyncio.create_task(client.run())
        async with asyncio.timeout(30 * SCALE):
            await client.connected.wait()
        assert len(tokens) == 1 and client.token == tokens[0] and not client.register
        account = db.account("newbie")
        assert account is not None and account.source == "registration" and account.active
        # Nobody else can take the name now: not by registering, not without the token.
        for name in ("newbie", "taken", "fixed"):
            assert (await refused(url, name=name, register=True))["code"] == "name_taken"
        assert (await refused(url, name="newbie"))["code"] == "bad_token"
        _, again = await welcomed(url, name="newbie", token=tokens[0])
        await again.close()
        # The registered client's connection drops: it comes back with its new token.
        first = client.session
        assert client._ws is not None
        client._ws.transport.abort()
        async with asyncio.timeout(30 * SCALE):
            while client.session == first or not client.connected.is_set():
                await asyncio.sleep(0.01)
        client.stopped = True
        task.cancel()
        assert (await refused(url, name="x", role="admin", register=True))["code"] == \
            "bad_value"
    async with running(ServerConfig(accounts=True), db) as closed:
        error = await refused(closed.url, name="other", register=True)
        assert error["code"] == "forbidden" and "--open-registration" in error["message"]
    assert tokens[0] not in caplog.text


async def test_the_yard_bot_register_flag_keeps_the_token_in_a_private_file(
        db: Database, tmp_path: Path) -> None:
    config = ServerConfig(accounts=True, open_registration=True)
    async with running(config, db) as server:
        token_file = tmp_path / "me" / "token"
        argv = [*YARD, "bot", "random", "--url", server.url, "--name", "mine",
                "--register", "--token-file", str(token_file)]
        for run in range(2):  # the second run finds the file and just connects
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            assert proc.stdout is not None and proc.stderr is not None
            async with asyncio.timeout(60 * SCALE):
                line = await proc.stdout.readline()
            assert line.startswith(b"connected as mine"), line
            proc.terminate()
            _, err = await proc.communicate()
            token = token_file.read_text().strip()
            assert token.encode() not in err
            assert (b"registered 'mine'" in err) == (run == 0)
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        _, ws = await welcomed(server.url, name="mine", token=token)
        await ws.close()


SDK_BOT = """
from bots.sdk import Bot, run

class Coin(Bot):
    name = "coin"

    def choose(self, view, legal):
        return self.rng.choice(legal)

run(Coin)
"""


async def test_an_sdk_bot_registers_and_prints_its_token_once(db: Database,
                                                                tmp_path: Path) -> None:
    script = tmp_path / "coin.py"
    script.write_text(SDK_BOT)
    async with running(ServerConfig(accounts=True, open_registration=True), db) as server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(script), "--url", server.url, "--register",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        async with asyncio.timeout(60 * SCALE):
            assert (await proc.stdout.readline()).startswith(b"connected as coin")
        proc.terminate()
        _, err = await proc.communicate()
        token = err.decode().strip().splitlines()[-1]
        assert b"registered 'coin'" in err and b"shown only now" in err
        _, ws = await welcomed(server.url, name="coin", token=token)
        await ws.close()


async def test_per_account_limits_on_connections_and_games(db: Database) -> None:
    alice, bob = db.add_account("alice"), db.add_account("bob")
    config = ServerConfig(accounts=True, max_account_connections=2, max_account_games=1)
    async with running(config, db) as server:
        url = server.url
        _, a1 = await welcomed(url, name="alice", token=alice)
        _, a2 = await welcomed(url, name="alice", token=alice)
        error = await refused(url, name="alice", token=alice)
        assert error["code"] == "account_limit" and "at most 2" in error["message"]
        _, b1 = await welcomed(url, name="bob", token=bob)
        async with AdminClient(url, server.admin_token) as admin:
            await admin.start_match(StartMatch("grid5", "alice", ["bob"], seed=1,
                                               time_control=TimeControl(60.0)))
            with pytest.raises(AdminError) as info:
                await admin.start_match(StartMatch("grid5", "bob", ["alice"], seed=2,
                                                   time_control=TimeControl(60.0)))
        assert info.value.code.value == "account_limit" and "at most 1" in str(info.value)
        await a1.close()  # a connection freed: another one may come
        async with asyncio.timeout(30 * SCALE):
            while sum(s.account == "alice" and s.conn is not None
                      for s in server.core.sessions.values()) > 1:
                await asyncio.sleep(0.01)
        _, a3 = await welcomed(url, name="alice", token=alice)
        for ws in (a2, a3, b1):
            await ws.close()


class _Spy:
    """A store that notes on which thread the account is read."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.threads: list[threading.Thread] = []

    def account(self, name: str) -> AccountInfo | None:
        self.threads.append(threading.current_thread())
        return self.db.account(name)

    def add_account(self, name: str, source: str = "cli") -> str:
        return self.db.add_account(name, source)

    def account_like(self, name: str) -> str | None:
        return self.db.account_like(name)

    def touch_account(self, name: str, when: datetime | None = None) -> None:
        self.db.touch_account(name, when)


async def test_account_checks_run_off_the_loop_and_hash_a_token_once(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    token = db.add_account("alice")
    hashed: list[str] = []
    real = token_matches

    def counting(given: str, stored: str) -> bool:
        hashed.append(given)
        return real(given, stored)

    monkeypatch.setattr(host.accounts, "token_matches", counting)
    spy = _Spy(db)
    checker = AccountChecker(spy)
    try:
        for _ in range(3):
            verdict = await checker.verify(Authenticate(1, "alice", token))
            assert verdict.status is AccountStatus.OK
        wrong = await checker.verify(Authenticate(1, "alice", token[:-1] + "x"))
        assert wrong.status is AccountStatus.WRONG_TOKEN
        assert len(hashed) == 1  # scrypt once; then the remembered digest
        new = db.rotate_account("alice")  # a new stored hash: the memo no longer counts
        assert (await checker.verify(Authenticate(1, "alice", token))).status is \
            AccountStatus.WRONG_TOKEN
        assert (await checker.verify(Authenticate(1, "alice", new))).status is \
            AccountStatus.OK
        assert len(hashed) == 3
        assert spy.threads and threading.main_thread() not in spy.threads
    finally:
        checker.close()


class _Broken:
    """An account store whose database is gone."""

    def account(self, name: str) -> AccountInfo | None:
        raise DatabaseError("database x: cannot read an account: disk I/O error")

    def add_account(self, name: str, source: str = "cli") -> str:
        raise DatabaseError("database x: cannot add an account: disk I/O error")

    def account_like(self, name: str) -> str | None:
        raise DatabaseError("database x: cannot read account names: disk I/O error")

    def touch_account(self, name: str, when: object = None) -> None:
        raise DatabaseError("database x: cannot note an account's use")


async def test_a_database_failure_is_a_clear_refusal_and_the_server_goes_on() -> None:
    server = MatchServer(ServerConfig(accounts=True), None, port=0)
    server.accounts = AccountChecker(_Broken())
    await server.start()
    try:
        error = await refused(server.url, name="alice", token="t")
        assert error["code"] == "accounts_unavailable"
        _, watcher = await welcomed(server.url, name="fan", role="spectator")
        await watcher.close()
    finally:
        await server.stop()


def test_yard_serve_with_accounts_and_yard_bot_with_a_token_file(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'served.db'}"
    env = state_env(tmp_path)
    add = subprocess.run([*YARD, "accounts", "add", "alice", "--db", db], capture_output=True,
                         text=True, env=env, timeout=60 * SCALE)
    assert add.returncode == 0, add.stderr
    token_file = tmp_path / "alice.token"
    token_file.write_text(add.stdout)
    server = subprocess.Popen([*YARD, "serve", "--port", "0", "--db", db, "--accounts"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        bot = subprocess.Popen([*YARD, "bot", "random", "--url", url, "--name", "alice",
                                "--token-file", str(token_file)], stdout=subprocess.PIPE,
                               text=True, env=env)
        assert bot.stdout is not None and bot.stdout.readline().startswith("connected")
        bot.terminate()
        bot.wait(timeout=30 * SCALE)
        stranger = subprocess.run([*YARD, "bot", "random", "--url", url, "--name", "alice"],
                                  capture_output=True, text=True, env=env,
                                  timeout=60 * SCALE)
        assert stranger.returncode == 2 and stranger.stderr.count("\n") == 1
        assert stranger.stderr.startswith("error: server refused 'alice'")
    finally:
        server.terminate()
        server.wait(timeout=30 * SCALE)
