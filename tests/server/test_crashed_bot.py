"""A bot process that dies mid-game forfeits with ``disconnected``, as docs/protocol.md
says, even when its move clock is no longer than the server's grace period (the two used to
race, and the clock won: ``timeout``). Real ``yard serve`` and ``yard bot`` processes; the
bot is killed with SIGKILL, so it says nothing before its socket goes."""

from __future__ import annotations

from pathlib import Path

from game import Termination
from protocol import OnTimeout, Policy, StartMatch, TimeControl
from server.admin import AdminClient
from server.config import ServerConfig
from server.transcript import regenerate
from tests import SCALE
from tests.server.test_match_core_harness import Harness
from tournament.processes import start_bot, start_server

DATA = Path(__file__).parents[1] / "data"
SECONDS = 2.0
"""The move time and the grace period alike."""


def setup(config: ServerConfig) -> tuple[Harness, int, int, int]:
    h = Harness(config)
    return h, h.connect("runner"), h.connect("hunter"), h.admin()


async def test_a_bot_killed_on_its_turn_forfeits_disconnected(tmp_path: Path) -> None:
    server, url = await start_server(f"sqlite:///{tmp_path / 'crash.db'}", "--grace",
                                     str(SECONDS), admin_token="secret",
                                     stderr_log=tmp_path / "server.log")
    victim = other = None
    try:
        # It thinks for a minute a move: it is on its turn when it is killed.
        victim = await start_bot(f"{DATA / 'slow_bot.py'}:Slow", url, "--name", "victim",
                                 "--option", "think=60", stderr_log=tmp_path / "victim.log")
        other = await start_bot("random", url, stderr_log=tmp_path / "other.log")
        async with AdminClient(url, "secret") as admin:
            game = await admin.start_match(StartMatch(
                "grid5", "victim", ["random"], seed=1, time_control=TimeControl(SECONDS)))
            victim.proc.kill()  # SIGKILL: Mister X's first turn is running
            result = await admin.result(game, timeout=30 * SCALE)
    finally:
        for child in (victim, other):
            if child is not None:
                await child.stop()
        assert await server.stop() == 0
    assert result.termination is Termination.DISCONNECTED, result
    assert result.seat == "mrx" and result.moves == 0


def test_a_seat_whose_clock_runs_out_while_it_is_away_forfeits_disconnected() -> None:
    """The sans-I/O core with a fake clock: the mover drops 0.5 s into a 2 s turn, with a
    2 s grace period. Its clock runs out first (at 2 s), and the seat forfeits
    ``disconnected``; the stored log replays to the same end."""
    h, x, _d, admin = setup(ServerConfig(grace_s=SECONDS))
    h.start(admin, "runner", ["hunter"], move_s=SECONDS)
    h.advance(0.5)
    h.drop(x)
    h.advance(SECONDS - 0.5 - 0.01)
    assert not h.finished
    h.advance(0.02)
    [finished] = h.finished
    record = finished.record
    assert (record.outcome.termination, record.outcome.seat) == (Termination.DISCONNECTED, 0)
    assert record.turns[-1].fault == "disconnected"
    assert regenerate(record).turns == record.turns


def test_a_seat_whose_holder_comes_back_in_time_still_times_out_on_its_clock() -> None:
    h, x, _d, admin = setup(ServerConfig(grace_s=SECONDS))
    game = h.start(admin, "runner", ["hunter"], move_s=SECONDS)
    token = h.welcome(x).resume_token
    h.drop(x)
    h.advance(1.0)
    h.connect("runner", resume=token)  # back, and silent: slow, not gone
    h.advance(1.5)
    [finished] = h.finished
    assert finished.record.outcome.termination is Termination.TIMEOUT
    assert finished.result.game == game


def test_under_on_timeout_random_a_seat_that_is_away_is_played_for() -> None:
    h, x, _d, admin = setup(ServerConfig(grace_s=5.0))
    h.start(admin, "runner", ["hunter"], move_s=SECONDS, policy=Policy(OnTimeout.RANDOM))
    h.drop(x)
    h.advance(SECONDS + 0.01)
    assert not h.finished  # a random move for it; its grace period runs on
    h.advance(5.0)
    [finished] = h.finished
    assert finished.record.outcome.termination is Termination.DISCONNECTED
    assert finished.record.turns[0].fault == "random_move_on_timeout"
