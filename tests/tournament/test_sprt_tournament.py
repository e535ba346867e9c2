"""SPRT tournaments: state from stored games (real SQLite), and ``yard tournament run
--sprt`` / ``resume`` / ``yard sprt`` on the full stack (real server and bot processes)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import pytest

from db.store import Database
from game import Outcome, Termination, Winner
from host.web.listings import sprt_state as web_sprt_state
from ratings.sprt import Decision, SprtSpec, llr
from tests import SCALE
from tests.tournament.test_tournament import _server_running, yard
from tests.yard_cli import YARD, yard_here
from tournament.runner import TournamentRunner
from tournament.spec import TournamentSpec, create
from tournament.sprt import SprtMonitor, record_state, sprt_state, stored_sprt_state

SLOW_BOT = Path(__file__).resolve().parents[1] / "data" / "slow_bot.py"
MRX_WINS = Outcome(Winner.MRX, Termination.SURVIVED)
DET_WINS = Outcome(Winner.DETECTIVES, Termination.CAUGHT)
ABORTED = Outcome(None, Termination.ABORTED)


def sprt_tournament(url: str, pairs: int = 6, test: str = "elo0=0,elo1=50") -> tuple[
        Database, str]:
    db = Database.connect(url)
    spec = TournamentSpec(rules="grid5", bots=["greedy", "random"], pairs=pairs,
                          sprt=SprtSpec.parse(test).to_dict())
    return db, create(db, spec)


def by_hand(db: Database, tid: str) -> list[int]:
    """Pentanomial of greedy's pair scores, counted directly from the stored rows."""
    pairs: dict[str, list[float]] = {}
    for row in db.results(tournament_id=tid):
        if row.winner is None or row.pair_key is None:
            continue
        won = row.mrx_player if row.winner is Winner.MRX else row.detective_player
        pairs.setdefault(row.pair_key, []).append(1.0 if won == "greedy" else 0.0)
    counts = [0] * 5
    for points in pairs.values():
        if len(points) == 2:
            counts[int(2 * sum(points))] += 1
    return counts


def test_state_counts_complete_decided_pairs_from_stored_games(tmp_path: Path) -> None:
    db, tid = sprt_tournament(f"sqlite:///{tmp_path / 's.db'}")
    entries = db.scheduled(tid)          # pair p: games 2p (greedy hunts) and 2p+1
    assert [(e.detectives, e.mrx) for e in entries[:2]] == [("greedy", "random"),
                                                            ("random", "greedy")]
    live = SprtMonitor.load(db, tid)
    assert live is not None and live.state().pairs == 0

    plays = [(0, DET_WINS), (1, MRX_WINS),   # pair 0: greedy wins both -> index 4
             (2, DET_WINS), (3, DET_WINS),   # pair 1: one each -> index 2
             (4, MRX_WINS), (5, DET_WINS),   # pair 2: greedy loses both -> index 0
             (6, ABORTED), (7, MRX_WINS),    # pair 3: one half aborted: not counted
             (8, DET_WINS)]                  # pair 4: one game only: not counted
    for index, outcome in plays:
        db.record_forfeit(tid, entries[index], outcome, "test",
                          game_id=f"g{index}-{outcome.termination.value}")
        live.add(entries[index], outcome)
    state = sprt_state(db, tid)
    assert state is not None
    assert list(state.pentanomial) == by_hand(db, tid) == [1, 0, 1, 0, 1]
    assert state.incomplete_pairs == 2 and state.decision is Decision.CONTINUE
    assert state.llr == pytest.approx(llr([1, 0, 1, 0, 1], 0, 50))
    assert live.state() == state                         # the runner's live count agrees
    assert entries[6].schedule_id in {e.schedule_id for e in db.pending(tid)}

    recorded = record_state(db, tid)
    assert recorded == state
    assert stored_sprt_state(db, tid) == state.to_dict()
    assert not db.get_tournament(tid).finished

    # A plain tournament has no SPRT.
    plain = create(db, TournamentSpec(rules="grid5", bots=["greedy", "random"], pairs=1))
    assert sprt_state(db, plain) is None and stored_sprt_state(db, plain) is None


