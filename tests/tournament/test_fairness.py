"""Fair tournaments: each game slot has its own bot processes, every move is stored with the
server's time and the effort the bot reported, and the summary shows both per bot. Real
server, real bot processes, real SQLite files."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from db.store import Database
from host.hosted import HostedServer, server_config
from protocol.tokens import new_token
from server.admin import AdminClient
from tests import SCALE
from tests.yard_cli import YARD
from tournament.pool import (
    BotLaunch,
    BotPool,
    default_concurrency,
    oversubscription,
)
from tournament.processes import ProcessError
from tournament.report import tournament_report

SEARCH_S = 0.05  # alphabeta's time per move in these tests


def yard(*args: str, cores: int | None = None, timeout: float = 120
         ) -> subprocess.CompletedProcess[str]:
    """Run ``yard ARGS``; with ``cores``, pinned (with its children) to that many cores."""
    pin = None
    if cores is not None:
        chosen = sorted(os.sched_getaffinity(0))[:cores]
        pin = lambda: os.sched_setaffinity(0, chosen)  # noqa: E731
    return subprocess.run([*YARD, *args], capture_output=True, text=True, check=False,
                          timeout=timeout * SCALE, preexec_fn=pin)


def test_default_concurrency_and_the_oversubscription_warning() -> None:
    timed = BotLaunch("mcts", ("bot", "mcts"), timed=True)
    wide = BotLaunch("mcts", ("bot", "mcts", "--option", "workers=4"), timed=True, cores=4)
    quick = BotLaunch("random", ("bot", "random"))
    assert default_concurrency([timed, quick], cores=16) == 16
    assert default_concurrency([wide, quick], cores=16) == 4
    assert default_concurrency([wide], cores=2) == 1
    assert oversubscription(16, [timed, quick], cores=16) is None
    assert oversubscription(64, [quick], cores=2) is None  # untimed bots lose nothing
    warning = oversubscription(5, [wide, quick], cores=16)
    assert warning is not None and "need 20 cores" in warning and "(mcts)" in warning
    assert "\n" not in warning


async def test_a_pool_starts_one_process_per_bot_and_slot(tmp_path: Path) -> None:
    log = tmp_path / "children.log"
    token = new_token()
    # The server as the tournament runner hosts it, in this process.
    server = HostedServer(server_config("127.0.0.1", admin_token=token),
                          f"sqlite:///{tmp_path / 'p.db'}", log_path=log)
    url = await asyncio.to_thread(server.start)
    launches = [BotLaunch("random", ("bot", "random")),
                BotLaunch("greedy", ("bot", "greedy"))]
    pool = BotPool(launches, 2, log)
    try:
        await pool.start(url)
        pids = pool.pids()
        assert sorted(pids) == [(b, i) for b in ("greedy", "random") for i in ("1", "2")]
        assert len(set(pids.values())) == 4
        async with AdminClient(url, token) as admin:
            bots = {b.name: b for b in await admin.list_bots()}
        assert {name: (b.sessions, b.instances) for name, b in bots.items()} == {
            "greedy": (2, ["1", "2"]), "random": (2, ["1", "2"])}
        children = list(pool.children.values())
        await pool.stop()
        assert all(child.proc.returncode is not None for child in children)

        # One process that cannot start: the others are stopped, and the reason is given.
        broken = BotPool([*launches, BotLaunch("mcts", ("bot", "mcts", "--option",
                                                        "nonsense=1"))], 1, log)
        with pytest.raises(ProcessError, match="no option 'nonsense'"):
            await broken.start(url)
        assert broken.children == {}
        async with AdminClient(url, token) as admin:
            assert await admin.list_bots() == []
    finally:
        await pool.stop()
        await server.stop_async()


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_concurrent_games_have_their_own_processes_and_every_move_its_compute(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    done = yard("tournament", "run", "--rules", "grid5", "--bots", "alphabeta,random",
                "--pairs", "2", "--concurrency", "2", "--move-time", "5",
                "--bot-option", f"alphabeta:time={SEARCH_S}", "--db", url, "--json",
                "--log", str(tmp_path / "children.log"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    db = Database.connect(url)
    records = [db.load_game(g.game_id) for g in db.list_games(tournament_id=report[
        "tournament_id"])]
    assert len(records) == 4

    # Every game is played by the processes of one slot, and games that ran at the same
    # time never shared a process.
    spans = {}
    for record in records:
        (instance,) = {seat.instance for seat in record.seats}
        assert instance in ("1", "2")
        spans[record.game_id] = (instance, (record.started_at.timestamp(),
                                            record.finished_at.timestamp()))
    pairs = [(a, b) for a in spans for b in spans if a < b
             and overlaps(spans[a][1], spans[b][1])]
    assert pairs, "the first two games start together and should overlap"
    assert all(spans[a][0] != spans[b][0] for a, b in pairs)

    # Per move: the server's time, and the effort alphabeta reported when it searched.
    searched, quick = [], []
    for record in records:
        bots = {seat.seat: seat.bot_name for seat in record.seats}
        for turn in record.turns:
            assert turn.move is not None and 0 < turn.time_used < 5
            if bots[turn.seat] == "random":
                assert (turn.playouts, turn.nodes, turn.depth) == (None, None, None)
                quick.append(turn.time_used)
            elif turn.depth is not None:
                assert turn.nodes is not None and turn.nodes > 0 and turn.depth >= 1
                searched.append(turn)
    assert searched and quick

    # The summary's means are those of the stored moves, per bot and per process.
    compute = report["compute"]
    assert set(compute) == {"alphabeta", "random"}
    assert set(compute["alphabeta"]["instances"]) == {"1", "2"}
    mean_nodes = sum(t.nodes or 0 for t in searched) / len(searched)
    assert compute["alphabeta"]["mean_nodes"] == pytest.approx(mean_nodes, abs=0.05)
    assert compute["random"]["mean_time_s"] == pytest.approx(sum(quick) / len(quick),
                                                             abs=1e-4)
    assert compute["random"]["mean_playouts"] is None
    assert compute["alphabeta"]["moves"] + compute["random"]["moves"] == sum(
        len(r.turns) for r in records)
    text = io.StringIO()
    tournament_report(db, report["tournament_id"], samples=10).render(
        Console(file=text, width=120))
    assert "Compute per move" in text.getvalue()
    line = next(row for row in text.getvalue().splitlines() if "alphabeta" in row
                and " s " in row)
    assert f"{compute['alphabeta']['mean_time_s']:.3f} s" in line


def test_default_concurrency_follows_the_cores_and_oversubscription_is_warned(
        tmp_path: Path) -> None:
    args = ["tournament", "run", "--rules", "grid5", "--bots", "alphabeta,random",
            "--pairs", "1", "--bot-option", "alphabeta:time=0.02"]
    log = tmp_path / "one.log"
    done = yard(*args, "--db", f"sqlite:///{tmp_path / 'a.db'}", "--log", str(log),
                cores=1)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    assert log.read_text().count("alphabeta: played 2 games") == 1  # one slot, one process
    log = tmp_path / "two.log"
    done = yard(*args, "--concurrency", "2", "--db", f"sqlite:///{tmp_path / 'b.db'}",
                "--log", str(log), cores=1)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: 2 games at once with time-based bots (alphabeta) need 2 "
                        "cores, this machine has 1: their moves share cores and get less "
                        "compute than their time limit suggests (lower --concurrency)"]
    assert log.read_text().count("alphabeta: played 1 games") == 2


SLEEPER = """
import time
from bots.sdk import Bot, run

