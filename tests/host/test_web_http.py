"""The HTTP side says what is wrong, truthfully and at once (issue 25): bounded integer
parameters answered 400, ``HEAD`` answered like ``GET``, over-long requests refused in HTTP
terms, a tournament's (team) players found in the games list, and a running game's moves so
far in its spectator snapshot (public information only). Real match server, real SQLite,
real HTTP and websockets."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from websockets.asyncio.server import ServerConnection, serve

from db.store import Database
from host.web.http import WebApp
from host.web.listings import MAX_OFFSET
from protocol import StartMatch, TimeControl
from server.admin import AdminClient
from server.gate import HttpConnection
from tests.host.web_helpers import (
    TEAM,
    Seeded,
    get,
    get_json,
    hello,
    play_turns,
    running_server,
)

GRID5_REVEALS = {3, 6, 9, 12, 15}


# Every test runs on the seeded database with the team tournament added.
pytestmark = pytest.mark.usefixtures("team_tid")


def _raw(base: str, request: bytes) -> bytes:
    """Send ``request`` as it is to the server at ``base``; everything it answers."""
    host, port = base.removeprefix("http://").rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


async def test_integer_parameters_are_bounded_with_a_400(
        seeded: Seeded, caplog: pytest.LogCaptureFixture) -> None:
    """Item 18: every integer query parameter is checked against its bounds before any
    query: a number too large for the database (it answered 500 with a traceback), a
    negative one, and forms Python's int() takes but a URL should not (``1_0``, ``+5``,
    non-ASCII digits) are a 400 ``bad_request`` that says what is allowed."""
    caplog.set_level(logging.WARNING)
    async with running_server(seeded.url) as (_, _app, base):
        for bad in ("offset=99999999999999999999999", f"offset={MAX_OFFSET + 1}",
                    "offset=-1", "offset=1_0", "offset=%2B5", "offset=%D9%A3",
                    "offset=1e3", "offset=0x10", "limit=99999999999999999999999",
                    "limit=-99999999999999999999999", "limit=501", "limit=0", "limit=",
                    "limit=%20"):
            status, body = await get_json(f"{base}api/games?{bad}")
            if bad in ("limit=", "limit=%20"):  # empty: the default
                assert status == 200 and body["limit"] == 50, bad
                continue
            assert status == 400, (bad, body)
            assert body["error"]["code"] == "bad_request"
            name = bad.split("=")[0]
            assert body["error"]["message"].startswith(f"{name} must be an integer from "), bad
        status, body = await get_json(f"{base}api/games?offset={MAX_OFFSET}&limit=500")
        assert status == 200 and body["games"] == [] and body["offset"] == MAX_OFFSET
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith(("server", "db"))], caplog.text
    assert "Traceback" not in caplog.text


async def test_head_answers_like_get_without_a_body(seeded: Seeded) -> None:
    """Item 20: ``HEAD`` of a page, a static file or an API endpoint answers as ``GET``
    does (status, type, length), without the body (it answered 405)."""
    async with running_server(seeded.url) as (_, _app, base):
        for path in ("/", "/static/app.js", "/api/games?limit=2", "/api/nothing",
                     "/api/games?offset=-1"):
            got = await asyncio.to_thread(get, base.rstrip("/") + path)
            request = f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            raw = await asyncio.to_thread(_raw, base, request)
            head, _, body = raw.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = dict(line.split(": ", 1) for line in lines[1:])
            assert lines[0].split()[1] == str(got[0]), path
            assert headers["Content-Type"] == got[1]["Content-Type"]
            assert headers["Content-Length"] == str(len(got[2])) and body == b"", path
        raw = await asyncio.to_thread(_raw, base, b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD" in raw


async def test_over_long_requests_are_refused_in_http_terms(
        seeded: Seeded, tmp_path: Path) -> None:
    """Item 20: a request line over websockets' limit (8192 bytes) is a 414 that talks
    about the address (it said "Failed to open a WebSocket connection"), and too many
    header lines a 431 in the same terms, on the match server's port and on ``yard web``'s
    connection class alike."""
    async with running_server(seeded.url) as (_, _app, base):
        long_line = b"GET /api/games?player=" + b"x" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        raw = await asyncio.to_thread(_raw, base, long_line)
        assert raw.startswith(b"HTTP/1.1 414 "), raw[:200]
        body = raw.partition(b"\r\n\r\n")[2].decode()
        assert "WebSocket" not in body and "request line" in body and "8192" in body
        many = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 200 + b"\r\n"
        raw = await asyncio.to_thread(_raw, base, many)
        assert raw.startswith(b"HTTP/1.1 431 ")
        assert b"WebSocket" not in raw and b"header lines" in raw
        # A websocket handshake that fails for a websocket reason keeps its own words.
        bad = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        raw = await asyncio.to_thread(_raw, base, bad)
        assert raw.startswith(b"HTTP/1.1 4") and b"WebSocket" in raw
    # `yard web` serves with HttpConnection (host/run.py): the same words.
    app = WebApp(seeded.url, websockets=False)
    try:
        async with serve(_never, "127.0.0.1", 0, process_request=app.process_request,
                         create_connection=HttpConnection) as pages:
            port = pages.sockets[0].getsockname()[1]
            raw = await asyncio.to_thread(_raw, f"http://127.0.0.1:{port}/", long_line)
            assert raw.startswith(b"HTTP/1.1 414 ") and b"WebSocket" not in raw
    finally:
        app.close()


async def _never(ws: ServerConnection) -> None:  # every request above is plain HTTP
    await ws.close()


async def test_a_team_player_finds_its_games(seeded: Seeded, team_tid: str) -> None:
    """Item 14: the leaderboard names a tournament's player (``random/greedy``: Mister X
    ``random``, detectives ``greedy``); the games list filtered by that name lists its
    games (it listed none: games name the bots that played), and each game names the
    players of both sides (``entrants``) next to the bots."""
    data, tid = seeded, team_tid
    async with running_server(data.url) as (_, _app, base):
        _, board = await get_json(f"{base}api/leaderboard?tournament={tid}")
        [section] = board["rulesets"]
        assert TEAM in [row["player"] for row in section["rows"]]
        status, games = await get_json(f"{base}api/games?player={quote(TEAM, safe='')}")
        assert status == 200 and games["total"] == 4 == len(games["games"])
        for game in games["games"]:
            assert TEAM in game["entrants"].values() and game["tournament_id"] == tid
            side = "mrx" if game["entrants"]["mrx"] == TEAM else "detectives"
            bot = game["mrx_player"] if side == "mrx" else game["detective_player"]
            assert bot == ("random" if side == "mrx" else "greedy")
        # Bots are still found by their own names; games outside a schedule name the bots.
        _, greedy = await get_json(f"{base}api/games?player=greedy&tournament={tid}")
        assert greedy["total"] == 2
        _, classic = await get_json(f"{base}api/games?rules=classic")
        assert classic["games"][0]["entrants"] == {"mrx": "random", "detectives": "random"}


async def test_live_snapshot_has_the_public_moves_so_far(tmp_path: Path) -> None:
    """Item 19: ``/api/live/ID`` holds every move so far (``moves``) exactly as a
    spectator watching from the start got them in ``update`` messages, so a page opened
    mid-game shows the game from move 1; Mister X's moves as tickets, stations on reveal
    moves only, and nothing else hidden anywhere in the snapshot."""
    url = f"sqlite:///{tmp_path / 'live.db'}"
    Database.connect(url).close()
    async with running_server(url) as (served, _app, base):
        ws_url = base.replace("http://", "ws://").rstrip("/")
        x, d = await hello(ws_url, "x"), await hello(ws_url, "d")
        watcher = await hello(ws_url, "watcher", "spectator")
        try:
            async with AdminClient(ws_url, served.admin_token) as admin:
                game = await admin.start_match(StartMatch(
                    "grid5", "x", ["d"], 11, None, TimeControl(120.0, 0.0)))
                _, snap = await get_json(f"{base}api/live/{game}")
                assert snap["moves"] == []
                await watcher.send(json.dumps({"type": "watch", "game": game}))
                while json.loads(await watcher.recv())["type"] != "watching":
                    pass
                turns = 3 * 8  # Mister X's first 8 moves (2 detectives in grid5)
                async with asyncio.timeout(60):
                    await play_turns(game, x, d, turns)
                    updates: list[dict[str, Any]] = []
                    while len(updates) < turns:
                        msg = json.loads(await watcher.recv())
                        if msg["type"] == "update":
                            updates.append({k: msg[k] for k in ("turn", "seat", "move")})
                _, snap = await get_json(f"{base}api/live/{game}")
                assert snap["moves"] == updates
                assert [m["turn"] for m in snap["moves"]] == list(range(1, turns + 1))
                # Mister X's moves: a ticket per leg, the station only on reveal slots,
                # and there the true one (public from then on).
                truth = [station for _, station in served.core.matches[game].state.log]
                slot = 0
                for move in (m["move"] for m in snap["moves"] if m["seat"] == "mrx"):
                    for leg in move.split("+"):
                        slot += 1
                        ticket, _, station = leg.partition(":")
                        assert ticket in ("taxi", "bus", "underground", "secret")
                        assert (station != "") == (slot in GRID5_REVEALS), (slot, move)
                        assert station in ("", str(truth[slot - 1]))
                assert slot == len(truth) >= 8
                assert snap["view"]["seat"] is None and "mrx" not in snap["view"]
        finally:
            for ws in (x, d, watcher):
                await ws.close()