def test_an_imported_sprt_shows_the_progress_and_decision_of_its_source(
        tmp_path: Path) -> None:
    """`yard export --what records` then `yard import`: `yard tournament list` and `yard
    sprt --json` read as at the source (an import used to turn 25/300 into 25/25 with
    `recorded` null, and lose the secret deals' unplayed part of the schedule)."""
    source, target = (f"sqlite:///{tmp_path / name}" for name in ("a.db", "b.db"))
    db, tid = sprt_tournament(source, pairs=150, test="elo0=0,elo1=200")
    entries = db.scheduled(tid)
    greedy_wins = [Outcome.forfeit(0, Termination.DISCONNECTED),   # greedy hunts
                   Outcome.forfeit(1, Termination.DISCONNECTED)]   # greedy is Mister X
    for entry in entries[:25]:    # 12 pairs 2-0 decide H1; pair 12 has one game
        db.record_forfeit(tid, entry, greedy_wins[entry.index % 2], "test")
    assert record_state(db, tid) is not None
    db.close()
    listing, test = ["tournament", "list", "--json"], ["sprt", "--tournament", tid, "--json"]
    before = [json.loads(yard_here(*args, "--db", source).stdout) for args in (listing, test)]
    assert (before[0][0]["played"], before[0][0]["scheduled"]) == (25, 300)
    assert before[1]["recorded"]["decision"] == "H1" and before[0][0]["sprt"] == "H1"

    exported = tmp_path / "sprt.jsonl"
    done = yard_here("export", "--what", "records", "--db", source, "--out", str(exported))
    assert done.stderr.startswith("wrote 25 game records and 1 tournament to"), done.stderr
    done = yard_here("import", str(exported), "--db", target, "--json")
    assert json.loads(done.stdout) == {"imported": 25, "skipped": 0, "tournaments": 1}
    after = [json.loads(yard_here(*args, "--db", target).stdout) for args in (listing, test)]
    assert after == before
    with Database.connect(source) as a, Database.connect(target) as b:
        assert b.get_tournament(tid).spec == a.get_tournament(tid).spec  # finished: its
        assert [e.seed for e in b.scheduled(tid)] == [e.seed for e in entries]  # deals too
    resumed = yard_here("tournament", "resume", tid, "--db", target, "--json")
    assert resumed.returncode == 0, resumed.stderr     # decided: it plays nothing
    assert json.loads(resumed.stdout)["sprt"]["decision"] == "H1"


