"""A bot's standing from a running ladder server (``yard standing``, ``yard-bot
standing``, :mod:`bots.standing`), and the HTTP answers it reads checked against their
JSON Schemas (``protocol/schema/http/``): a greedy bot plays 4 games, a bot whose
``choose`` raises forfeits 2 and is paused."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bots.base import Bot
from bots.client import BotClient
from bots.registry import make_bot
from bots.standing import StandingError, fetch_standing, get_json, web_base
from db.store import Database
from game import Move, View
from host.web.ladder import stored_ladders
from protocol.schema import load_http_schema
from tests import SCALE
from tests.bots.ladder_helpers import ladder_server
from tests.yard_cli import yard_here


class Crash(Bot):
    """Forfeits every game at its first move (``bot_error``)."""

    name = "crash"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        raise RuntimeError("no idea")


class Served:
    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.http = web_base(url)
        self.db_url = f"sqlite:///{folder / 'ladder.db'}"


async def _play(url: str) -> list[int]:
    clients = [BotClient(lambda: make_bot("greedy"), url, "greedy", max_games=4,
                         ladder=["grid5"]),
               BotClient(Crash, url, "crash", max_games=2, ladder=["grid5"])]
    return list(await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)),
                                       120 * SCALE))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("standing")
    with ladder_server(folder, "--ladder-pause-after", "2") as url:
        assert asyncio.run(_play(url)) == [4, 2]
        yield Served(url, folder)


def test_the_ladder_answers_match_their_schemas(served: Served) -> None:
    ladder = get_json(f"{served.http}/api/ladder")
    jsonschema.validate(ladder, load_http_schema("ladder"))
    rows = {row["name"]: row for row in ladder["ladders"]["grid5"]}
    assert {"greedy", "crash", "random"} <= set(rows)
    assert rows["crash"]["paused"] and rows["crash"]["forfeits"] == {"bot_error": 2}
    for name in ("greedy", "crash", "nobody"):  # nobody: a page with no games
        page = get_json(f"{served.http}/api/ladder/grid5/bots/{name}")
        jsonschema.validate(page, load_http_schema("ladder_bot"))
    assert len(get_json(f"{served.http}/api/ladder/grid5/bots/greedy")["history"]) == 4
    store = Database.connect(served.db_url)  # as `yard web` rebuilds it: live false
    try:
        stored = stored_ladders(store)
    finally:
        store.close()
    assert stored["live"] is False
    jsonschema.validate(stored, load_http_schema("ladder"))


def test_fetch_standing_has_rank_rating_records_and_recent_games(served: Served) -> None:
    standing = fetch_standing(served.url, "greedy", recent=3)
    assert (standing["server"], standing["name"], standing["live"]) == (
        served.http, "greedy", True)
    [row] = standing["ladders"]
    assert row["rules"] == "grid5" and 1 <= row["rank"] <= row["of"] == 3
    assert row["games"] == row["mrx"]["games"] + row["detectives"]["games"] == 4
    assert row["forfeits"] == {} and row["paused"] is None
    assert len(row["recent"]) == 3
    page = get_json(f"{served.http}/api/ladder/grid5/bots/greedy")
    assert [g["game_id"] for g in row["recent"]] == \
        [g["game_id"] for g in reversed(page["history"])][:3]
    for game in row["recent"]:
        assert game["replay"] == f"{served.http}/#/games/{game['game_id']}"
        assert game["result"] in ("won", "lost", "-") and game["termination"]


def test_yard_standing_prints_rating_rank_pause_and_games(served: Served) -> None:
    out = yard_here("standing", "crash", "--url", served.url)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith(f"crash on {served.http} (live ratings)")
    assert "grid5: rank " in text and " of 3, " in text and "live rating " in text
    assert "forfeits: bot_error 2" in text
    assert "paused from the ladder until " in text
    assert text.count(f"{served.http}/#/games/") == 2
    assert "bot_error" in text.split("recent games (newest first):")[1]


def test_the_slim_command_prints_the_same_json(served: Served) -> None:
    done = subprocess.run([sys.executable, "-m", "bots.cli", "standing", "greedy", "--url",
                           served.http, "--rules", "grid5", "--json"], capture_output=True,
                          text=True, timeout=60 * SCALE, check=False)
    assert done.returncode == 0, done.stderr
    slim: dict[str, Any] = json.loads(done.stdout)
    full = json.loads(yard_here("standing", "greedy", "--url", served.url, "--json").stdout)
    assert slim["ladders"][0]["recent"] == full["ladders"][0]["recent"]
    assert slim["ladders"][0]["games"] == 4


@pytest.mark.parametrize(("args", "said"), [
    (["nobody"], "bot 'nobody' is on no ladder of http://"),
    (["greedy", "--rules", "classic"], "has no 'classic' ladder (ladders: grid5)"),
    (["nobody", "--rules", "grid5"], "bot 'nobody' is not on the grid5 ladder"),
])
def test_mistakes_are_one_line(served: Served, args: list[str], said: str) -> None:
    out = yard_here("standing", *args, "--url", served.url)
    assert out.returncode == 2 and said in out.stderr and out.stderr.count("\n") == 1


def test_an_unreachable_server_is_one_line() -> None:
    with pytest.raises(StandingError, match=re.escape("cannot reach http://127.0.0.1:1/api/ladder")):
        fetch_standing("ws://127.0.0.1:1", "greedy")


def test_yard_bot_run_plays_a_class_with_options_on_a_ladder(tmp_path: Path) -> None:
    """``yard-bot run file.py:Class --option k=v``, the slim client's ``yard bot``: warms
    up, plays its games and leaves; a bad option is one line before anything connects."""
    bot = Path(__file__).parents[1] / "data" / "blunder_bot.py"
    with ladder_server(tmp_path) as url:
        argv = [sys.executable, "-m", "bots.cli", "run", f"{bot}:Blunder", "--url", url]
        bad = subprocess.run([*argv, "--option", "nope=1"], capture_output=True, text=True,
                             timeout=60 * SCALE, check=False)
        assert bad.returncode == 2 and "has no option 'nope'" in bad.stderr
        done = subprocess.run([*argv, "--name", "runner", "--ladder", "grid5", "--games", "2",
                               "-v"], capture_output=True, text=True, timeout=120 * SCALE,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("connected as runner")
        assert "runner: warmed up on grid5" in done.stderr
        assert done.stderr.endswith("runner: played 2 games\n")
        [row] = fetch_standing(url, "runner")["ladders"]
    assert row["games"] == 2 and row["forfeits"] == {}
