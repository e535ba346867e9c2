"""``yard tournament``: the full stack (real server, real bot processes, real SQLite file)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bots.spec import parse_spec
from db.store import Database
from game import Move, Outcome, Termination, Winner, from_text
from ratings.outcomes import from_results
from tests import SCALE
from tests.yard_cli import YARD, yard_here
from tournament import processes
from tournament.engines import spec_engine, start_engine


def yard(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*YARD, *args], capture_output=True, text=True,
                          timeout=timeout * SCALE, check=False)


def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tour.db'}"


def test_small_tournament_end_to_end(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    done = yard("tournament", "run", "--rules", "grid5", "--bots", "random,greedy,run2/rush",
                "--pairs", "2", "--seed", "4", "--move-time", "5", "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["games"] == 12
    assert "sprt" not in report  # a plain tournament (test_sprt_tournament.py: --sprt)
    tid = report["tournament_id"]

    db = Database.connect(url)
    rows = db.results(tournament_id=tid)
    assert len(rows) == 12 and db.pending(tid) == []
    # Every scheduled game was played exactly once, by the scheduled players.
    scheduled = {e.schedule_id: e for e in db.scheduled(tid)}
    assert sorted(r.schedule_id or 0 for r in rows) == sorted(k or 0 for k in scheduled)
    for row in rows:
        entry = scheduled[row.schedule_id]
        assert (row.mrx_player, row.detective_player) == (entry.mrx, entry.detectives)

    # Leaderboard and matrix agree with the games actually stored.
    games = from_results(rows).games
    board = report["leaderboard"]
    assert board["games"] == len(games)
    wins_as_mrx = Counter(g.mrx for g in games if g.mrx_won)
    for line in board["rows"]:
        assert line["mrx_wins"] == wins_as_mrx[line["player"]]
    matrix = report["matrix"]
    for r, det in enumerate(matrix["rows"]):
        for c, mrx in enumerate(matrix["columns"]):
            cell = matrix["cells"][r][c]
            played = [g for g in games if g.detectives == det and g.mrx == mrx]
            assert cell["games"] == len(played)
            assert cell["detective_wins"] == sum(not g.mrx_won for g in played)

    # Each stored game replays with the engine to its stored result; pairs share the
    # detectives' starts (--pairing fresh-mrx, the default: Mister X's is drawn per game).
    starts: dict[str, set[tuple[int, ...]]] = {}
    for row in rows:
        record = db.load_game(row.game_id)
        state = from_text(record.start_position)
        for turn in record.turns:
            if turn.move is not None:
                state = state.apply(Move.parse(turn.move))
        if record.outcome.termination not in (Termination.TIMEOUT, Termination.ILLEGAL_MOVE):
            assert state.outcome == record.outcome
        starts.setdefault(row.pair_key or "", set()).add(
            from_text(record.start_position).positions[1:])
        assert record.mrx_seed is not None
    assert all(len(s) == 1 for s in starts.values())


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    cases = [
        # (bots are checked with `yard bots --only ...`; a miss lists every bot)
        (["--rules", "grid5", "--bots", "random,nosuchbot"],
         "unknown bot 'nosuchbot'; bots: alphabeta, dqn, greedy,"),
        (["--rules", "nosuchrules", "--bots", "random,greedy"], "unknown ruleset"),
        (["--rules", "grid5", "--bots", "random,rush"], "cannot play mrx"),
        (["--rules", "grid5", "--bots", "random"], "at least two players"),
        (["--rules", "grid5", "--bots", "random,mcts", "--bot-option", "mcts:nonsense=1"],
         "bot 'mcts' has no option 'nonsense'"),
        (["--rules", "grid5", "--bots", "random,mcts", "--bot-option", "mcts:iterations=x"],
         "iterations='x' is not a valid int"),
    ]
    # Refused before anything is stored or started: in this process (the other tests start
    # `yard`), but for the first case.
    for i, (args, message) in enumerate(cases):
        done = (yard if i == 0 else yard_here)("tournament", "run", *args, "--db", url)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr
        assert "Traceback" not in done.stderr
    assert yard_here("tournament", "resume", "nope", "--db", url).returncode == 2
    # Nothing was stored by any of the refused runs.
    assert not Path(url.removeprefix("sqlite:///")).exists() or \
        json.loads(yard_here("tournament", "list", "--db", url, "--json").stdout) == []


def test_child_output_goes_to_the_log_not_the_terminal(tmp_path: Path) -> None:
    url, log = db_url(tmp_path), tmp_path / "children.log"
    done = yard("tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
                "--pairs", "1", "--concurrency", "2", "--db", url, "--log", str(log))
    assert done.returncode == 0, done.stderr
    assert f"server and bot output: {log}" in done.stderr
    assert "played" not in done.stderr and "games stored" not in done.stderr
    # While it runs, the address to watch it (tests/host/test_web_browser.py opens one).
    watch = [line for line in done.stderr.splitlines() if "watch" in line]
    assert watch and "http://127.0.0.1:" in watch[0] and "#/tournaments/" in watch[0]
    # The run's own server is gone: the last line says how to browse the results.
    tid = done.stderr.split("#/tournaments/")[1].split()[0]
    assert f"browse it: yard web --db {url} (page #/tournaments/{tid}" in done.stderr
    children = log.read_text()
    # Two game slots: each bot ran as two processes, one game each.
    assert children.count("random: played 1 games") == 2
    assert "stopped; 2 games stored" in children
    done = yard_here("tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
                     "--pairs", "1", "--db", url, "--log", str(tmp_path / "no" / "such.log"))
    assert done.returncode == 2
    assert "cannot write the process log" in done.stderr and "Traceback" not in done.stderr


async def test_a_child_that_cannot_start_reports_the_end_of_its_log(tmp_path: Path) -> None:
    log = tmp_path / "children.log"
    with pytest.raises(processes.ProcessError) as failed:
        await start_engine(spec_engine(parse_spec("mcts:nonsense=1")), "ws://127.0.0.1:9",
                           stderr_log=log)
    assert "did not start" in str(failed.value)
    assert "bot 'mcts' has no option 'nonsense'" in str(failed.value)
    assert "bot 'mcts' has no option 'nonsense'" in log.read_text()


SERVE_ARGS = ["--grace", "0.5"]  # the `serve_process` fixture's: a short disconnect grace


def start_bot(args: list[str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("connected"), "bot did not connect"
    return proc


CRASHER = """
import os, sys
from bots.sdk import Bot, run

