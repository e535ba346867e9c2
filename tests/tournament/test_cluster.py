"""Tournaments on a Ray cluster (tournament/cluster.py): a local Ray instance with 2
CPUs (one per module) and the throwaway PostgreSQL server (``.ci/postgres start``). Under
CI (CI=true) a missing Ray or PostgreSQL is a failure, never a skip; locally without
YARD_TEST_POSTGRES_URL the Ray/PostgreSQL tests are not collected (like
tests/db/test_db_postgres.py)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from db.models import GameRow, ScheduledGameRow
from db.store import Database
from game import Outcome, Termination
from ratings.sprt import Decision, SprtSpec
from tests.yard_cli import YARD, yard_here
from tournament.cluster import ClaimingRunner, ClusterRun
from tournament.engines import parse_engine
from tournament.players import resolve_players
from tournament.ray_setup import ClusterError, check_database, init_ray, parse_cluster
from tournament.spec import TournamentSpec, create
from tournament.sprt import SprtMonitor, sprt_state, stored_sprt_state

POSTGRES_URL = os.environ.get("YARD_TEST_POSTGRES_URL")
HAVE_RAY = importlib.util.find_spec("ray") is not None
SLOW_BOT = Path(__file__).parents[1] / "data" / "slow_bot.py"

# One worker runs these tests one after another on one Ray instance (conftest.RAY_GROUPS);
# `--cluster auto` below is always given its instance's address (RAY_ADDRESS).
pytestmark = pytest.mark.xdist_group("ray")


def test_ci_runs_the_cluster_tests() -> None:
    if os.environ.get("CI") == "true":
        assert HAVE_RAY, "CI=true but ray is not installed: .ci/run must install .[cluster]"
        assert POSTGRES_URL, "CI=true but YARD_TEST_POSTGRES_URL is not set"


def test_cluster_addresses_parse_or_fail_clearly() -> None:
    assert parse_cluster("local:3").local_cpus == 3
    assert parse_cluster("local").local
    assert parse_cluster("auto").address == "auto"
    assert parse_cluster("ray://head:10001").address == "ray://head:10001"
    for bad in ("local:0", "local:x", "ray://", "head:6379", ""):
        with pytest.raises(ClusterError, match="expected auto, ray://HOST:PORT"):
            parse_cluster(bad)


def test_a_local_cluster_starts_ray_with_its_cpus_and_others_join_theirs() -> None:
    """What `--cluster local:N` and `--cluster auto` ask of Ray. The CLI tests below run on
    the tests' one Ray instance (`auto`, RAY_ADDRESS): the ray_local fixture starts it with
    the call `local:2` makes."""
    calls: list[dict[str, Any]] = []

    class Ray:
        def init(self, **options: Any) -> None:
            calls.append(options)

    init_ray(Ray(), parse_cluster("local:3"))
    init_ray(Ray(), parse_cluster("auto"))
    init_ray(Ray(), parse_cluster("ray://head:10001"))
    assert calls[0]["num_cpus"] == 3 and "address" not in calls[0]
    assert [c.get("address") for c in calls[1:]] == ["auto", "ray://head:10001"]
    assert all("num_cpus" not in c for c in calls[1:])


def test_sqlite_is_refused_when_workers_may_be_elsewhere(tmp_path: Path) -> None:
    sqlite = f"sqlite:///{tmp_path / 'y.db'}"
    check_database(sqlite, parse_cluster("local:2"), nodes=1)  # one machine: allowed
    check_database(sqlite, parse_cluster("auto"), nodes=1)
    with pytest.raises(ClusterError, match="cannot share a SQLite file; use PostgreSQL"):
        check_database(sqlite, parse_cluster("auto"), nodes=3)
    with pytest.raises(ClusterError, match="cannot share a SQLite file"):
        check_database(sqlite, parse_cluster("ray://head:10001"), nodes=1)
    check_database("postgresql+psycopg://u@h/db", parse_cluster("ray://head:10001"), nodes=5)


def test_cli_refuses_sqlite_for_a_remote_cluster_in_one_line(tmp_path: Path) -> None:
    # Refused before anything starts: in this process (the tests below start `yard`).
    done = yard_here("tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
                     "--pairs", "1", "--cluster", "ray://127.0.0.1:9",
                     "--db", f"sqlite:///{tmp_path / 'y.db'}")
    assert done.returncode == 2, done.stderr
    assert "cannot share a SQLite file; use PostgreSQL" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_rejects_a_bad_cluster_address(tmp_path: Path) -> None:
    done = yard_here("tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
                     "--cluster", "nowhere", "--db", f"sqlite:///{tmp_path / 'y.db'}")
    assert done.returncode == 2 and "expected auto, ray://HOST:PORT" in done.stderr
    assert not (tmp_path / "y.db").exists()  # nothing stored before the address is checked


def test_cli_stores_nothing_when_the_cluster_cannot_be_reached(tmp_path: Path) -> None:
    """`--cluster auto` when the cluster this machine names (RAY_ADDRESS, here a Ray client
    address nobody listens on) cannot be reached: one error line, exit 2, and the tournament
    is not created (Ray is reached before anything is stored). An explicit dead address,
    not "no Ray here": `auto` also finds any Ray instance running on this machine."""
    env = {**os.environ, "RAY_ADDRESS": f"ray://127.0.0.1:{_closed_port()}",
           "RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S": "1",
           "RAY_CLIENT_MAX_CONNECTION_TIMEOUT_S": "1"}
    done = subprocess.run(
        [*YARD, "tournament", "run", "--rules", "grid5", "--bots", "random,greedy",
         "--pairs", "1", "--cluster", "auto", "--db", f"sqlite:///{tmp_path / 'y.db'}"],
        capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr
    reason = "cannot start or reach Ray" if HAVE_RAY else "--cluster needs Ray"
    assert reason in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "y.db").exists()


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tournament(db: Database, bots: str, pairs: int, engines: tuple[str, ...] = ()) -> str:
    players, options, used = resolve_players(
        bots, [parse_engine(text) for text in engines], [])
    spec = TournamentSpec(rules="grid5", bots=players, pairs=pairs, seed=3,
                          move_time=5.0, connect_timeout=20.0, bot_options=options,
                          engines={name: e.to_dict() for name, e in used.items()})
    return create(db, spec)


def _stored(db_url: str, tournament_id: str) -> Counter[int]:
    """schedule entry index -> games stored for it (finished, not aborted)."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(ScheduledGameRow.game_index)
                .join(GameRow, GameRow.schedule_id == ScheduledGameRow.id)
                .where(ScheduledGameRow.tournament_id == tournament_id)).all()
    finally:
        engine.dispose()
    return Counter(index for (index,) in rows)


