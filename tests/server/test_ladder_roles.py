"""A bot that plays one side only (``hello.roles``) is matched only in that side: the
sans-I/O core with a fake clock, then a real ``yard serve --ladder grid5 --house
rush:name=hunters --house random``, where ``rush`` (detectives only) used to be matched as
Mister X, forfeit and be paused (and house bots take a ``name=``)."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from db.models import GameRow
from game import Termination, Winner
from protocol import Error, ErrorCode, GameOver, GameStart, Play, Role, Side
from server.ladder import Ladder, LadderGame, Result
from tests import SCALE
from tests.server.test_ladder_core import Harness
from tests.yard_cli import yard_here
from tournament.processes import start_server


def _seats(h: Harness, conn: int) -> list[str]:
    """The side of each game ``conn`` was given (its first seat's)."""
    return ["mrx" if s.seats[0] == "mrx" else "detectives"  # type: ignore[attr-defined]
            for s in h.of(conn, GameStart)]


def test_one_role_bots_are_matched_only_in_their_role() -> None:
    ladder = Ladder(("grid5",), placement=2, rng=random.Random(3))
    ladder.join("hunter", ["grid5"], [Side.DETECTIVES])
    ladder.join("runner", ["grid5"], [Side.MRX])
    ladder.join("both", ["grid5"])
    played: list[LadderGame] = []
    for _ in range(60):
        for game in ladder.propose({"hunter": 2, "runner": 2, "both": 2}):
            played.append(game)
            ladder.result(Result("grid5", game.mrx, game.detective, Winner.MRX,
                                 Termination.SURVIVED), 0.0)
    sides = Counter((g.mrx, g.detective) for g in played)
    assert set(sides) == {("runner", "hunter"), ("runner", "both"), ("both", "hunter")}
    assert min(sides.values()) >= 10, sides
    assert not ladder.pending and all(g.leg == 1 for g in played)  # single games


def test_a_one_role_bot_on_the_core_plays_only_its_side() -> None:
    h = Harness(games=12, ladder=("grid5",))
    hunter = h.hello("hunter", ladder=["grid5"], roles=[Side.DETECTIVES], max_games=2)
    both = h.hello("both", ladder=["grid5"], max_games=2)  # 6 games (12 game_over messages)
    assert set(_seats(h, hunter)) == {"detectives"} and len(h.of(hunter, GameOver)) >= 6
    assert set(_seats(h, both)) == {"mrx"}
    assert all(not isinstance(m, Error) for c in (hunter, both) for m in h.inbox[c])
    rows = {r["name"]: r for r in h.core.ladder_standings(h.now)["grid5"]}
    assert rows["hunter"]["mrx"] == {"games": 0, "wins": 0, "win_rate": None}


def test_two_bots_of_the_same_one_role_never_meet() -> None:
    h = Harness(ladder=("grid5",))
    a = h.hello("a", ladder=["grid5"], roles=[Side.DETECTIVES])
    b = h.hello("b", ladder=["grid5"], roles=[Side.DETECTIVES])
    h.run(10.0)
    assert not h.of(a, GameStart) and not h.of(b, GameStart)


def test_a_person_cannot_ask_a_one_role_bot_for_its_other_side() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("hunter", ladder=["grid5"], roles=[Side.DETECTIVES])
    me = h.hello("alice", role=Role.HUMAN)
    h.send(me, Play("grid5", Side.DETECTIVES, "hunter"))
    error = h.of(me, Error)[-1]
    assert error.code is ErrorCode.BAD_MATCH and "Mister X" in error.message  # type: ignore[attr-defined]
    h.send(me, Play("grid5", Side.MRX, "hunter"))
    assert h.of(me, GameStart)[-1].seats == ["mrx"]  # type: ignore[attr-defined]


def test_a_one_role_bot_plays_only_its_sides_check_game() -> None:
    h = Harness(ladder=("grid5",), ladder_check=True)
    hunter = h.hello("hunter", ladder=["grid5"], roles=[Side.DETECTIVES])
    assert _seats(h, hunter) == ["detectives"] and len(h.of(hunter, GameOver)) == 1
    assert not h.core.ladder.needs_check("hunter")  # type: ignore[union-attr]


def test_roles_are_checked() -> None:
    h = Harness(ladder=("grid5",))
    cases: list[tuple[str, dict[str, Any]]] = [
        ("empty", {"ladder": ["grid5"], "roles": []}),
        ("alice", {"role": Role.HUMAN, "roles": [Side.MRX]})]
    for name, fields in cases:
        conn = h.hello(name, **fields)
        (error,) = h.of(conn, Error)
        assert error.code is ErrorCode.BAD_VALUE and "roles" in error.message  # type: ignore[attr-defined]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


def _games(db_url: str) -> list[tuple[str, str, str]]:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(GameRow.mrx_player, GameRow.detective_player,
                                          GameRow.termination).where(
                GameRow.tournament_id == "ladder-grid5")).all()
        return [(r[0], r[1], r[2]) for r in rows]
    finally:
        engine.dispose()


async def test_house_rush_is_matched_as_the_detectives_only(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'ladder.db'}"
    server, url = await start_server(db_url, "--ladder", "grid5", "--house",
                                     "rush:name=hunters", "--house", "random",
                                     stderr_log=tmp_path / "server.log")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120 * SCALE
    try:
        while len(games := await asyncio.to_thread(_games, db_url)) < 8:
            assert loop.time() < deadline, games
            await asyncio.sleep(0.2)  # polling the database for a condition
        ladder = await asyncio.to_thread(_get, url.replace("ws://", "http://") + "/api/ladder")
    finally:
        assert await server.stop() == 0
    # rush plays under the name its name= option gives it
    assert all(det == "hunters" and mrx == "random" for mrx, det, _ in games), games
    assert {t for *_, t in games} <= {"caught", "survived", "cornered", "detectives_stuck"}
    rows = {row["name"]: row for row in ladder["ladders"]["grid5"]}
    assert rows["hunters"]["paused"] is None and rows["hunters"]["forfeits"] == {}


def test_house_names_must_differ_and_be_names(tmp_path: Path) -> None:
    for houses, problem in [(["random", "random"], "two house bots named 'random'"),
                            (["greedy:name=human:x"], "name= must be"),
                            (["greedy:name=", "random"], "name= must be")]:
        args = [a for h in houses for a in ("--house", h)]
        out = yard_here("serve", "--ladder", "grid5", *args, cwd=tmp_path)
        assert out.returncode == 2 and problem in out.stderr, out.stderr