class Crasher(Bot):
    name = "crasher"

    def choose(self, view, legal):
        if view.seat != 0 and view.move_number >= 1:
            os._exit(3)  # dies in the middle of its first game as detectives
        return self.rng.choice(legal)

run(Crasher)
"""


def test_missing_and_crashing_bots_forfeit_and_the_tournament_goes_on(
        serve_process: tuple[str, str], tmp_path: Path) -> None:
    ws_url, url = serve_process
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    random_bot = start_bot([*YARD, "bot", "random", "--url", ws_url])
    crasher = start_bot([sys.executable, str(script), "--url", ws_url])
    try:
        done = yard("tournament", "run", "--rules", "grid5", "--server", ws_url, "--bots",
                    "random,crasher,ghost", "--pairs", "1", "--concurrency", "1",
                    "--connect-timeout", "1", "--move-time", "5", "--db", url, "--json")
    finally:
        random_bot.terminate()
        random_bot.wait(timeout=30)
    assert crasher.wait(timeout=30) == 3
    assert done.returncode == 0, done.stderr
    tid = json.loads(done.stdout)["tournament_id"]
    db = Database.connect(url)
    games = db.list_games(tournament_id=tid)
    assert len(games) == 6
    by_players = {(g.detective_player, g.mrx_player): g for g in games}
    # ghost never connected: it loses every game it had against random.
    assert by_players[("ghost", "random")].winner is Winner.MRX
    assert by_players[("random", "ghost")].winner is Winner.DETECTIVES
    assert by_players[("random", "ghost")].termination is Termination.DISCONNECTED
    # crasher played Mister X to a rule ending, then died mid-game as detectives.
    first, second = [g for g in sorted(games, key=lambda g: g.started_at)
                     if {g.mrx_player, g.detective_player} == {"crasher", "random"}]
    assert first.mrx_player == "crasher"
    assert first.termination in (Termination.CAUGHT, Termination.SURVIVED,
                                 Termination.CORNERED)
    assert (second.detective_player, second.termination) == ("crasher",
                                                             Termination.DISCONNECTED)
    assert second.moves > 0 and second.winner is Winner.MRX
    # crasher against ghost: both missing, so the game is aborted and stays pending.
    assert len(db.pending(tid)) == 2


def _server_running(db_path: str) -> bool:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if db_path.encode() in cmdline and b"serve" in cmdline:
                return True
    return False


def test_killed_runner_resumes_and_plays_every_game_exactly_once(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    runner = subprocess.Popen(
        [*YARD, "tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
         "--pairs", "15", "--seed", "9", "--move-time", "5", "--concurrency", "1",
         "--db", url],
        stderr=subprocess.PIPE, text=True)
    assert runner.stderr is not None
    finished = 0
    for line in runner.stderr:
        finished += line.startswith("game ")
        if finished == 4:
            break
    runner.kill()  # SIGKILL: no cleanup in the runner at all
    runner.wait(timeout=30)
    deadline = time.monotonic() + 30 * SCALE
    while _server_running(url) and time.monotonic() < deadline:
        time.sleep(0.1)  # the orphaned server gets SIGTERM from the kernel and stops
    assert not _server_running(url)

    db = Database.connect(url)
    tid = db.list_tournaments()[0].tournament_id
    before = db.get_tournament(tid)
    assert 4 <= before.played < before.scheduled == 30

    done = yard("tournament", "resume", tid, "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 30
    assert db.pending(tid) == []
    played = [r.schedule_id or 0 for r in db.results(tournament_id=tid)
              if r.termination is not Termination.ABORTED]
    assert sorted(played) == sorted(e.schedule_id or 0 for e in db.scheduled(tid))
    assert len(played) == len(set(played)) == 30


def test_concurrency_is_checked_before_anything_is_stored(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    done = yard_here("tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
                     "--concurrency", "0", "--db", url)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'--concurrency': 0 is not in the range x>=1" in lines[0]
    assert not Path(url.removeprefix("sqlite:///")).exists()
    done = yard_here("tournament", "resume", "t1", "--concurrency", "0", "--db", url)
    assert done.returncode == 2 and "'--concurrency'" in done.stderr
    assert not Path(url.removeprefix("sqlite:///")).exists()


def test_runner_uses_the_bot_checks_it_is_given(tmp_path: Path) -> None:
    """`yard tournament run` checks the bots once and hands the answer to the runner,
    which then starts no second `yard bots --json` (what it was given is what it uses)."""
    from tournament.discovery import BuiltinBot
    from tournament.runner import TournamentRunner
    from tournament.spec import TournamentSpec, create

    url = db_url(tmp_path)
    db = Database.connect(url)
    tid = create(db, TournamentSpec(rules="grid5", bots=["random"], self_play=True, pairs=1))
    given = {"random": BuiltinBot("random", ["detectives", "mrx"], timed=True, cores=3)}
    launches = asyncio.run(TournamentRunner(db, url, tid, bots=given).launches())
    assert [(b.name, b.timed, b.cores) for b in launches] == [("random", True, 3)]
    # Without them it asks `yard bots --json`: random is neither timed nor multi-core.
    launches = asyncio.run(TournamentRunner(db, url, tid).launches())
    assert [(b.name, b.timed, b.cores) for b in launches] == [("random", False, 1)]
    db.close()


def test_sigterm_stops_a_run_and_says_how_to_resume(tmp_path: Path) -> None:
    """`kill` (SIGTERM, as a service manager stops it) ends the run as Ctrl-C does: exit
    130, the command that resumes it, and the resume plays the rest. Also in a runner
    started with SIGINT ignored, as `yard tournament run ... &` in a script is (SIGTERM
    once did nothing there)."""
    url = db_url(tmp_path)
    ignoring_sigint = [sys.executable, "-c", "import signal, sys; "
                       "signal.signal(signal.SIGINT, signal.SIG_IGN); "
                       "from yard.cli import main; main(sys.argv[1:])"]
    runner = subprocess.Popen(
        [*ignoring_sigint, "tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
         "--pairs", "4", "--seed", "4", "--concurrency", "1", "--db", url],
        stderr=subprocess.PIPE, text=True)
    assert runner.stderr is not None
    for line in runner.stderr:
        if line.startswith("game "):
            break
    runner.terminate()
    rest = runner.stderr.read()
    assert runner.wait(timeout=60) == 130, rest
    tid = Database.connect(url).list_tournaments()[0].tournament_id
    assert f"yard tournament resume {tid} --db {url}" in rest and "Traceback" not in rest
    done = yard("tournament", "resume", tid, "--db", url, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["games"] == 8, done.stderr


SLOW_BOT = Path(__file__).resolve().parents[1] / "data" / "slow_bot.py"


def test_delete_refuses_a_running_tournament_and_played_games_unless_asked(
        tmp_path: Path) -> None:
    """`yard tournament delete ID`: refused while a runner plays it (its lease, gone with
    the runner), and without --yes once games are stored; then everything of it goes."""
    from tournament.spec import TournamentSpec, create

    url = db_url(tmp_path)
    gate = tmp_path / "gate"  # the slow bot's moves wait while it exists: a game runs
    gate.touch()
    runner = subprocess.Popen(
        [*YARD, "tournament", "run", "--rules", "grid5", "--bots", "random,slow",
         "--engine", f"name=slow class={SLOW_BOT}:Slow option.hold={gate} option.think=0",
         "--pairs", "2", "--seed", "3", "--concurrency", "1", "--db", url],
        stderr=subprocess.PIPE, text=True)
    assert runner.stderr is not None
    try:
        for line in runner.stderr:
            if "#/tournaments/" in line:  # its server and bots are up
                break
        tid = line.split("#/tournaments/")[1].split()[0]
        refused = yard_here("tournament", "delete", tid, "--yes", "--db", url)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith(
            f"error: tournament {tid} is being played (a runner on {socket.gethostname()} "
            f"(process {runner.pid}) holds it until "), refused.stderr
        assert refused.stderr.rstrip().endswith("stop it before deleting it")
    finally:
        runner.kill()  # SIGKILL: it gives nothing up
        runner.wait(timeout=30)
        gate.unlink(missing_ok=True)
    deadline = time.monotonic() + 30 * SCALE
    while _server_running(url) and time.monotonic() < deadline:
        time.sleep(0.1)  # the orphaned server stores the game it aborts, then stops
    done = yard_here("tournament", "delete", tid, "--yes", "--json", "--db", url)
    assert done.returncode == 0, done.stderr  # its runner is gone, and its lease with it
    deleted = json.loads(done.stdout)
    assert (deleted["tournament_id"], deleted["deleted"], deleted["scheduled"]) == \
        (tid, True, 4)
    db = Database.connect(url)
    assert db.list_tournaments() == [] and db.list_games() == []

    # Stored games need --yes: without it nothing is deleted.
    tid = create(db, TournamentSpec(rules="grid5", bots=["random", "greedy"], pairs=1))
    db.record_forfeit(tid, db.scheduled(tid)[0], Outcome.forfeit(1, Termination.DISCONNECTED),
                      "test")
    refused = yard_here("tournament", "delete", tid, "--db", url)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"error: tournament {tid} has 1 stored game (and 2 schedule entries): nothing "
        f"deleted; pass --yes to delete them with it (keep a copy first: yard export --what "
        f"records --tournament {tid} --out FILE)\n")
    assert db.get_tournament(tid).played == 1
    done = yard_here("tournament", "delete", tid, "--yes", "--db", url)
    assert done.stdout.startswith(f"deleted tournament {tid}: 1 game, 2 schedule entries")
    assert db.list_tournaments() == [] and db.list_games() == []
    missing = yard_here("tournament", "delete", tid, "--db", url)
    assert missing.returncode == 2 and f"no tournament {tid!r}" in missing.stderr
    db.close()
