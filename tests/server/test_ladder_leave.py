"""A bot leaves without losing a game: ``leave`` stops new games and the ones it has are
played out. The sans-I/O core with a fake clock, then real ``yard serve --ladder`` and
real bot processes that stop after ``--games N`` (the SDK's ``run``) or on Ctrl-C
(``yard bot``): their forfeits stay 0."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from db.models import GameRow
from game import Termination
from protocol import (
    Error,
    ErrorCode,
    GameOver,
    GameStart,
    Leave,
    Leaving,
    Play,
    Role,
    Side,
    StartMatch,
)
from server.ladder import FORFEITS
from tests import SCALE
from tests.server.test_ladder_core import Harness, never
from tournament.processes import Child, start_bot, start_server

DATA = Path(__file__).parents[1] / "data"


def test_a_leaving_bot_plays_out_its_game_and_is_given_no_other() -> None:
    h = Harness(games=100, ladder=("grid5",))
    leaver = h.hello("leaver", never, ladder=["grid5"])
    h.hello("stayer", ladder=["grid5"])
    (start,) = h.of(leaver, GameStart)  # one slot each: the pair's first game
    h.send(leaver, Leave())
    (leaving,) = h.of(leaver, Leaving)
    assert leaving.games == [start.game]  # type: ignore[attr-defined]
    assert not h.core.ladder.pending  # type: ignore[union-attr]  # its second game dropped
    h.send(leaver, Leave())  # again: the same answer
    assert h.of(leaver, Leaving)[-1] == leaving
    h.run(5.0)  # it never moves: its game ends on its clock, and nothing follows
    assert len(h.of(leaver, GameOver)) == 1 and len(h.of(leaver, GameStart)) == 1
    person = h.hello("alice", role=Role.HUMAN)
    h.send(person, Play("grid5", Side.MRX, "leaver"))
    assert h.of(person, Error)[-1].code is ErrorCode.BOT_NOT_CONNECTED  # type: ignore[attr-defined]
    admin = h.hello("admin", role=Role.ADMIN, token=h.core.config.admin_token)
    h.send(admin, StartMatch("grid5", "leaver", ["stayer"]))
    assert h.of(admin, Error)[-1].code is ErrorCode.BOT_NOT_CONNECTED  # type: ignore[attr-defined]


def test_leave_before_any_game_means_no_game() -> None:
    h = Harness(ladder=("grid5",))
    early = h.hello("early", never, ladder=["grid5"])  # alone: no game yet
    h.send(early, Leave())
    assert h.of(early, Leaving)[-1].games == []  # type: ignore[attr-defined]
    h.hello("late", ladder=["grid5"])
    assert not h.of(early, GameStart)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


def _games_of(db_url: str, name: str) -> list[tuple[str, str, str, int | None]]:
    """``(mrx, detectives, termination, fault_seat)`` of the stored ladder games ``name``
    played."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(GameRow.mrx_player, GameRow.detective_player,
                                          GameRow.termination, GameRow.fault_seat).where(
                GameRow.tournament_id == "ladder-grid5",
                sa.or_(GameRow.mrx_player == name, GameRow.detective_player == name))).all()
        return [(r[0], r[1], r[2], r[3]) for r in rows]
    finally:
        engine.dispose()


async def _until(check: Any, what: str, timeout: float) -> Any:
    """Poll ``check()`` (in a thread) every 0.1 s until it returns something true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := await asyncio.to_thread(check)):
        assert loop.time() < deadline, f"not within {timeout} s: {what}"
        await asyncio.sleep(0.1)
    return value


def _by_fault(games: list[tuple[str, str, str, int | None]], name: str) -> list[str]:
    """The terminations of ``games`` that were ``name``'s fault."""
    return [term for mrx, det, term, seat in games
            if Termination(term) in FORFEITS and seat is not None
            and (mrx if seat == 0 else det) == name]


async def _exit_status(proc: asyncio.subprocess.Process, timeout: float) -> int:
    return await asyncio.wait_for(proc.wait(), timeout)


def _playing(http: str, name: str) -> bool:
    """Bot ``name`` has a game in progress on the server."""
    return any(name in g["players"].values() for g in _get(f"{http}/api/live")["games"])


