"""After each ladder game a bot learns where it stands (``standing``: its live rating and
rank), exactly as ``/api/ladder`` shows it. The sans-I/O core, then a real ``yard serve
--ladder grid5 --house random`` and an SDK client (``BotClient``) that leaves after three
games."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

from bots.client import BotClient
from bots.registry import make_bot
from protocol import GameOver, Standing
from tests import SCALE
from tests.server.test_ladder_core import Harness
from tournament.processes import start_server


def test_each_ladder_game_is_followed_by_each_bots_standing() -> None:
    h = Harness(games=8, ladder=("grid5",))
    a = h.hello("a", ladder=["grid5"])
    b = h.hello("b", ladder=["grid5"])
    for conn, name in ((a, "a"), (b, "b")):
        overs = h.of(conn, GameOver)
        standings = h.of(conn, Standing)
        assert len(standings) == len(overs) >= 4
        assert [s.game for s in standings] == [o.game for o in overs]  # type: ignore[attr-defined]
        inbox = h.inbox[conn]
        for over in overs:  # each right after its game_over
            assert isinstance(inbox[inbox.index(over) + 1], Standing)
        last = standings[-1]
        assert last.name == name and last.rules == "grid5" and last.of == 2  # type: ignore[attr-defined]
        row = next(r for r in h.core.ladder_standings(h.now)["grid5"] if r["name"] == name)
        assert last.rank == row["rank"] and last.rating.mu == row["mu"]  # type: ignore[attr-defined]
        assert last.rating.games == row["games"] == len(overs)  # type: ignore[attr-defined]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


async def test_an_sdk_client_gets_its_rating_after_each_ladder_game(tmp_path: Path) -> None:
    server, url = await start_server(f"sqlite:///{tmp_path / 'ladder.db'}", "--ladder",
                                     "grid5", "--house", "random",
                                     stderr_log=tmp_path / "server.log")
    try:
        client = BotClient(lambda: make_bot("greedy"), url, "greedy", max_games=3,
                           ladder=["grid5"])
        played = await asyncio.wait_for(client.run(), 120 * SCALE)
        ladder = await asyncio.to_thread(_get, url.replace("ws://", "http://") + "/api/ladder")
    finally:
        assert await server.stop() == 0
    assert played == 3
    standing = client.standings["grid5"]
    row = next(r for r in ladder["ladders"]["grid5"] if r["name"] == "greedy")
    assert (standing.rank, standing.of) == (row["rank"], 2)
    assert standing.rating.games == row["games"] == 3
    assert (standing.rating.mu, standing.rating.sigma) == (row["mu"], row["sigma"])
