"""A ladder ruleset given to ``yard serve --ladder`` as a TOML file is known everywhere by
its ruleset's name: the options, then a real ``yard serve --ladder grid5,FILE --house
random`` with an SDK client that joins the file's ladder by name."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from bots.client import BotClient
from bots.registry import make_bot
from db.store import Database
from game import load_ruleset
from game.errors import RulesetError
from host.run import ServerConfigError, server_config
from tests import SCALE
from tournament.processes import start_server

STRANDED = str(Path(__file__).with_name("stranded.toml"))
"""Classic, detectives with underground tickets only; ``name = "stranded"``."""


def _config(*ladder: str) -> Any:
    return server_config("127.0.0.1", admin_token="admin", ladder=ladder)


def test_a_ladder_file_is_named_by_its_ruleset_and_given_twice_counts_once() -> None:
    config = _config("grid5", STRANDED, "grid5", STRANDED)
    assert config.ladder == ("grid5", "stranded")
    assert set(config.ladder_rulesets) == {"stranded"}
    stranded = config.ladder_ruleset("stranded")
    assert stranded.definition() == load_ruleset(STRANDED).definition()
    assert stranded.detective_tickets == (0, 0, 4, 0, 0)
    assert config.ladder_ruleset("grid5") is load_ruleset("grid5")  # built-in: cached
    with pytest.raises(RulesetError, match="no ladder ruleset"):
        config.ladder_ruleset(STRANDED)  # a name, never a path


def test_two_different_rulesets_with_one_name_are_refused(tmp_path: Path) -> None:
    fake = tmp_path / "classic.toml"
    fake.write_text('name = "classic"\nextends = "classic"\nmax_moves = 10\n'
                    'reveal_moves = [3, 8]\n')
    with pytest.raises(ServerConfigError) as refused:
        _config("classic", STRANDED, str(fake))
    message = str(refused.value)
    assert "\n" not in message and f"classic and {fake}" in message
    assert "same name 'classic'" in message
    same = tmp_path / "same.toml"  # the built-in's own definition under its name: one
    same.write_text('name = "classic"\nextends = "classic"\n')
    assert _config("classic", str(same)).ladder == ("classic",)


def test_a_ladder_name_unfit_for_a_url_is_refused(tmp_path: Path) -> None:
    spaced = tmp_path / "spaced.toml"
    spaced.write_text('name = "my variant"\nextends = "grid5"\n')
    with pytest.raises(ServerConfigError, match="ruleset name 'my variant' must be"):
        _config(str(spaced))


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


async def test_a_bot_plays_a_file_ruleset_by_name_and_its_games_replay(tmp_path: Path
                                                                       ) -> None:
    db_url = f"sqlite:///{tmp_path / 'ladder.db'}"
    server, url = await start_server(db_url, "--ladder", f"grid5,{STRANDED}", "--house",
                                     "random", "--move-time", "2",
                                     stderr_log=tmp_path / "server.log")
    http = url.replace("ws://", "http://")
    try:
        assert server.proc.stdout is not None
        lines = [(await asyncio.wait_for(server.proc.stdout.readline(), 10)).decode()
                 for _ in range(2)]
        assert lines[1].startswith("ladder: grid5, stranded (bots join with yard bot NAME")
        assert STRANDED not in lines[1]
        # The house bot (yard bot random --ladder grid5,stranded --warm-up) cannot load
        # "stranded" itself: it warms up on grid5 and joins both ladders.
        client = BotClient(lambda: make_bot("greedy"), url, "walker", max_games=2,
                           ladder=["stranded"])
        played = await asyncio.wait_for(client.run(), 60 * SCALE)
        ladder = await asyncio.to_thread(_get, f"{http}/api/ladder")
    finally:
        assert await server.stop() == 0
    assert played == 2
    assert set(ladder["ladders"]) == {"grid5", "stranded"}
    assert {row["name"] for row in ladder["ladders"]["stranded"]} == {"walker", "random"}
    store = Database.connect(db_url)
    try:
        games = store.list_games(tournament_id="ladder-stranded")
        assert len(games) == 2
        assert {info.tournament_id for info in store.list_tournaments()} == {
            "ladder-grid5", "play-grid5", "ladder-stranded", "play-stranded"}
        record = store.load_game(games[0].game_id)
    finally:
        store.close()
    assert record.ruleset == "stranded"
    assert record.ruleset_definition == load_ruleset(STRANDED).definition()
    # A server without the file: the replay rebuilds the ruleset from the stored one.
    server, url = await start_server(db_url, stderr_log=tmp_path / "server.log")
    http = url.replace("ws://", "http://")
    try:
        replay = await asyncio.to_thread(_get, f"{http}/api/games/{record.game_id}")
        page = await asyncio.to_thread(_get, f"{http}/api/ladder/stranded/bots/walker")
    finally:
        assert await server.stop() == 0
    assert {row["game_id"] for row in page["history"]} == {g.game_id for g in games}
    assert replay["ruleset"] == "stranded" and replay["rules"]["name"] == "stranded"
    assert replay["rules"]["detective_tickets"] == {"underground": 4}
    assert len(replay["frames"]) == len(record.turns) + 1
