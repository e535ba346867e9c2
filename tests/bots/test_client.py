"""Bot clients as real processes: `yard bot`, `yard serve`, `yard match`, and resume."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from bots.base import Bot
from bots.client import BotClient, ClientError, read_frame, run_on_loop
from bots.registry import make_bot
from db.store import Database
from game import Move, Termination, View
from host.writer import GameWriter
from protocol import Ping, ProtocolError, StartMatch, decode
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE
from tests.yard_cli import yard_here
from tournament.processes import Child, start_bot, start_server, yard_argv

RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}


async def test_yard_bot_processes_play_many_games_at_once(tmp_path: Path) -> None:
    db = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    server = MatchServer(ServerConfig(), GameWriter(db), port=0)
    await server.start()
    # The default loop (uvloop) and the standard one.
    bots = [await start_bot("random", server.url),
            await start_bot("greedy", server.url, "--name", "greedy-v2", "--version", "2",
                            "--loop", "asyncio")]
    try:
        async with AdminClient(server.url, server.admin_token) as admin:
            assert {b.name for b in await admin.list_bots()} == {"random", "greedy-v2"}
            games = [await admin.start_match(StartMatch("classic", mrx, [det], seed=i))
                     for i, (mrx, det) in enumerate([("random", "greedy-v2"),
                                                     ("greedy-v2", "random")] * 2)]
            results = await asyncio.gather(*(admin.result(g, 60 * SCALE) for g in games))
    finally:
        codes = [await bot.stop() for bot in bots]
        await server.stop()
    assert codes == [0, 0]
    assert {r.termination for r in results} <= RULE_ENDINGS
    record = db.load_game(games[1])
    assert (record.mrx_player, record.seats[0].bot_version) == ("greedy-v2", "2")
    db.close()


async def test_yard_serve_and_yard_match_as_processes(tmp_path: Path) -> None:
    url_db = f"sqlite:///{tmp_path / 'served.db'}"
    ready = tmp_path / "ready.txt"
    server, url = await start_server(url_db, "--ready-file", str(ready))
    bot: Child | None = None
    try:
        assert ready.read_text().strip() == url
        bot = await start_bot("random", url)
        proc = await asyncio.create_subprocess_exec(
            *yard_argv("match", "--server", url, "--rules", "grid5", "--mrx", "random",
                       "--detectives", "random", "--seed", "9", "--json"),
            stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), 60 * SCALE)
        assert proc.returncode == 0
        result = json.loads(out)
        assert result["type"] == "match_result" and result["termination"] != "aborted"
    finally:
        if bot is not None:
            await bot.stop()
        assert await server.stop() == 0
    stored = Database.connect(url_db)
    assert stored.load_game(result["game"]).outcome.termination.value == result["termination"]
    stored.close()


def test_user_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    unknown = subprocess.run(yard_argv("bot", "nosuchbot", "--url", "ws://127.0.0.1:1"),
                             capture_output=True, text=True, timeout=60 * SCALE)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown bot")
    bad_tokens = tmp_path / "tokens.toml"
    bad_tokens.write_text("[bots]\nalice = 3\n")
    serve = subprocess.run(yard_argv("serve", "--port", "0", "--token-file", str(bad_tokens)),
                           capture_output=True, text=True, timeout=60 * SCALE)
    assert serve.returncode == 2 and "token file" in serve.stderr
    assert "Traceback" not in unknown.stderr + serve.stderr


async def test_bad_token_is_refused_at_hello() -> None:
    server = MatchServer(ServerConfig(bot_tokens={"random": "s3cret"}), None, port=0)
    await server.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            *yard_argv("bot", "random", "--url", server.url, "--token", "nope"),
            stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 60 * SCALE)
        assert proc.returncode == 2 and b"needs a valid token" in err
        good = await start_bot("random", server.url, "--token", "s3cret")
        await good.stop()
    finally:
        await server.stop()


async def test_client_resumes_after_a_dropped_connection() -> None:
    server = MatchServer(ServerConfig(grace_s=5.0 * SCALE), None, port=0)
    await server.start()
    clients = [BotClient(lambda: make_bot("random"), server.url, n) for n in ("a", "b")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        for client in clients:
            await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("classic", "a", ["b"], seed=3))
            session = clients[0].session
            ws = clients[0]._ws
            assert ws is not None
            await ws.close()  # drop mid-game; the client must resume the same session
            result = await admin.result(game, 60 * SCALE)
        assert clients[0].session == session
        assert result.termination in RULE_ENDINGS
    finally:
        for task in tasks:
            task.cancel()
        await server.stop()


def test_yard_bots_lists_builtin_bots() -> None:
    out = subprocess.run([sys.executable, "-c",
                          "from yard.cli import main; main(['bots', '--json'])"],
                         capture_output=True, text=True, timeout=120 * SCALE, check=True)
    rows = {row["name"]: row["roles"] for row in json.loads(out.stdout)}
    assert rows["random"] == ["detectives", "mrx"] and rows["run"] == ["mrx"]
    # --only: just those bots (names that are no bots are left out).
    only = subprocess.run(
        [sys.executable, "-c", "from yard.cli import main; main(['bots', '--json', "
         "'--only', 'alphabeta', '--only', 'nosuchbot', '--check', 'alphabeta:depth=2'])"],
        capture_output=True, text=True, timeout=120 * SCALE, check=True)
    assert [row["name"] for row in json.loads(only.stdout)] == ["alphabeta"]


def test_yard_match_without_server_starts_everything_itself(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'local.db'}"
    out = subprocess.run(yard_argv("match", "--rules", "grid5", "--mrx", "random",
                                   "--detectives", "greedy", "--seed", "4", "--db", db_url,
                                   "--json"),
                         capture_output=True, text=True, timeout=120 * SCALE, check=True)
    result = json.loads(out.stdout)
    assert result["termination"] in {t.value for t in RULE_ENDINGS}
    stored = Database.connect(db_url)
    assert stored.load_game(result["game"]).mrx_player == "random"
    stored.close()


def test_serve_checks_options_before_creating_the_database(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "yard.db"
    db = f"sqlite:///{path}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        cases = [(["--port", "-1"], "'--port': -1 is not in the range 0<=x<=65535"),
                 (["--port", "70000"], "'--port'"),
                 (["--port", "0", "--move-time", "0"], "'--move-time'"),
                 (["--port", "0", "--grace", "-1"], "'--grace'"),
                 (["--port", busy], "cannot listen on 127.0.0.1:" + busy)]
        for args, message in cases:
            if args == ["--port", busy]:  # a real `yard serve` that gets as far as listening
                done = subprocess.run(yard_argv("serve", *args, "--db", db),
                                      capture_output=True, text=True, timeout=60 * SCALE)
            else:  # refused while the options are read: in this process
                done = yard_here("serve", *args, "--db", db)
            assert done.returncode == 2, (args, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
            assert not path.exists(), args


class _Recording(Bot):
    """A random bot that notes the thread of every ``choose``."""

    name = "recording"

    def __init__(self, threads: list[int]) -> None:
        super().__init__(1)
        self.threads = threads

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        self.threads.append(threading.get_ident())
        return self.rng.choice(legal)


class _FastRecording(_Recording):
    fast = True


class _Heir(_FastRecording):
    """Inherits ``fast`` without setting it: not fast (a subclass may add a search)."""


async def test_fast_bots_choose_on_the_loop_and_others_in_a_thread(tmp_path: Path) -> None:
    """Over a real server: a bot marked ``fast`` answers every turn on the client's event
    loop thread, any other bot (a subclass of a fast bot included) in a worker thread; both
    play the game to a rule ending."""
    db = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    server = MatchServer(ServerConfig(), GameWriter(db), port=0)
    await server.start()
    fast: list[int] = []
    slow: list[int] = []
    clients = [BotClient(lambda: _FastRecording(fast), server.url, "fast"),
               BotClient(lambda: _Heir(slow), server.url, "slow")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        for client in clients:
            await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
        async with AdminClient(server.url, server.admin_token) as admin:
            games = [await admin.start_match(StartMatch("grid5", mrx, [det], seed=5))
                     for mrx, det in (("fast", "slow"), ("slow", "fast"))]
            results = [await admin.result(g, 60 * SCALE) for g in games]
    finally:
        for task in tasks:
            task.cancel()
        await server.stop()
    assert {r.termination for r in results} <= RULE_ENDINGS
    loop_thread = threading.get_ident()
    assert fast and set(fast) == {loop_thread}
    assert slow and loop_thread not in set(slow)
    stored = [db.load_game(g) for g in games]
    assert sum(len(r.turns) for r in stored) == len(fast) + len(slow)
    assert all(t.fault is None for r in stored for t in r.turns)
    db.close()


def test_read_frame_skips_ignored_types_and_reads_your_turn_as_decode_does() -> None:
    turn = {"type": "your_turn", "game": "g", "turn": 3, "seat": "d1",
            "view": {"any": [1, 2]}, "legal": ["taxi:4", "bus:12"],
            "clock": {"move_s": 2, "bank_s": 0.5}, "newer_field": True}
    text = json.dumps(turn)
    assert read_frame(text) == decode(text, strict=False)
    assert read_frame(text.encode()) == decode(text, strict=False)
    # Ignored types are not validated (a broken update costs nothing and raises nothing).
    assert read_frame('{"type": "update", "game": 7}') is None
    assert read_frame('{"type": "move_ok"}') is None
    # Anything odd goes to the generic decoder and its errors.
    for bad in ({**turn, "turn": "3"}, {**turn, "legal": ["taxi:4", 5]},
                {**turn, "clock": {"move_s": True, "bank_s": 1}}):
        with pytest.raises(ProtocolError):
            read_frame(json.dumps(bad))
    with pytest.raises(ProtocolError, match="unknown message type"):
        read_frame('{"type": "from_the_future"}')
    with pytest.raises(ProtocolError, match="not valid JSON"):
        read_frame("{nope")
    assert read_frame('{"type": "ping", "nonce": 7}') == Ping(7)


def test_run_on_loop_picks_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` is uvloop (installed with yard except on Windows), ``asyncio`` the standard
    loop; where uvloop is missing ``auto`` is asyncio and ``uvloop`` a ClientError, as is an
    unknown name."""
    async def which() -> int:
        return 1 if "uvloop" in type(asyncio.get_running_loop()).__module__ else 0

    assert run_on_loop(which(), "asyncio") == 0
    assert run_on_loop(which(), "auto") == 1
    assert run_on_loop(which(), "uvloop") == 1
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "uvloop", None)  # as on a machine without it
        assert run_on_loop(which(), "auto") == 0
        with pytest.raises(ClientError, match="uvloop is not installed"):
            run_on_loop(which(), "uvloop")
    with pytest.raises(ClientError, match="unknown event loop"):
        run_on_loop(which(), "trio")