class Sleeper(Bot):
    name = "sleeper"

    def choose(self, view, legal):
        time.sleep(0.1)  # its "search": 0.1 s of the server's clock per move
        self.report(playouts=7, depth=2)
        return self.rng.choice(legal)

run(Sleeper)
"""


def test_a_custom_bot_reports_effort_through_the_sdk_and_plays_without_a_pool(
        serve_process: tuple[str, str], tmp_path: Path) -> None:
    ws_url, url = serve_process
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    bots = [subprocess.Popen(args, stdout=subprocess.PIPE, text=True) for args in
            ([sys.executable, str(script), "--url", ws_url],
             [*YARD, "bot", "random", "--url", ws_url])]
    try:
        for bot in bots:
            assert bot.stdout is not None and bot.stdout.readline().startswith("connected")
        done = yard("tournament", "run", "--rules", "grid5", "--server", ws_url, "--bots",
                    "sleeper,random", "--pairs", "1", "--concurrency", "2",
                    "--move-time", "5", "--db", url, "--json")
    finally:
        for bot in bots:
            bot.terminate()
            bot.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    compute = json.loads(done.stdout)["compute"]
    sleeper = compute["sleeper"]
    assert (sleeper["mean_playouts"], sleeper["mean_depth"], sleeper["mean_nodes"]) == (
        7.0, 2.0, None)
    assert 0.1 <= sleeper["mean_time_s"] < 2.0
    # random's moves are not charged the sleeper's 0.1 s (an absolute bound would also
    # measure how busy the machine is)
    assert compute["random"]["mean_time_s"] < sleeper["mean_time_s"]
    assert "instances" not in sleeper  # it connected by itself: one process, no slots


def test_search_bots_report_their_effort_and_say_whether_they_are_time_based() -> None:
    from bots.registry import make_bot
    from game import new_game

    state = new_game("grid5", seed=3)
    mcts = make_bot("mcts", 1, {"iterations": "100"})
    mcts.choose(state.view(0), state.legal_moves())
    assert mcts.take_effort() == {"playouts": 100}
    assert mcts.take_effort() is None  # taken once
    forced = state.legal_moves()[:1]
    mcts.choose(state.view(0), forced)
    assert mcts.take_effort() is None  # a forced move is no search
    alphabeta = make_bot("alphabeta", 1, {"depth": "2"})
    alphabeta.choose(state.view(0), state.legal_moves())
    effort = alphabeta.take_effort()
    assert effort is not None and effort["nodes"] > 0 and effort["depth"] in (1, 2)
    assert [make_bot(name, 0, options).timed for name, options in (
        ("mcts", {}), ("mcts", {"iterations": "5"}), ("alphabeta", {}),
        ("alphabeta", {"depth": "3"}), ("random", {}), ("greedy", {}))] == [
        True, False, True, False, False, False]
    assert make_bot("mcts", 0, {"workers": "3"}).cores == 3
