"""The pages and API publish nothing private: a game whose paired game (same deal) is still
to be played, a tournament's secret deal key before it is finished, engine commands, paths
and the database URL. Real match server with its pages (and a real ``yard web`` on the same
database), real websocket bots, real SQLite, real HTTP."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import serve

import host.web.http as web_http
from db.store import Database, forfeit_record
from game import Outcome, Termination, Winner, load_ruleset
from host.web.http import WebApp
from protocol import StartMatch, TimeControl
from records import ScheduledGame
from server.admin import AdminClient
from tests.host.web_helpers import get, get_json, running_server
from tournament.engines import parse_engine
from tournament.spec import TournamentSpec, create

YARD = str(Path(sys.executable).with_name("yard"))
WITHHELD = "its paired game is still being played"


async def _bot(url: str, name: str) -> ClientConnection:
    ws = await connect(url)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name, "role": "bot"}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _play_out(game: str, *bots: ClientConnection) -> None:
    """Answer every turn of ``game`` with its first legal move until it is over."""
    async def play(ws: ClientConnection) -> None:
        while True:
            msg = json.loads(await ws.recv())
            if msg["type"] == "game_over" and msg["game"] == game:
                return
            if msg["type"] == "your_turn" and msg["game"] == game:
                await ws.send(json.dumps({"type": "move", "game": game, "turn": msg["turn"],
                                          "move": msg["legal"][0]}))

    await asyncio.gather(*(play(ws) for ws in bots))


def _start(tid: str, entry: ScheduledGame) -> StartMatch:
    """The runner's request for schedule entry ``entry`` (a same-deal pair)."""
    return StartMatch("grid5", entry.mrx, [entry.detectives], entry.seed, None,
                      TimeControl(60.0, 0.0), tournament_id=tid,
                      schedule_id=entry.schedule_id)


