"""People's names end to end (issue 40.2): a served ladder (host.run.open_serving: real
websockets, real SQLite, the account checker) where a person claims a name and proves it
with the token the server gave, nobody else can take it or one like it, guests play as
``guest:NAME`` unrated, one name plays one game at a time, and the ratings read back
from the database after a restart count the claimed name's games and not the guest's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

from bots.client import BotClient
from bots.registry import make_bot
from db.store import Database
from host.run import close_serving, open_serving, server_config
from tests import SCALE
from tests.server.test_access import refused, welcomed


async def until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next message of type ``kind`` on ``ws``."""
    async with asyncio.timeout(30 * SCALE):
        while True:
            msg: dict[str, Any] = json.loads(await ws.recv())
            if msg["type"] == kind or (msg["type"] == "error" and kind != "error"):
                return msg


async def play_and_resign(ws: ClientConnection) -> dict[str, Any]:
    """Ask the house bot for a game as Mister X and resign it; the ``game_start``."""
    await ws.send(json.dumps({"type": "play", "rules": "grid5", "side": "mrx",
                              "opponent": "random"}))
    started = await until(ws, "match_started")
    assert started["type"] == "match_started", started
    start = await until(ws, "game_start")
    await ws.send(json.dumps({"type": "resign", "game": started["game"]}))
    assert (await until(ws, "game_over"))["termination"] == "resigned"
    return start


async def test_a_person_claims_a_name_and_guests_play_unrated(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'yard.db'}"
    config = server_config("127.0.0.1", admin_token="admin", ladder=("grid5",))
    serving = await open_serving(config, db_url, "127.0.0.1", 0)
    url = serving.url
    bot = BotClient(lambda: make_bot("random"), url, "random", ladder=["grid5"], max_games=4)
    task = asyncio.create_task(bot.run())
    try:
        async with asyncio.timeout(30 * SCALE):
            await bot.connected.wait()
        claim, alice = await welcomed(url, name="alice", role="human", register=True)
        token = claim["token"]
        assert token
        start = await play_and_resign(alice)
        assert start["players"]["mrx"] == "human:alice"
        # A second tab of the same person proves the claim; one live game per name.
        _, tab = await welcomed(url, name="alice", role="human", token=token)
        await tab.send(json.dumps({"type": "play", "rules": "grid5", "side": "mrx",
                                   "opponent": "random"}))
        first = await until(tab, "match_started")
        await alice.send(json.dumps({"type": "play", "rules": "grid5", "side": "detectives",
                                     "opponent": "random"}))
        busy = await until(alice, "error")
        assert busy["code"] == "bad_match" and "'human:alice' is playing" in busy["message"]
        await tab.send(json.dumps({"type": "resign", "game": first["game"]}))
        await until(tab, "game_over")
        # Nobody else takes the name, or one like it.
        for hello in ({"register": True}, {"token": token[:-1] + "x"}):
            error = await refused(url, name="alice", role="human", **hello)
            assert error["code"] in ("name_taken", "bad_token") and "claimed" in error["message"]
        error = await refused(url, name="аlice", role="human", register=True)  # Cyrillic а
        assert error["code"] == "name_taken" and "'human:alice'" in error["message"]
        # A guest: shown as one, never rated.
        _, guest = await welcomed(url, name="bob", role="human")
        assert (await play_and_resign(guest))["players"]["mrx"] == "guest:bob"
        people = serving.server.core.people_standings()["grid5"]
        assert {r["name"] for r in people} == {"human:alice", "random"}
        for ws in (alice, tab, guest):
            await ws.close()
    finally:
        bot.stopped = True
        task.cancel()
        await close_serving(serving)
    with Database.connect(db_url) as db:
        account = db.account("human:alice")
        assert account is not None and account.source == "play" and account.active
    # After a restart the stored games are rated again: the claimed name's, not the guest's.
    serving = await open_serving(config, db_url, "127.0.0.1", 0)
    try:
        people = serving.server.core.people_standings()["grid5"]
        assert {r["name"]: r["games"] for r in people} == {"human:alice": 2, "random": 2}
    finally:
        await close_serving(serving)