def _wait_for_claim(db_url: str, tournament_id: str, owner: str) -> int:
    """The index of a game ``owner`` holds a lease on and has not finished."""
    engine = sa.create_engine(db_url)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                index = conn.execute(
                    sa.select(ScheduledGameRow.game_index)
                    .outerjoin(GameRow, GameRow.schedule_id == ScheduledGameRow.id)
                    .where(ScheduledGameRow.tournament_id == tournament_id,
                           ScheduledGameRow.lease_owner == owner,
                           GameRow.id.is_(None))).scalar()
            if index is not None:
                return int(index)
            time.sleep(0.05)  # polling the database for the claim (a condition)
    finally:
        engine.dispose()
    raise AssertionError(f"worker {owner} never claimed a game")


if POSTGRES_URL and (HAVE_RAY or os.environ.get("CI") == "true"):

    def test_an_sprt_on_two_workers_stops_early_and_a_resume_plays_nothing(
            ray_local: Any, pg_url: str, tmp_path: Path) -> None:
        db = Database.connect(pg_url)
        spec = TournamentSpec(rules="grid5", bots=["greedy", "random"], pairs=30, seed=3,
                              move_time=5.0, sprt=SprtSpec.parse("elo0=0,elo1=400").to_dict())
        tid = create(db, spec)
        seen: list[str] = []
        workers: list[tuple[Any, int, str]] = []
        report = ClusterRun(db, pg_url, tid, parse_cluster("local:2"), lease_s=10,
                            child_log=tmp_path / "children.log", on_workers=workers.extend,
                            on_progress=lambda p: seen.append(
                                p.sprt.decision.value if p.sprt else "none")).run()
        # Two workers, each a process of its own (Ray actors, not this one).
        assert report.workers == 2 and report.cpus_per_game == 1 and report.lost == 0
        assert len({pid for _, pid, _ in workers} - {os.getpid()}) == 2
        state = sprt_state(db, tid)  # recomputed from every stored game
        assert state is not None and state.decision is Decision.H1
        assert report.progress.sprt == state and db.get_tournament(tid).finished
        assert stored_sprt_state(db, tid) == state.to_dict()
        # The supervisor polls the stored count every 0.5 s: how many undecided reports it
        # saw first depends on how fast the games are, so only the last one is checked.
        assert seen and seen[-1] == "H1" and set(seen) <= {"continue", "H1"}
        stored = _stored(pg_url, tid)
        assert set(stored.values()) == {1} and len(stored) < 60  # stopped early
        # Past the deciding game only the other worker's running game may finish: replay
        # the stored games in the order they finished to find the deciding one.
        replay = SprtMonitor(tid, SprtSpec.parse("elo0=0,elo1=400"), "greedy", "random", 30)
        rows = [row for row in db.results(tournament_id=tid) if row.schedule_id is not None]
        deciding = 0
        while not replay.decided:
            replay.add_results([rows[deciding]])
            deciding += 1
        assert len(rows) == len(stored) and len(rows) - deciding <= 2
        again = ClusterRun(db, pg_url, tid, parse_cluster("local:2"), lease_s=10,
                           child_log=tmp_path / "children.log").run()
        assert again.workers == 0 and again.progress.played_now == 0
        assert again.progress.sprt == state and _stored(pg_url, tid) == stored
        db.close()

    def test_cli_resume_on_the_cluster_plays_only_what_an_interrupted_run_left(
            ray_local: Any, pg_url: str, tmp_path: Path) -> None:
        """The state an interrupted cluster run leaves (games stored, an aborted game parked,
        a dead worker's lease still running, games never claimed): `yard tournament resume
        --cluster auto` (as in the README: the cluster this machine joined, here the tests'
        Ray instance named by RAY_ADDRESS) plays exactly the missing games, each once, and
        keeps the stored ones, on two workers (--concurrency 2) that share what is left:
        every scheduled game stored exactly once, every lease released."""
        db = Database.connect(pg_url)
        tid = _tournament(db, "random,greedy", pairs=3)
        entries = db.scheduled(tid)
        for entry in entries[:2]:
            db.record_forfeit(tid, entry, Outcome.forfeit(1, Termination.DISCONNECTED),
                              "before", game_id=f"before-{entry.index}")
        parked = db.claim(tid, "old-worker-1", lease_s=60)
        dead = db.claim(tid, "old-worker-2", lease_s=3)  # died; its lease runs out soon
        assert parked is not None and dead is not None and parked.schedule_id is not None
        db.release(parked.schedule_id, "old-worker-1", aborted=True)
        env = {**os.environ, "RAY_ADDRESS": ray_local.get_runtime_context().gcs_address}
        done = subprocess.run(
            [*YARD, "tournament", "resume", tid, "--cluster", "auto", "--concurrency", "2",
             "--lease-time", "10", "--json", "--db", pg_url, "--log",
             str(tmp_path / "children.log")],
            capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        assert payload["cluster"]["address"] == "auto"
        assert payload["cluster"]["lost_workers"] == 0
        assert payload["cluster"]["workers"] == 2 and payload["cluster"]["cpus_per_game"] == 1
        stored = _stored(pg_url, tid)
        assert sorted(stored) == list(range(6)) and set(stored.values()) == {1}
        assert {g.game_id for g in db.list_games(tournament_id=tid)} >= {"before-0",
                                                                         "before-1"}
        assert db.load_game("before-0").outcome.termination is Termination.DISCONNECTED
        assert db.pending(tid) == [] and db.held(tid) == 0
        with sa.create_engine(pg_url).connect() as conn:
            leases = conn.execute(sa.select(ScheduledGameRow.lease_owner).where(
                ScheduledGameRow.tournament_id == tid)).scalars().all()
        assert leases == [None] * 6  # every lease released
        db.close()

    def test_a_worker_killed_mid_game_loses_and_duplicates_nothing(
            ray_local: Any, pg_url: str, tmp_path: Path) -> None:
        db = Database.connect(pg_url)
        # The slow bot's moves wait while `gate` exists: the victim's game cannot finish
        # before the kill, and once the gate is gone the other games play at full speed.
        gate = tmp_path / "gate"
        gate.touch()
        tid = _tournament(db, "random,slow", pairs=2, engines=(
            f"name=slow class={SLOW_BOT}:Slow option.hold={gate} option.think=0",))
        workers: list[tuple[Any, int, str]] = []
        up = threading.Event()

        def on_workers(started: list[tuple[Any, int, str]]) -> None:
            workers.extend(started)
            up.set()

        result: dict[str, Any] = {}
        # A lease far longer than the test may take: the driver must hand the dead
        # worker's game back when Ray reports the worker dead, not at the lease's end.
        # One worker: its replacement can only play the killed game if the driver hands
        # the game back (the two-worker runs above cover sharing the schedule).
        run = ClusterRun(db, pg_url, tid, parse_cluster("local:2"), workers=1, lease_s=600,
                         child_log=tmp_path / "children.log", on_workers=on_workers)
        driver = threading.Thread(target=lambda: result.update(report=run.run()))
        driver.start()
        try:
            assert up.wait(120)
            _, victim_pid, victim = workers[0]
            claimed = _wait_for_claim(pg_url, tid, victim)
            os.kill(victim_pid, signal.SIGKILL)
        finally:
            gate.unlink()
        driver.join(240)
        assert not driver.is_alive(), "the killed worker's game never returned"
        report = result["report"]
        assert report.lost >= 1
        stored = _stored(pg_url, tid)
        assert sorted(stored) == list(range(4)) and set(stored.values()) == {1}
        assert claimed in stored
        db.close()


def test_a_worker_whose_game_was_stored_by_another_drops_its_copy_and_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A real worker (ClaimingRunner: its own yard serve and bot processes) claims game 0;
    while it plays, its lease passes to another worker (as when it expired) which stores
    the game first. The worker's own game is refused by the store (exactly once), and the
    worker logs that, drops its copy and plays the rest of the schedule."""
    url = f"sqlite:///{tmp_path / 'race.db'}"
    db = Database.connect(url)
    # The slow bot's moves wait while `gate` exists: worker-a's game cannot end before the
    # other worker has stored it; then the gate goes and both games play at full speed.
    gate = tmp_path / "gate"
    gate.touch()
    tid = _tournament(db, "random,slow", pairs=1, engines=(
        f"name=slow class={SLOW_BOT}:Slow option.hold={gate} option.think=0",))
    runner = ClaimingRunner(db, url, tid, owner="worker-a", lease_s=30,
                            child_log=tmp_path / "children.log")
    taken: dict[str, Any] = {}

    def other_worker() -> None:
        try:
            index = _wait_for_claim(url, tid, "worker-a")
            entry = next(e for e in db.scheduled(tid) if e.index == index)
            with sa.create_engine(url).begin() as conn:  # a's lease expired; b claimed it
                conn.execute(sa.update(ScheduledGameRow)
                             .where(ScheduledGameRow.id == entry.schedule_id)
                             .values(lease_owner="worker-b"))
            taken["record"] = db.record_forfeit(
                tid, entry, Outcome.forfeit(0, Termination.DISCONNECTED),
                "played by worker-b", game_id="by-worker-b")
            taken["index"] = index
        finally:
            gate.unlink()

    thief = threading.Thread(target=other_worker)
    thief.start()
    with caplog.at_level(logging.WARNING, logger="tournament.cluster"):
        progress = asyncio.run(runner.run())
    thief.join(60)
    assert taken["index"] == 0 and runner.duplicates == 1
    stored = _stored(url, tid)
    assert sorted(stored) == [0, 1] and set(stored.values()) == {1}
    assert db.load_game("by-worker-b").outcome.termination is Termination.DISCONNECTED
    assert db.pending(tid) == [] and progress.played_now == 1
    assert "game 0 was stored by another worker" in caplog.text
    assert "AlreadyPlayedError" in caplog.text
    db.close()


def test_leases_claim_each_entry_once_and_return_expired_or_parked_ones(
        tmp_path: Path) -> None:
    db = Database.connect(f"sqlite:///{tmp_path / 'lease.db'}")
    tid = create(db, TournamentSpec(rules="grid5", bots=["random", "greedy"], pairs=1))
    first = db.claim(tid, "a", lease_s=60)
    second = db.claim(tid, "b", lease_s=60)
    assert first is not None and second is not None and first.index != second.index
    assert db.claim(tid, "c", lease_s=60) is None  # both held
    assert db.held(tid) == 2 and db.claimable(tid) == 2
    assert db.renew(first.schedule_id or 0, "a", lease_s=-1)  # expire a's lease now
    assert not db.renew(first.schedule_id or 0, "c", lease_s=60)  # c never held it
    again = db.claim(tid, "c", lease_s=60)  # a "died": its game returns to c
    assert again is not None and again.index == first.index and db.held(tid) == 2
    assert db.release_owner(tid, "b") == 1 and db.held(tid) == 1  # b known dead: at once
    assert (b_again := db.claim(tid, "e", lease_s=60)) is not None
    assert b_again.index == second.index and db.release_owner(tid, "b") == 0
    assert not db.renew(first.schedule_id or 0, "a", lease_s=60)  # a lost it for good
    db.release(again.schedule_id or 0, "c", aborted=True)  # parked for this run
    assert db.claim(tid, "d", lease_s=60) is None and db.claimable(tid) == 1
    db.unpark(tid)  # the next run (resume) plays it again
    assert (last := db.claim(tid, "d", lease_s=60)) is not None
    assert last.index == first.index
    db.close()