@asynccontextmanager
async def yard_web(db_url: str, tmp_path: Path) -> AsyncIterator[str]:
    """``yard web`` on ``db_url`` in a process of its own; yields its page address."""
    proc = await asyncio.create_subprocess_exec(
        YARD, "web", "--db", db_url, "--port", "0", stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line.startswith("web pages at "), line
        yield line.split()[-1]
    finally:
        proc.terminate()
        await proc.wait()


def _keys(value: Any) -> set[str]:
    """Every key of every object in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


async def test_a_game_is_withheld_while_its_paired_game_is_played(tmp_path: Path) -> None:
    """Game A of a same-deal pair is stored; while its twin B is being played, no endpoint
    of the match server or of a ``yard web`` on the same database shows A (it has B's
    start, Mister X's included), and the secret deal key stays private. Once B is over
    both are shown, and the finished tournament publishes its key."""
    url = f"sqlite:///{tmp_path / 'pair.db'}"
    with Database.connect(url) as store:
        tid = create(store, TournamentSpec(rules="grid5", bots=["x", "d"], pairs=1,
                                           pairing="same-deal", move_time=60.0))
        entries = store.scheduled(tid)
        secret = store.get_tournament(tid).spec["secret"]
    assert len(entries) == 2 and entries[0].pair_key == entries[1].pair_key
    assert isinstance(secret, str) and len(secret) >= 16
    async with running_server(url) as (server, _app, base), yard_web(url, tmp_path) as other:
        x, d = await _bot(server.url, "x"), await _bot(server.url, "d")
        async with AdminClient(server.url, server.admin_token) as admin:
            first = await admin.start_match(_start(tid, entries[0]))
            await _play_out(first, x, d)
            await admin.result(first, timeout=60)
            second = await admin.start_match(_start(tid, entries[1]))
            with Database.connect(url) as store:
                start = store.load_game(first).start_position
            bodies = []
            for address in (base, other):
                for perspective in ("all", "mrx", "detectives"):
                    status, body = await get_json(
                        f"{address}api/games/{first}?perspective={perspective}")
                    assert status == 404 and body["error"]["code"] == "withheld"
                    assert WITHHELD in body["error"]["message"]
                for path in ("games", f"games?tournament={tid}", "games?limit=500",
                             f"leaderboard?tournament={tid}", f"matrix?tournament={tid}",
                             "leaderboard", "matrix", "tournaments", f"tournaments/{tid}",
                             "live", f"live/{second}"):
                    status, _, raw = await asyncio.to_thread(get, f"{address}api/{path}")
                    assert status == 200 or (address == other and path.startswith("live/"))
                    bodies.append((path, raw.decode()))
                _, listing = await get_json(f"{address}api/games?tournament={tid}")
                assert listing["total"] == 0 and listing["games"] == []
                _, board = await get_json(f"{address}api/leaderboard?tournament={tid}")
                assert board.get("rulesets", []) == []
                _, tour = await get_json(f"{address}api/tournaments/{tid}")
                assert tour["deals"] == {"kind": "secret", "seed": None, "secret": None}
                assert "secret" not in tour["spec"] and "seed" not in tour["spec"]
                assert tour["played"] == 1  # progress is public, the game is not
            for path, text in bodies:
                assert first not in text and start not in text and secret not in text, path
            _, snapshot = await get_json(f"{base}api/live/{second}")
            assert snapshot["view"]["seat"] is None and "mrx" not in snapshot["view"]
            assert not {"seed", "mrx_seed", "start", "mrx_path"} & _keys(snapshot)
            for move in snapshot["moves"]:  # the moves so far: Mister X's as tickets only
                assert move["seat"] != "mrx" or ":" not in move["move"], move
            _, live = await get_json(f"{base}api/live")
            assert not {"seed", "mrx_seed"} & _keys(live)
            await _play_out(second, x, d)
            await admin.result(second, timeout=60)
        for address in (base, other):
            for game in (first, second):
                status, replay = await get_json(f"{address}api/games/{game}")
                assert status == 200 and replay["game_id"] == game
            _, listing = await get_json(f"{address}api/games?tournament={tid}")
            assert {g["game_id"] for g in listing["games"]} == {first, second}
            _, board = await get_json(f"{address}api/leaderboard?tournament={tid}")
            assert [b["games"] for b in board["rulesets"]] == [2]
            _, tour = await get_json(f"{address}api/tournaments/{tid}")
            assert tour["status"] == "finished"
            assert tour["deals"] == {"kind": "secret", "seed": None, "secret": secret}
        await x.close()
        await d.close()


async def test_aborted_and_never_played_twins(tmp_path: Path) -> None:
    """An aborted twin leaves its entry to be played again (same deal): both it and its
    pair's stored game stay withheld. A pair is shown once both entries are done; a
    tournament the runner ends early (an SPRT decision) shows every game."""
    url = f"sqlite:///{tmp_path / 'abort.db'}"
    aborted = Outcome(None, Termination.ABORTED)
    forfeit = Outcome(Winner.DETECTIVES, Termination.DISCONNECTED, 0)
    with Database.connect(url) as store:
        tid = create(store, TournamentSpec(rules="grid5", bots=["x", "d"], pairs=2,
                                           pairing="same-deal"))
        by_pair: dict[str, list[ScheduledGame]] = {}
        for entry in store.scheduled(tid):
            by_pair.setdefault(entry.pair_key, []).append(entry)
        (a0, b0), (a1, _b1) = by_pair.values()
        store.record_forfeit(tid, a0, forfeit, "never connected")
        store.save_game(forfeit_record(tid, b0, aborted, "server stopped", rules="grid5",
                                       game_id="b0-aborted"))
        store.record_forfeit(tid, a1, forfeit, "never connected")
    g_a0, g_a1 = f"{tid}-{a0.index}-forfeit", f"{tid}-{a1.index}-forfeit"
    async with running_server(url) as (_server, app, base):
        async def shown() -> set[str]:
            _, listing = await get_json(f"{base}api/games?tournament={tid}")
            assert listing["total"] == len(listing["games"])
            for game in (g_a0, g_a1, "b0-aborted"):
                status, body = await get_json(f"{base}api/games/{game}")
                assert (status == 200) == (game in {g["game_id"] for g in listing["games"]})
                assert status == 200 or body["error"]["code"] == "withheld"
            return {g["game_id"] for g in listing["games"]}

        assert await shown() == set()
        with Database.connect(url) as store:
            store.record_forfeit(tid, b0, forfeit, "never connected")
        g_b0 = f"{tid}-{b0.index}-forfeit"
        assert await shown() == {g_a0, g_b0, "b0-aborted"}
        with Database.connect(url) as store:
            store.update_tournament_state(tid, finished=True)  # as an SPRT decision does
        assert await shown() == {g_a0, g_b0, "b0-aborted", g_a1}
        computed = app.withheld.computed  # computed again only when it may have changed
        assert await shown() == {g_a0, g_b0, "b0-aborted", g_a1}
        assert app.withheld.computed == computed


async def test_tournaments_publish_no_commands_paths_or_secrets(tmp_path: Path) -> None:
    """A tournament with ``--engine`` bots (a command holding an API key, a class file),
    bot options holding a path and a ruleset file: the API shows names and public
    settings only; ``deals`` says which kind (a seeded one shows its seed)."""
    private = tmp_path / "home-alice-private"
    private.mkdir()
    rules_file = private / "myrules.toml"
    rules_file.write_text('extends = "grid5"\nname = "myrules"\n')
    command = parse_engine('name=keyed cmd="env MY_API_KEY=hunter2 python keyed.py '
                           '--url {url}" roles=mrx', str(private))
    closer = parse_engine("name=closer class=closer.py:Closer option.depth=2", str(private))
    url = f"sqlite:///{tmp_path / 'engines.db'}"
    with Database.connect(url) as store:
        tid = create(store, TournamentSpec(
            rules=str(rules_file), bots=["keyed", "closer", "mcts"], pairs=1,
            engines={"keyed": command.to_dict(), "closer": closer.to_dict()},
            bot_options={"mcts": [f"model={private}/weights.pt", "iterations=200"]}))
        seeded = create(store, TournamentSpec(rules="grid5", bots=["random", "rush"],
                                              pairs=1, seed=42))
        secret = store.get_tournament(tid).spec["secret"]
    secrets = ["hunter2", "MY_API_KEY", str(private), "home-alice-private", "closer.py",
               "weights.pt", "keyed.py", secret, str(tmp_path)]
    async with running_server(url) as (_server, _app, base):
        bodies = []
        for path in ("tournaments", f"tournaments/{tid}", f"tournaments/{seeded}", "games",
                     "leaderboard", "matrix", f"leaderboard?tournament={tid}", "live",
                     f"games/{tid}-0-forfeit", "tournaments/nope"):
            _, _, raw = await asyncio.to_thread(get, f"{base}api/{path}")
            bodies.append((path, raw.decode()))
        _, tour = await get_json(f"{base}api/tournaments/{tid}")
        _, listed = await get_json(f"{base}api/tournaments")
        _, research = await get_json(f"{base}api/tournaments/{seeded}")
    for path, shown in bodies:
        for text in secrets:
            assert text not in shown, (path, text)
    assert tour["rules"] == tour["spec"]["rules"] == "myrules.toml"
    assert tour["bots"] == ["keyed", "closer", "mcts"]
    assert tour["spec"]["engines"] == {
        "keyed": {"name": "keyed", "roles": ["mrx"], "rules": None},
        "closer": {"name": "closer", "roles": None, "rules": None}}
    assert "bot_options" not in tour["spec"]
    assert tour["deals"] == {"kind": "secret", "seed": None, "secret": None}
    assert [t["deals"]["kind"] for t in listed["tournaments"]] == ["seeded", "secret"]
    assert research["deals"] == {"kind": "seeded", "seed": 42, "secret": None}
    assert research["spec"]["seed"] == 42


async def test_error_messages_do_not_show_the_database(tmp_path: Path) -> None:
    """Unknown games and tournaments, a database that fails under the server and one that
    cannot be opened: structured errors without the database's URL or path."""
    path = tmp_path / "private-dir" / "yard.db"
    path.parent.mkdir()
    url = f"sqlite:///{path}"
    with Database.connect(url) as store:
        tid = create(store, TournamentSpec(rules="grid5", bots=["random", "rush"], pairs=1,
                                           seed=1))
        entry, twin = store.scheduled(tid)
        for played in (entry, twin):
            store.record_forfeit(tid, played, Outcome(Winner.MRX, Termination.DISCONNECTED, 1))
    shown = []
    async with running_server(url) as (_server, _app, base):
        for query, status, code in [
                ("games/nope", 404, "not_found"), ("tournaments/nope", 404, "not_found"),
                ("leaderboard?tournament=nope", 404, "not_found"),
                ("matrix?tournament=nope", 404, "not_found"),
                ("boards/grid7x7", 404, "not_found"), ("nothing", 404, "not_found")]:
            got, body = await get_json(f"{base}api/{query}")
            assert (got, body["error"]["code"]) == (status, code), query
            shown.append(body["error"]["message"])
        with sqlite3.connect(path) as raw:  # the database breaks under the server
            raw.execute("DROP TABLE game_records")
        got, body = await get_json(f"{base}api/games/{tid}-{entry.index}-forfeit")
        assert (got, body["error"]["code"]) == (503, "database")
        shown.append(body["error"]["message"])
    missing = f"sqlite:///{tmp_path / 'private-dir' / 'missing.db'}"
    app = WebApp(missing, websockets=False, lazy=True)
    async with serve(lambda ws: ws.close(), "127.0.0.1", 0,
                     process_request=app.process_request) as server:
        port = server.sockets[0].getsockname()[1]
        got, body = await get_json(f"http://127.0.0.1:{port}/api/games")
        assert (got, body["error"]["code"]) == (503, "database")
        shown.append(body["error"]["message"])
    app.close()
    assert "no tournament 'nope'" in shown[1]
    for message in shown:
        assert "private-dir" not in message and "sqlite" not in message, message


async def test_only_boards_in_use_are_drawn(tmp_path: Path) -> None:
    """``/api/boards/NAME`` draws the boards of the built-in rulesets, of stored games and
    of games being played; other sizes are 404s that build nothing; a drawing is built
    once."""
    url = f"sqlite:///{tmp_path / 'boards.db'}"
    wide = load_ruleset("grid5").definition() | {"name": "wide", "board": "grid9x4"}
    with Database.connect(url) as store:
        tid = store.create_tournament({"rules": "grid5", "bots": ["a", "b"]})
        [entry] = store.schedule(tid, [ScheduledGame(0, 0, "a", "b", 3)])
        record = forfeit_record(tid, entry, Outcome(Winner.MRX, Termination.DISCONNECTED, 1),
                                "", rules="grid5")
        record.ruleset, record.ruleset_definition = "wide", wide
        store.save_game(record)
    async with running_server(url) as (server, app, base):
        for _ in range(3):
            for name in ("grid5x5", "london", "grid9x4"):
                status, drawing = await get_json(f"{base}api/boards/{name}")
                assert status == 200 and drawing["name"] == name
        assert app.boards.built == 3
        for name in ("grid6x7", "grid100x100", "grid5x5x5", "grid0x9", "paris"):
            status, body = await get_json(f"{base}api/boards/{name}")
            assert status == 404 and body["error"]["code"] == "not_found", name
        assert app.boards.built == 3
        # A game being played on another board makes it drawable while it runs.
        bot = await _bot(server.url, "idle")
        tall = load_ruleset("grid5").definition() | {"name": "tall", "board": "grid4x11"}
        async with AdminClient(server.url, server.admin_token) as admin:
            await admin.start_match(StartMatch(tall, "idle", ["idle"], 5, None,
                                               TimeControl(60.0, 0.0)))
            status, drawing = await get_json(f"{base}api/boards/grid4x11")
            assert status == 200 and drawing["height"] == 11
        await bot.close()


async def test_work_off_the_event_loop_is_bounded(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Database queries run in at most ``HEAVY_SLOTS`` worker threads; a request that
    cannot get one in time is answered 503 ``busy`` with Retry-After, and the slots come
    back when the work ends."""
    monkeypatch.setattr(web_http, "BUSY_WAIT_S", 0.2)
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    Database.connect(url).close()
    async with running_server(url) as (_server, app, base):
        assert (await get_json(f"{base}api/games"))[0] == 200
        release = threading.Event()
        running = [threading.Event() for _ in range(web_http.HEAVY_SLOTS)]
        held = [asyncio.ensure_future(app.off_loop(lambda e=e: (e.set(), release.wait())))
                for e in running]
        for event in running:
            assert await asyncio.to_thread(event.wait, 30)
        status, headers, body = await asyncio.to_thread(get, f"{base}api/games")
        assert status == 503 and headers["Retry-After"] == "1"
        assert json.loads(body)["error"]["code"] == "busy"
        status, _, _ = await asyncio.to_thread(get, f"{base}api/live")  # no thread needed
        assert status == 200
        release.set()
        await asyncio.gather(*held)
        assert (await get_json(f"{base}api/games"))[0] == 200


async def test_requests_are_paced_per_address_while_games_are_played(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a game is being played, one address gets a burst of requests and then one
    per ``1 / PACE_PER_S`` seconds: a request whose turn is further away than
    ``BUSY_WAIT_S`` is answered 503 ``busy`` at once. Without games nothing is paced."""
    monkeypatch.setattr(web_http, "PACE_BURST", 3)
    monkeypatch.setattr(web_http, "PACE_PER_S", 0.01)
    url = f"sqlite:///{tmp_path / 'paced.db'}"
    Database.connect(url).close()
    async with running_server(url) as (server, _app, base):
        statuses = [(await asyncio.to_thread(get, f"{base}api/live"))[0] for _ in range(6)]
        assert statuses == [200] * 6
        bot = await _bot(server.url, "idle")
        async with AdminClient(server.url, server.admin_token) as admin:
            await admin.start_match(StartMatch("grid5", "idle", ["idle"], 5, None,
                                               TimeControl(60.0, 0.0)))
            answers = [await asyncio.to_thread(get, f"{base}api/live") for _ in range(6)]
        assert [status for status, _, _ in answers] == [200] * 3 + [503] * 3
        assert all(json.loads(body)["error"]["code"] == "busy" and headers["Retry-After"]
                   for _, headers, body in answers[3:])
        await bot.close()
