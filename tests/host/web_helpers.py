"""Shared pieces of the web tests: a seeded SQLite database of real engine games and a real
match server (websockets + pages on one port) running in the test's event loop."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import Move, Ticket, from_text
from game.rules import ruleset_from_dict
from host.web.http import WebApp, web_url
from host.writer import GameWriter
from protocol import StartMatch, TimeControl
from ratings.sprt import SprtSpec, evaluate
from records import GameRecord
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from tournament.schedule import make_schedule, mrx_bot, team_members

XSS = "<img src=x onerror=alert(1)>"
PLAYERS = ["random", "greedy", XSS]
CLASSIC_GAME = "classic-double-secret"


@dataclass
class Seeded:
    """What :func:`seed_database` stored."""

    url: str
    tournament_id: str
    classic: GameRecord


def _bot(name: str) -> Any:
    return make_bot("random" if name == XSS else name)


def classic_record(game_id: str = CLASSIC_GAME) -> GameRecord:
    """A real classic game (random bots) in which Mister X played both a double move and a
    secret ticket, the first seed that gives one."""
    for seed in range(200):
        result = play_game("classic", make_bot("random"), [make_bot("random")], seed=seed)
        mrx_moves = [m for seat, m in result.moves if seat == 0]
        if any(m.ticket2 is not None for m in mrx_moves) and any(
                Ticket.SECRET in (m.ticket, m.ticket2) for m in mrx_moves) and len(
                mrx_moves) >= 6:
            record = record_from_moves(game_id, result.start, result.moves,
                                       {0: "random", 1: "random"}, result.outcome, seed=seed)
            # Per-move measurements and a fault, as the server stores them.
            first, second = record.turns[0], record.turns[1]
            first.fault, first.detail = "random_move_on_timeout", "timed out (details)"
            first.time_used, first.playouts = 1.25, 321
            second.time_used, second.nodes, second.depth = 0.5, 4096, 3
            return record
    raise AssertionError("no classic game with a double and a secret move")


def seed_database(path: Path) -> Seeded:
    """A grid5 round robin (2 pairs, one bot named like an XSS attack) and one classic game
    with a double and a secret move."""
    url = f"sqlite:///{path}"
    with Database.connect(url) as store:
        tid = store.create_tournament({"rules": "grid5", "bots": PLAYERS, "pairs": 2,
                                       "format": "round-robin"})
        for entry in store.schedule(tid, make_schedule(PLAYERS, pairs=2, seed=3)):
            detectives = [_bot(n) for n in team_members(entry.detectives)]
            result = play_game("grid5", _bot(mrx_bot(entry.mrx)), detectives, seed=entry.seed)
            record = record_from_moves(f"t-{entry.index}", result.start, result.moves,
                                       {0: entry.mrx, 1: entry.detectives}, result.outcome,
                                       seed=entry.seed)
            record.schedule_id = entry.schedule_id
            store.save_game(record)
        classic = classic_record()
        store.save_game(classic)
        # The SPRT state as the tournament runner stores it with a tournament.
        sprt = evaluate(SprtSpec(0.0, 10.0), [1, 2, 5, 2, 2], players=("greedy", "random"))
        store.update_tournament_state(tid, sprt=sprt.to_dict())
    return Seeded(url, tid, classic)


TEAM = "random/greedy"
"""A tournament player whose Mister X is ``random`` and whose detectives are ``greedy``."""


def add_team_tournament(url: str) -> str:
    """Store a finished grid5 tournament (2 pairs) between the team :data:`TEAM` and
    ``random``, dealt from a secret key (published on its page: 64 hex digits, one
    unbreakable word); returns its id. Its games name the bots that played (``random``,
    ``greedy``); the leaderboard names the players (``random/greedy``)."""
    players = [TEAM, "random"]
    with Database.connect(url) as store:
        tid = store.create_tournament({"rules": "grid5", "bots": players, "pairs": 2,
                                       "format": "round-robin", "seed": None,
                                       "secret": "5e" * 32})
        for entry in store.schedule(tid, make_schedule(players, pairs=2, seed=5)):
            mrx = mrx_bot(entry.mrx)
            detectives = team_members(entry.detectives)
            result = play_game("grid5", make_bot(mrx), [make_bot(n) for n in detectives],
                               seed=entry.seed)
            record = record_from_moves(f"team-{entry.index}", result.start, result.moves,
                                       {0: mrx, 1: detectives[0]}, result.outcome,
                                       seed=entry.seed)
            record.schedule_id = entry.schedule_id
            store.save_game(record)
    return tid


def truth_path(record: GameRecord) -> list[tuple[int, int]]:
    """(Mister X's station, travel-log length) after every turn of ``record``, start
    first."""
    state = from_text(record.start_position, ruleset_from_dict(record.ruleset_definition))
    out = [(state.mrx_station, state.move_number)]
    for turn in record.turns:
        if turn.move is not None:
            state = state.apply(Move.parse(turn.move))
        out.append((state.mrx_station, state.move_number))
    return out


@asynccontextmanager
async def running_server(db_url: str) -> AsyncIterator[tuple[MatchServer, WebApp, str]]:
    """A match server with the pages, storing into ``db_url``; yields (server, app,
    http base address)."""
    store = Database.connect(db_url)
    server = MatchServer(ServerConfig(), GameWriter(store), port=0)
    app = WebApp(db_url, live=server.core)
    server.process_request = app.process_request
    url = await server.start()
    try:
        yield server, app, web_url(url)
    finally:
        await server.stop()
        app.close()
        store.close()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """A blocking GET: (status, headers, body); HTTP errors are returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


async def get_json(url: str, *, ready: bool = False) -> tuple[int, Any]:
    """GET off the event loop (the server runs on it) and decode JSON. ``ready``: while
    the answer is a 503 (``computing``, ``busy``: the server asks to come back), ask again
    a moment later, for at most a minute."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        status, _, body = await asyncio.to_thread(get, url)
        if not (ready and status == 503) or asyncio.get_running_loop().time() > deadline:
            return status, json.loads(body)
        await asyncio.sleep(0.2)  # what Retry-After asks for: the answer is being computed


async def hello(url: str, name: str, role: str = "bot") -> ClientConnection:
    """A websocket connection to the match server at ``url``, welcomed as ``name``."""
    ws = await connect(url)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name, "role": role}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def play_turns(game: str, mrx: ClientConnection, detectives: ClientConnection,
                     turns: int) -> None:
    """Answer the next ``turns`` turns of ``game``: Mister X with his first legal move,
    the detectives with their last (with seed 11 on grid5 the game outlasts 8 Mister X
    moves, as in the browser's live test)."""
    pending = {asyncio.ensure_future(ws.recv()): ws for ws in (mrx, detectives)}
    played = 0
    try:
        while played < turns:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                ws = pending.pop(task)
                msg = json.loads(task.result())
                assert msg["type"] != "game_over", msg
                if msg["type"] == "your_turn" and msg["game"] == game and played < turns:
                    move = msg["legal"][0 if ws is mrx else -1]
                    await ws.send(json.dumps({"type": "move", "game": game,
                                              "turn": msg["turn"], "move": move}))
                    played += 1
                pending[asyncio.ensure_future(ws.recv())] = ws
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


@dataclass
class LiveGame:
    """A grid5 game being played on a real server (:func:`live_grid5_game`)."""

    base: str
    game: str
    mrx: ClientConnection
    detectives: ClientConnection

    async def play(self, turns: int) -> None:
        """Answer its next ``turns`` turns (:func:`play_turns`)."""
        await play_turns(self.game, self.mrx, self.detectives, turns)


@asynccontextmanager
async def live_grid5_game(folder: Path, turns: int) -> AsyncIterator[LiveGame]:
    """A match server with the pages on a fresh database in ``folder``, running a grid5
    game (seed 11, 120 s a move) between the clients ``x`` and ``d`` after ``turns``
    turns of it."""
    url = f"sqlite:///{folder / 'live.db'}"
    Database.connect(url).close()
    async with running_server(url) as (served, _app, base):
        ws_url = base.replace("http://", "ws://").rstrip("/")
        x, d = await hello(ws_url, "x"), await hello(ws_url, "d")
        try:
            async with AdminClient(ws_url, served.admin_token) as admin:
                game = await admin.start_match(StartMatch(
                    "grid5", "x", ["d"], 11, None, TimeControl(120.0, 0.0)))
                live = LiveGame(base, game, x, d)
                await live.play(turns)
                yield live
        finally:
            await x.close()
            await d.close()