async def _settled(http: str, db_url: str, name: str
                   ) -> tuple[dict[str, Any], list[tuple[str, str, str, int | None]]]:
    """Once bot ``name`` has no game in progress: its ladder row (rated as its games
    ended) and its stored games, once all of those are written."""
    await _until(lambda: not _playing(http, name), f"{name}'s games over", 60 * SCALE)
    ladder = await asyncio.to_thread(_get, f"{http}/api/ladder")
    row = next(r for r in ladder["ladders"]["grid5"] if r["name"] == name)
    games = await _until(lambda: len(g := _games_of(db_url, name)) >= row["games"] and g,
                         f"{row['games']} stored games of {name}", 30 * SCALE)
    return row, games


async def test_an_sdk_bot_with_games_n_stops_after_n_without_a_forfeit(tmp_path: Path
                                                                       ) -> None:
    db_url = f"sqlite:///{tmp_path / 'ladder.db'}"
    server, url = await start_server(db_url, "--ladder", "grid5",
                                     stderr_log=tmp_path / "server.log")
    http = url.replace("ws://", "http://")
    stayer = leaver = None
    try:
        stayer = await start_bot("random", url, "--ladder", "grid5", "--max-games", "2",
                                 stderr_log=tmp_path / "stayer.log")
        # The SDK's own command line: python blunder_bot.py --games 3 (the game that
        # makes 3 is in progress when it leaves, and with two slots so may be a fourth).
        leaver = await Child.launch(
            [sys.executable, str(DATA / "blunder_bot.py"), "--url", url, "--name", "leaver",
             "--ladder", "grid5", "--max-games", "2", "--games", "3"],
            "blunder_bot.py", expect="connected", stderr_log=tmp_path / "leaver.log")
        assert await _exit_status(leaver.proc, 120 * SCALE) == 0  # it stopped by itself
        row, games = await _settled(http, db_url, "leaver")
    finally:
        for child in (leaver, stayer):
            if child is not None:
                await child.stop()
        assert await server.stop() == 0
    # Three games (a fourth only if the server started it before it read leave: with two
    # slots, the two games of a pair start at once), none lost by its fault.
    assert 3 <= len(games) <= 4, games
    assert _by_fault(games, "leaver") == [] and row["forfeits"] == {}
    assert row["connected"] is False


async def test_yard_bot_leaves_on_ctrl_c_after_its_games_in_progress(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'ladder.db'}"
    # A long clock: the leaver's moves wait on the test's hold file meanwhile.
    server, url = await start_server(db_url, "--ladder", "grid5", "--move-time", "60",
                                     stderr_log=tmp_path / "server.log")
    http = url.replace("ws://", "http://")
    hold = tmp_path / "hold"
    log = tmp_path / "leaver.log"
    stayer = leaver = None
    try:
        stayer = await start_bot("random", url, "--ladder", "grid5", "--max-games", "2",
                                 stderr_log=tmp_path / "stayer.log")
        leaver = await Child.start(
            ["bot", f"{DATA / 'slow_bot.py'}:Slow", "--url", url, "--name", "leaver",
             "--option", "think=0", "--option", f"hold={hold}", "--ladder", "grid5",
             "--max-games", "2"], "connected", stderr_log=log)
        hold.touch()  # from now on its moves wait: its games stay in progress

        await _until(lambda: _playing(http, "leaver"), "a game of leaver in progress",
                     30 * SCALE)
        leaver.proc.send_signal(signal.SIGINT)  # Ctrl-C, mid-game
        await _until(lambda: "leaving" in log.read_text(), "leaver leaving", 30 * SCALE)
        hold.unlink()  # its games in progress are played out
        assert await _exit_status(leaver.proc, 120 * SCALE) == 0
        row, games = await _settled(http, db_url, "leaver")
    finally:
        hold.unlink(missing_ok=True)
        for child in (leaver, stayer):
            if child is not None:
                await child.stop()
        assert await server.stop() == 0
    assert games and _by_fault(games, "leaver") == []
    assert row["forfeits"] == {}