def test_yard_sprt_prints_a_legend_and_keeps_its_json(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    db, tid = sprt_tournament(url, pairs=6)
    entries = db.scheduled(tid)
    for index, outcome in enumerate([DET_WINS, MRX_WINS, DET_WINS, DET_WINS, DET_WINS,
                                     MRX_WINS, MRX_WINS, DET_WINS]):   # pairs 4, 2, 4, 0
        db.record_forfeit(tid, entries[index], outcome, "test")
    text = yard_here("sprt", "--tournament", tid, "--db", url)
    assert text.returncode == 0, text.stderr
    flat = " ".join(text.stdout.split())
    assert ("pentanomial [1, 0, 1, 0, 2]: pairs in which greedy scored 0, 0.5, 1, 1.5, 2 "
            "of 2 points") in flat
    assert "(logistic Elo of greedy's mean pair score against random, these pairs only; " \
        "yard leaderboard's is a maximum-likelihood fit" in flat
    assert flat.index("Elo +") < flat.index("(logistic Elo of greedy") < flat.index(
        "no decision yet")
    data = json.loads(yard_here("sprt", "--tournament", tid, "--db", url, "--json").stdout)
    assert set(data) == {"tournament_id", "llr", "lower", "upper", "elo", "elo_ci",
                         "decision", "pairs", "pentanomial", "max_pairs", "incomplete_pairs",
                         "players", "elo0", "elo1", "alpha", "beta", "recorded"}
    assert data["pentanomial"] == [1, 0, 1, 0, 2] and data["pairs"] == 4
    assert data["players"] == ["greedy", "random"] and data["recorded"] is None


def test_a_runner_resumes_only_an_undecided_test(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    db, tid = sprt_tournament(url, pairs=30, test="elo0=0,elo1=200")
    entries = db.scheduled(tid)
    runner = TournamentRunner(db, url, tid)
    assert runner.sprt is not None and not runner.sprt.decided
    runner._skipped = 1               # as if the test had stopped starting games
    assert len(runner._sprt_reopened()) == 60      # undecided: everything is still to play
    for pair in range(12):            # greedy wins 12 pairs 2-0: LLR 12 ln(0.76/0.5) > 2.94
        db.record_forfeit(tid, entries[2 * pair], DET_WINS, "test")
        db.record_forfeit(tid, entries[2 * pair + 1], MRX_WINS, "test")
    runner._skipped = 1
    assert runner._sprt_reopened() == []
    assert runner.sprt.decided and runner.sprt.state().decision is Decision.H1
    # A new runner for the decided test plays nothing and records the decision.
    progress = asyncio.run(TournamentRunner(db, url, tid).run())
    assert progress.played_now == 0 and progress.sprt is not None
    assert progress.sprt.decision is Decision.H1
    info = db.get_tournament(tid)
    assert info.finished and info.state["sprt"]["decision"] == "H1"
    assert len(db.pending(tid)) == 60 - 24
    shown = web_sprt_state(db.get_tournament(tid))     # what the web page shows
    assert shown is not None and shown["decision"] == "H1" and shown["pairs"] == 12


def test_sprt_run_stops_early_and_yard_sprt_agrees(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    # --seed 5: random wins some games (with --seed 3 greedy now sweeps every pair, and a
    # sweep has no finite Elo estimate).
    done = yard("tournament", "run", "--rules", "grid5", "--bots", "greedy,random",
                "--sprt", "elo0=0,elo1=100,alpha=0.05,beta=0.05", "--pairs", "100",
                "--concurrency", "2", "--move-time", "5", "--seed", "5", "--db", url,
                "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    test = report["sprt"]
    assert test["decision"] == "H1" and test["llr"] >= test["upper"]
    assert test["lower"] == pytest.approx(-2.944439) and test["upper"] == pytest.approx(
        2.944439)
    assert 0 < report["games"] < 200 and report["scheduled"] == 200   # stopped early
    tid = report["tournament_id"]
    db = Database.connect(url)
    assert test["pentanomial"] == by_hand(db, tid)
    assert test["pairs"] == sum(test["pentanomial"]) <= report["games"] // 2
    assert test["llr"] == pytest.approx(llr(test["pentanomial"], 0, 100))
    assert test["elo"] > 100 and test["elo_ci"][0] < test["elo"]
    assert db.get_tournament(tid).state["sprt"] == test

    # The commands that only read the database (and a resume that has nothing to play):
    # in this process, as `yard` itself would run them.
    again = yard_here("sprt", "--tournament", tid, "--db", url, "--json")
    assert again.returncode == 0, again.stderr
    recomputed = json.loads(again.stdout)
    assert {k: recomputed[k] for k in test} == test
    text = yard_here("sprt", "--tournament", tid, "--db", url)
    assert "H1 accepted: greedy is stronger" in text.stdout and "LLR" in text.stdout

    # Resuming a decided test plays nothing more.
    before = len(db.results(tournament_id=tid))
    resumed = yard_here("tournament", "resume", tid, "--db", url, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["sprt"]["decision"] == "H1"
    assert len(db.results(tournament_id=tid)) == before
    listed = json.loads(yard_here("tournament", "list", "--db", url, "--json").stdout)
    assert listed[0]["sprt"] == "H1"


def test_sprt_refuses_what_it_cannot_test(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    cases = [
        (["--bots", "greedy,random,run2/rush"], "exactly two players"),
        (["--bots", "greedy,random", "--self-play"], "cannot be combined with --self-play"),
        (["--bots", "greedy,random", "--sprt", "elo0=5,elo1=0"], "elo0 must be below elo1"),
        (["--bots", "greedy,random", "--sprt", "alpha=1"], "alpha and beta"),
    ]
    for args, message in cases:  # refused before anything starts: in this process
        if "--sprt" not in args:
            args = [*args, "--sprt", "elo1=10"]
        done = yard_here("tournament", "run", "--rules", "grid5", *args, "--db", url)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr
    assert not Path(url.removeprefix("sqlite:///")).exists()
    # A plain tournament (as `yard tournament run` without --sprt stores it; its report has
    # no "sprt": tests/tournament/test_tournament.py) is no SPRT to report on.
    db = Database.connect(url)
    tid = create(db, TournamentSpec(rules="grid5", bots=["greedy", "random"], pairs=1))
    db.close()
    done = yard_here("sprt", "--tournament", tid, "--db", url)
    assert done.returncode == 2 and "is not an SPRT" in done.stderr


def test_killed_sprt_run_resumes_and_continues_the_test(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'k.db'}"
    # `slow` is a random player whose moves wait while `gate` exists: the test closes the
    # gate once it has read the 6th game (on a busy machine a few more may have ended by
    # then: counted from the lines the runner wrote), so no further game ends before the
    # kill.
    gate = tmp_path / "gate"
    runner = subprocess.Popen(
        [*YARD, "tournament", "run", "--rules", "grid5", "--bots", "greedy,slow",
         "--engine", f"name=slow class={SLOW_BOT}:Slow option.hold={gate} option.think=0",
         "--sprt", "elo0=0,elo1=200", "--pairs", "150", "--seed", "5", "--move-time", "5",
         "--concurrency", "1", "--db", url], stderr=subprocess.PIPE, text=True)
    assert runner.stderr is not None
    try:
        finished = 0
        for line in runner.stderr:
            if line.startswith("game "):
                assert "SPRT" in line and "LLR" in line
                finished += 1
            if finished == 6:
                gate.touch()
                break
        # The runner reports a game, then records the test: wait for the 6 records.
        db = Database.connect(url)
        tid = db.list_tournaments()[0].tournament_id
        deadline = time.monotonic() + 30 * SCALE
        while ((recorded := stored_sprt_state(db, tid)) is None or recorded["pairs"] < 3) \
                and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the database for the records (a condition)
        runner.kill()
        runner.wait(timeout=30)
        finished += sum(line.startswith("game ") for line in runner.stderr)
    finally:
        gate.unlink(missing_ok=True)
    deadline = time.monotonic() + 30 * SCALE
    while _server_running(url) and time.monotonic() < deadline:
        time.sleep(0.1)  # the orphaned server gets SIGTERM from the kernel and stops
    midway = stored_sprt_state(db, tid)          # recorded game by game as it played
    assert midway is not None and midway["decision"] == "continue"
    # At least 6 games (3 pairs) were reported, and recorded; the next was held at the gate.
    assert 2 <= midway["pairs"] <= finished // 2 and midway["pairs"] <= sum(by_hand(db, tid))

    done = yard("tournament", "resume", tid, "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    test = json.loads(done.stdout)["sprt"]
    assert test["decision"] == "H1" and test["pairs"] > midway["pairs"]
    assert test["pentanomial"] == by_hand(db, tid)
    assert all(a >= b for a, b in zip(test["pentanomial"], midway["pentanomial"],
                                      strict=True))
    state = sprt_state(db, tid)
    assert state is not None and state.to_dict() == test
