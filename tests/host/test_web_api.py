"""The read-only JSON API and page serving, over real HTTP on a real match server's port,
against a real SQLite file of engine games (and ``yard`` subprocesses where the CLI is the
reference)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import new_game
from protocol import StartMatch, TimeControl
from server.admin import AdminClient
from tests.host.web_helpers import (
    CLASSIC_GAME,
    XSS,
    Seeded,
    get,
    get_json,
    running_server,
    seed_database,
    truth_path,
)
from tests.yard_cli import yard_here

YARD = str(Path(sys.executable).with_name("yard"))


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return subprocess.run([YARD, *args], env=env, capture_output=True, text=True, timeout=120)


async def test_leaderboard_and_matrix_match_the_cli(seeded: Seeded) -> None:
    async with running_server(seeded.url) as (_, _app, base):
        for args, query in [((), ""), (("--rules", "grid5"), "?rules=grid5"),
                            (("--tournament", seeded.tournament_id),
                             f"?tournament={seeded.tournament_id}"),
                            (("--rules", "warwick"), "?rules=warwick")]:
            for command, endpoint in [("leaderboard", "leaderboard"), ("matrix", "matrix")]:
                # The command reads the file itself: run here (the other tests start `yard`).
                env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
                cli = yard_here(command, "--db", seeded.url, *args, "--json", env=env)
                assert cli.returncode == 0, cli.stderr
                status, api = await get_json(f"{base}api/{endpoint}{query}")
                assert status == 200
                assert api == json.loads(cli.stdout), (command, args)
        board = (await get_json(f"{base}api/leaderboard?rules=grid5"))[1]
        assert XSS in [row["player"] for row in board["rows"]]
        assert board["games"] == 12


async def test_ratings_are_cached_per_games_stored(seeded: Seeded, tmp_path: Path) -> None:
    url = seed_database(tmp_path / "copy.db").url
    async with running_server(url) as (_, app, base):
        first = (await get_json(f"{base}api/leaderboard?rules=grid5"))[1]
        computed = app.ratings.computed
        again = (await get_json(f"{base}api/leaderboard?rules=grid5"))[1]
        await get_json(f"{base}api/matrix?rules=grid5")  # same cache entry
        assert again == first and app.ratings.computed == computed
        # A new game changes the key: the next request recomputes.
        result = play_game("grid5", make_bot("greedy"), [make_bot("random")], seed=99)
        with Database.connect(url) as store:
            store.save_game(record_from_moves("extra", result.start, result.moves,
                                              {0: "greedy", 1: "random"}, result.outcome))
        after = (await get_json(f"{base}api/leaderboard?rules=grid5"))[1]
        assert app.ratings.computed == computed + 1
        assert after["games"] == first["games"] + 1


async def test_games_list_filters_and_pages(seeded: Seeded) -> None:
    async with running_server(seeded.url) as (_, _app, base):
        _, everything = await get_json(f"{base}api/games?limit=500")
        assert everything["total"] == 13 == len(everything["games"])
        _, page = await get_json(f"{base}api/games?limit=5&offset=10")
        assert [g["game_id"] for g in page["games"]] == \
            [g["game_id"] for g in everything["games"][10:15]]
        _, classic = await get_json(f"{base}api/games?rules=classic")
        assert [g["game_id"] for g in classic["games"]] == [CLASSIC_GAME]
        _, xss = await get_json(f"{base}api/games?player={quote(XSS)}&limit=500")
        assert xss["total"] == 8
        assert all(XSS in (g["mrx_player"], g["detective_player"]) for g in xss["games"])
        for result in ("mrx", "detectives"):
            _, won = await get_json(f"{base}api/games?result={result}&limit=500")
            assert {g["winner"] for g in won["games"]} == {result}
        _, caught = await get_json(f"{base}api/games?termination=caught&limit=500")
        assert {g["termination"] for g in caught["games"]} == {"caught"}
        _, tour = await get_json(f"{base}api/games?tournament={seeded.tournament_id}")
        assert tour["total"] == 12
        many = "&".join(f"p{i}=1" for i in range(30))
        for bad in ("limit=0", "limit=x", "result=maybe", "termination=nap", "offset=-1", many):
            status, body = await get_json(f"{base}api/games?{bad}")
            assert status == 400 and body["error"]["code"] == "bad_request", bad


async def test_replay_perspectives(seeded: Seeded) -> None:
    record = seeded.classic
    truth = truth_path(record)
    async with running_server(seeded.url) as (_, _app, base):
        _, full = await get_json(f"{base}api/games/{CLASSIC_GAME}")
        _, det = await get_json(f"{base}api/games/{CLASSIC_GAME}?perspective=detectives")
        _, mrx = await get_json(f"{base}api/games/{CLASSIC_GAME}?perspective=mrx")
        status, _ = await get_json(f"{base}api/games/{CLASSIC_GAME}?perspective=god")
        missing = await get_json(f"{base}api/games/nope")
    assert status == 400 and missing[0] == 404
    assert len(full["frames"]) == len(record.turns) + 1
    assert [(f["mrx"], f["move_number"]) for f in full["frames"]] == truth
    assert full["mrx_path"] == record.mrx_path and mrx["mrx_path"] == record.mrx_path
    assert full["board"]["name"] == "london" and len(full["board"]["stations"]) == 199
    reveals = set(full["rules"]["reveal_moves"])
    # The detectives' perspective holds nothing that depends on hidden stations.
    assert "mrx_path" not in det and "seed" not in det
    assert all("mrx" not in frame for frame in det["frames"])
    for slot, entry in enumerate(det["log"], start=1):
        assert (entry["station"] is not None) == (slot in reveals)
        assert entry["ticket"] == full["log"][slot - 1]["ticket"]
    for f_det, f_full in zip(det["frames"], full["frames"], strict=True):
        assert f_det["possible"] == f_full["possible"]
        assert f_det["detectives"] == f_full["detectives"]
        turn = f_det["turn"]
        if turn is not None and turn["seat"] == "mrx":
            assert all((leg["station"] is None) != leg["reveal"] for leg in turn["legs"])
            assert turn["detail"] is None
    # Faults and per-move measurements: shown in every perspective, except the details
    # of Mister X's faults to the detectives.
    first, second = full["frames"][1]["turn"], det["frames"][1]["turn"]
    assert first["fault"] == second["fault"] == "random_move_on_timeout"
    assert first["detail"] == "timed out (details)" and second["detail"] is None
    assert first["time_used"] == second["time_used"] == 1.25
    assert first["playouts"] == second["playouts"] == 321
    assert det["frames"][2]["turn"]["nodes"] == 4096 and det["frames"][2]["turn"]["depth"] == 3
    doubles = [f["turn"] for f in full["frames"] if f["turn"] and len(f["turn"]["legs"]) == 2]
    secrets = [f["turn"] for f in full["frames"] if f["turn"]
               and any(leg["ticket"] == "secret" for leg in f["turn"]["legs"])]
    assert doubles and secrets


async def test_safety_headers_traversal_and_methods(seeded: Seeded) -> None:
    async with running_server(seeded.url) as (_, _app, base):
        status, headers, body = await asyncio.to_thread(get, base)
        assert status == 200 and b'<main id="main">' in body
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp
        assert headers["X-Content-Type-Options"] == "nosniff"
        status, headers, _ = await asyncio.to_thread(get, f"{base}static/app.js")
        assert status == 200 and headers["Content-Type"].startswith("text/javascript")
        for path in ("static/../http.py", "static/%2e%2e/http.py", "static/..%2fhttp.py",
                     "static/%2e%2e%2f%2e%2e%2fpyproject.toml", "static/", "static/.hidden.js",
                     "../../etc/passwd", "static/app.js/..", "static//etc/passwd"):
            status, _, body = await asyncio.to_thread(get, base + path)
            assert status == 404, path
        status, body = await get_json(f"{base}api/nothing")
        assert status == 404 and body["error"]["code"] == "not_found"
        status, body = await get_json(f"{base}api/tournaments/unknown")
        assert status == 404
        def post() -> int:
            request = urllib.request.Request(f"{base}api/games", method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return int(response.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        assert await asyncio.to_thread(post) == 405


async def test_tournaments_and_live_games(seeded: Seeded, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    Database.connect(url).close()
    async with running_server(url) as (served, _app, base):
        ws_url = base.replace("http://", "ws://").rstrip("/")
        # Two bots on the same port as the pages; they never answer, so the game stays live.
        async with connect(ws_url) as bot:
            await bot.send(json.dumps({"type": "hello", "protocol": 1, "name": "idle",
                                       "role": "bot"}))
            assert json.loads(await bot.recv())["type"] == "welcome"
            async with AdminClient(ws_url, served.admin_token) as admin:
                game = await admin.start_match(StartMatch(
                    "grid5", "idle", ["idle"], 5, None, TimeControl(60.0, 0.0)))
                _, live = await get_json(f"{base}api/live")
                assert [g["game_id"] for g in live["games"]] == [game]
                assert live["games"][0]["players"]["mrx"] == "idle"
                _, snap = await get_json(f"{base}api/live/{game}")
                assert snap["view"]["seat"] is None and "mrx" not in snap["view"]
                assert snap["board"]["grid"] is True
                mrx_start = new_game("grid5", 5).mrx_station
                assert snap["view"]["possible"] != [mrx_start]
                status, body = await get_json(f"{base}api/games/{game}")
                assert status == 404 and "being played" in body["error"]["message"]
    # Tournaments: progress and status from a database with a finished one.
    async with running_server(seeded.url) as (_, _app, base):
        _, listing = await get_json(f"{base}api/tournaments")
        [tour] = listing["tournaments"]
        assert (tour["played"], tour["scheduled"], tour["status"]) == (12, 12, "finished")
        _, one = await get_json(f"{base}api/tournaments/{seeded.tournament_id}")
        assert one["tournament_id"] == seeded.tournament_id
        with Database.connect(seeded.url) as store:
            stored = store.get_tournament(seeded.tournament_id).state["sprt"]
        assert one["sprt"] == stored == tour["sprt"]
        assert one["sprt"]["pentanomial"] == [1, 2, 5, 2, 2]


def test_yard_web_serves_pages_and_refuses_websockets(seeded: Seeded, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = subprocess.Popen([YARD, "web", "--db", seeded.url, "--port", "0", "--ready-file",
                             str(ready)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("web pages at http://127.0.0.1:")
        base = line.split()[-1]
        assert ready.read_text().strip() == base
        status, _, body = get(f"{base}api/leaderboard?rules=grid5")
        assert status == 200 and json.loads(body)["games"] == 12
        ws_url = base.replace("http://", "ws://")

        async def try_ws() -> int:
            try:
                async with connect(ws_url):
                    return 101
            except InvalidStatus as exc:
                return int(exc.response.status_code)

        assert asyncio.run(try_ws()) == 403
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    missing = yard("web", "--db", f"sqlite:///{tmp_path / 'none.db'}", "--port", "0")
    assert missing.returncode == 2 and missing.stderr.startswith("error:")


async def test_slow_ratings_answer_503_then_the_cached_result(
        seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first computation longer than the answer budget (the handshake timeout bounds
    HTTP answers) is a 503 ``computing`` with Retry-After; it goes on and fills the cache."""
    import host.web.http as web_http

    url = seed_database(tmp_path / "slow.db").url
    monkeypatch.setattr(web_http, "COMPUTE_WAIT_S", 0.0)
    async with running_server(url) as (_, app, base):
        status, headers, body = await asyncio.to_thread(get, f"{base}api/leaderboard")
        assert status == 503 and headers["Retry-After"] == "2"
        assert json.loads(body)["error"]["code"] == "computing"
        async with asyncio.timeout(60):  # the client's retries, until it is computed
            while app.ratings.computed < 2:
                await asyncio.sleep(0.05)
        monkeypatch.setattr(web_http, "COMPUTE_WAIT_S", 30.0)
        before = app.ratings.computed
        status, board = await get_json(f"{base}api/leaderboard")
        assert status == 200 and app.ratings.computed == before
        assert [s["ruleset"] for s in board["rulesets"]] == ["classic", "grid5"]
