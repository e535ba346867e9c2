"""The match server hosted in a thread of the calling process (host/hosted.py), as
``yard tournament run`` and ``yard match`` run it: real websocket clients on its own event
loop, a real SQLite file, and what it leaves in its log."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from db.errors import DatabaseError
from db.store import Database
from game import Termination
from host.hosted import HostedServer, HostedServerError, server_config
from host.run import ServerConfigError
from protocol import StartMatch, TimeControl
from server.admin import AdminClient
from tests import SCALE
from tests.server.test_server import Raw, start_bots


def _hosted(tmp_path: Path) -> HostedServer:
    config = server_config("127.0.0.1", admin_token="secret")
    return HostedServer(config, f"sqlite:///{tmp_path / 'yard.db'}",
                        log_path=tmp_path / "server.log")


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "yard-hosted-server"]


async def test_games_are_played_stored_and_the_log_says_how_many(tmp_path: Path) -> None:
    hosted = _hosted(tmp_path)
    url = await asyncio.to_thread(hosted.start)
    assert url.startswith("ws://127.0.0.1:") and hosted.url == url
    bots = await start_bots(url, "random", "greedy")
    async with AdminClient(url, "secret") as admin:
        games = [await admin.start_match(StartMatch("grid5", "random", ["greedy"], seed=s))
                 for s in range(3)]
        results = [await admin.result(g, 60 * SCALE) for g in games]
    await hosted.stop_async()
    for task in bots:
        task.cancel()
    assert not _server_threads()
    assert hosted.closing_line == "stopped; 3 games stored"
    assert "stopped; 3 games stored" in (tmp_path / "server.log").read_text()
    db = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    try:
        for game, result in zip(games, results, strict=True):
            assert db.load_game(game).outcome.termination is result.termination
    finally:
        db.close()


async def _sleepy_game(url: str, admin: AdminClient, seed: int) -> Raw:
    """A classic game between ``random`` and a hand-driven Mister X who never moves, started
    and waiting on his first turn; returns his client."""
    await start_bots(url, "random")
    sleepy = await Raw.open(url, "sleepy")
    await admin.start_match(StartMatch("classic", "sleepy", ["random"], seed=seed,
                                       time_control=TimeControl(60.0)))
    await sleepy.expect("your_turn")
    return sleepy


def _stored_terminations(tmp_path: Path) -> list[Termination]:
    db = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    try:
        return [db.load_game(row.game_id).outcome.termination for row in db.results()]
    finally:
        db.close()


async def test_stopping_aborts_and_stores_a_running_game(tmp_path: Path) -> None:
    hosted = _hosted(tmp_path)
    url = await asyncio.to_thread(hosted.start)
    async with AdminClient(url, "secret") as admin:
        sleepy = await _sleepy_game(url, admin, seed=5)
        await hosted.stop_async()  # with the admin client still connected
    assert (await sleepy.expect("game_over"))["termination"] == "aborted"
    assert _stored_terminations(tmp_path) == [Termination.ABORTED]


async def test_cancelled_while_stopping_it_still_stores_the_games(tmp_path: Path) -> None:
    hosted = _hosted(tmp_path)
    url = await asyncio.to_thread(hosted.start)
    async with AdminClient(url, "secret") as admin:
        await _sleepy_game(url, admin, seed=6)
    stopping = asyncio.create_task(hosted.stop_async())
    await asyncio.sleep(0)  # let it begin
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert not _server_threads() and hosted.closing_line == "stopped; 1 games stored"
    assert _stored_terminations(tmp_path) == [Termination.ABORTED]


def test_a_port_in_use_is_a_clear_error_and_creates_no_database(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        hosted = HostedServer(server_config("127.0.0.1", admin_token="secret"),
                              f"sqlite:///{tmp_path / 'yard.db'}", port=port)
        with pytest.raises(ServerConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            hosted.start()
    assert not (tmp_path / "yard.db").exists()
    assert not _server_threads()
    hosted.stop()  # nothing to stop: no error
    # Once the port is free, the same server starts, serves and stops.
    url = hosted.start()
    assert url == f"ws://127.0.0.1:{port}" and _server_threads()
    hosted.stop()
    assert not _server_threads() and hosted.closing_line == "stopped; 0 games stored"


def test_a_database_it_cannot_open_is_raised_and_no_thread_is_left(tmp_path: Path) -> None:
    (tmp_path / "not-a-db").write_text("this is not SQLite " * 100)
    hosted = HostedServer(server_config("127.0.0.1", admin_token="secret"),
                          f"sqlite:///{tmp_path / 'not-a-db'}")
    with pytest.raises(DatabaseError):
        hosted.start()
    assert not _server_threads()
    with pytest.raises(HostedServerError, match="started already"):
        started = _hosted(tmp_path)
        started.start()
        try:
            started.start()
        finally:
            started.stop()


async def test_server_warnings_go_to_its_log_not_to_the_host(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    hosted = _hosted(tmp_path)
    url = await asyncio.to_thread(hosted.start)
    # It serves: a frame it cannot read is answered with a structured error.
    async with connect(url, proxy=None) as ws:
        await ws.send("{not json")
        reply = json.loads(await ws.recv())
        assert reply["type"] == "error"
    logging.getLogger("server.app").warning("a warning of the hosted server")
    await hosted.stop_async()
    assert "a warning of the hosted server" in (tmp_path / "server.log").read_text()
    assert "a warning of the hosted server" not in capfd.readouterr().err
    # Once stopped, its handler is gone: the host's own logging is as it was.
    assert not any(isinstance(h, logging.FileHandler)
                   for h in logging.getLogger("server").handlers)
