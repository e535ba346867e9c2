"""The storage API on real databases: SQLite files in tmp_path, and PostgreSQL too when
YARD_TEST_POSTGRES_URL is set (see tests/db/test_db_postgres.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import db.store.games
from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.errors import AlreadyPlayedError, DatabaseError, GameNotFoundError, TournamentError
from db.migrations import LATEST
from db.models import Base, GameRow
from db.store import Database
from db.store.tournaments import HasGamesError
from game import Outcome, Termination, Winner
from records import GameRecord, ScheduledGame, TurnRecord
from server.transcript import transcripts

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def played_record(game_id: str, seed: int = 5, rules: str = "grid5",
                  mrx: str = "random", detectives: str = "random",
                  minutes: int = 0) -> GameRecord:
    """A realistic record: a real game between random bots, with a fault and transcripts."""
    result = play_game(rules, make_bot("random", seed), [make_bot("random", seed + 1)], seed)
    start = T0 + timedelta(minutes=minutes)
    record = record_from_moves(game_id, result.start, result.moves, {0: mrx, 1: detectives},
                               result.outcome, seed=seed, started_at=start,
                               finished_at=start + timedelta(seconds=3))
    record.turns = [replace(t, time_used=0.01 * (t.index + 1)) for t in record.turns]
    record.turns[0] = replace(record.turns[0], fault="illegal_move", detail="taxi:999 refused")
    record.seats[0].bot_version = "1.2"
    record.transcripts = {"mrx": [{"type": "your_turn", "turn": 1}],
                          "d1": [{"type": "game_start", "game": game_id}]}
    return record


def format_1(record: GameRecord) -> dict[str, Any]:
    """``record`` in the JSON form stored before match logs (record format 1): turns and
    per-seat transcripts inline, effort keys only where reported."""
    from dataclasses import asdict

    return {"format": 1, "game_id": record.game_id, "ruleset": record.ruleset,
            "ruleset_definition": record.ruleset_definition, "seed": record.seed,
            "start_position": record.start_position,
            "seats": [asdict(s) for s in record.seats], "outcome": record.outcome.to_dict(),
            "mrx_path": record.mrx_path, "started_at": record.started_at.isoformat(),
            "finished_at": record.finished_at.isoformat(), "moves": record.moves,
            "tournament_id": record.tournament_id, "schedule_id": record.schedule_id,
            "turns": [{k: v for k, v in asdict(t).items()
                       if v is not None or k not in ("playouts", "nodes", "depth")}
                      for t in record.turns],
            "transcripts": record.transcripts}


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    store = Database.connect(database_url)
    yield store
    store.close()


def count(store: Database, table: str) -> int:
    with store._engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


# ------------------------------------------------------------------------- games


def test_round_trip_of_a_played_game(database: Database) -> None:
    record = played_record("g-round-trip")
    assert record.moves > 0 and len(record.turns) > 2
    assert database.save_game(record) is True
    loaded = database.load_game("g-round-trip")
    assert loaded == record
    assert loaded.turns[0].fault == "illegal_move"
    assert count(database, "turns") == len(record.turns)
    assert count(database, "game_seats") == len(record.seats)


def test_turn_rows_hold_every_refereed_turn(database: Database) -> None:
    record = played_record("g-turns")
    database.save_game(record)
    with database._engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT turn_index, seat, move, time_used, fault, detail "
                                    "FROM turns ORDER BY turn_index")).all()
    assert [(r[0], r[1], r[2]) for r in rows] == [(t.index, t.seat, t.move)
                                                  for t in record.turns]
    assert rows[0][4:] == ("illegal_move", "taxi:999 refused")
    assert rows[1][3] == pytest.approx(0.02)


def test_saving_twice_is_idempotent(database: Database) -> None:
    record = played_record("g-twice")
    assert database.save_game(record) is True
    assert database.save_game(record) is False
    assert count(database, "games") == 1
    assert count(database, "turns") == len(record.turns)


def test_bots_are_shared_between_games(database: Database) -> None:
    database.save_game(played_record("g-a", seed=1))
    database.save_game(played_record("g-b", seed=2, detectives="rush"))
    with database._engine.connect() as conn:
        bots = conn.execute(sa.text("SELECT name, version FROM bots ORDER BY name, version"))
        assert [tuple(row) for row in bots] == [("random", ""), ("random", "1.2"),
                                                ("rush", "")]


def test_a_failed_write_leaves_nothing(database: Database) -> None:
    record = played_record("g-broken")
    record.turns[-1] = replace(record.turns[-1], seat=None)  # type: ignore[arg-type]
    with pytest.raises(DatabaseError, match="g-broken"):
        database.save_game(record)
    for table in ("games", "game_seats", "turns", "game_records", "bots"):
        assert count(database, table) == 0, table
    with pytest.raises(GameNotFoundError):
        database.load_game("g-broken")


def test_a_crash_mid_write_leaves_nothing(database: Database,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(session: sa.orm.Session, record: GameRecord) -> None:
        assert session.get(GameRow, record.game_id) is not None  # really mid-write
        raise RuntimeError("power cut")

    monkeypatch.setattr(db.store.games, "_add_turns", crash)
    with pytest.raises(RuntimeError):
        database.save_game(played_record("g-crash"))
    monkeypatch.undo()
    assert count(database, "games") == count(database, "bots") == 0
    assert database.save_game(played_record("g-crash")) is True


def test_a_record_without_mister_x_is_refused(database: Database) -> None:
    record = played_record("g-no-mrx")
    record.seats = record.seats[1:]
    with pytest.raises(DatabaseError, match="Mister X"):
        database.save_game(record)


def test_load_unknown_game(database: Database) -> None:
    with pytest.raises(GameNotFoundError, match="no game 'nope'"):
        database.load_game("nope")


def test_list_games_filters_orders_and_limits(database: Database) -> None:
    database.save_game(played_record("g1", seed=1, minutes=1))
    database.save_game(played_record("g2", seed=2, minutes=2, rules="warwick"))
    database.save_game(played_record("g3", seed=3, minutes=3, detectives="rush"))
    assert [g.game_id for g in database.list_games()] == ["g3", "g2", "g1"]
    assert [g.game_id for g in database.list_games(ruleset="grid5")] == ["g3", "g1"]
    assert [g.game_id for g in database.list_games(limit=1)] == ["g3"]
    newest = database.list_games(limit=1)[0]
    record = database.load_game("g3")
    assert newest.detective_player == "rush" and newest.players["d1"] == "rush"
    assert newest.players["mrx"] == "random"
    assert (newest.winner, newest.termination) == (record.outcome.winner,
                                                   record.outcome.termination)
    assert newest.moves == record.moves
    assert newest.started_at == T0 + timedelta(minutes=3)
    assert newest.finished_at == T0 + timedelta(minutes=3, seconds=3)
    assert newest.to_dict()["started_at"].startswith("2024-05-01T12:03:00")


def test_results_outside_tournaments(database: Database) -> None:
    database.save_game(played_record("g1", seed=1, mrx="rush"))
    [row] = database.results()
    assert (row.game_id, row.mrx_player, row.detective_player) == ("g1", "rush", "random")
    assert row.pair_key is None and row.schedule_id is None and row.tournament_id is None
    assert database.results(ruleset="classic") == []


# ------------------------------------------------------------------- tournaments


def two_pairs() -> list[ScheduledGame]:
    return [ScheduledGame(0, 0, mrx="rush", detectives="random", seed=11),
            ScheduledGame(1, 0, mrx="random", detectives="rush", seed=11),
            ScheduledGame(2, 1, mrx="rush", detectives="random", seed=12),
            ScheduledGame(3, 1, mrx="random", detectives="rush", seed=12)]


def scheduled_record(game_id: str, entry: ScheduledGame) -> GameRecord:
    assert entry.seed is not None
    record = played_record(game_id, seed=entry.seed, mrx=entry.mrx,
                           detectives=entry.detectives)
    record.schedule_id = entry.schedule_id
    return record


def test_schedule_and_pending(database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5", "bots": ["random", "rush"],
                                      "format": "round-robin", "pairs": 2})
    stored = database.schedule(tid, two_pairs())
    assert [e.index for e in stored] == [0, 1, 2, 3]
    assert len({e.schedule_id for e in stored}) == 4
    assert database.pending(tid) == stored
    database.save_game(scheduled_record("t-g1", stored[1]))
    assert [e.index for e in database.pending(tid)] == [0, 2, 3]
    assert database.scheduled(tid) == stored
    info = database.get_tournament(tid)
    assert (info.scheduled, info.played, info.finished) == (4, 1, False)
    assert info.spec["pairs"] == 2
    assert database.load_game("t-g1").tournament_id == tid  # linked through the schedule
    assert database.list_games(tournament_id=tid)[0].game_id == "t-g1"


def test_a_scheduled_game_is_never_stored_twice(database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5"})
    entry = database.schedule(tid, two_pairs())[0]
    database.save_game(scheduled_record("first", entry))
    with pytest.raises(TournamentError, match="already played as game first"):
        database.save_game(scheduled_record("second", entry))
    assert [g.game_id for g in database.list_games()] == ["first"]


def test_save_games_stores_a_batch_in_one_transaction_or_none_of_it(
        database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5"})
    entry = database.schedule(tid, two_pairs())[0]
    batch = [played_record("b1"), scheduled_record("b2", entry), played_record("b3", seed=6)]
    assert database.save_games(batch) == [True, True, True]
    assert [database.load_game(r.game_id) for r in (batch[0], batch[2])] == \
        [batch[0], batch[2]]
    assert database.load_game("b2").tournament_id == tid
    # Stored ids are skipped; a second game for the played entry fails the whole batch.
    assert database.save_games([played_record("b1"), played_record("b4", seed=7)]) == \
        [False, True]
    with pytest.raises(TournamentError):
        database.save_games([played_record("b5", seed=8), scheduled_record("b6", entry)])
    assert sorted(g.game_id for g in database.list_games()) == ["b1", "b2", "b3", "b4"]
    assert count(database, "turns") == sum(len(database.load_game(g).turns)
                                           for g in ("b1", "b2", "b3", "b4"))


def test_save_games_within_one_batch_skips_a_repeated_id_and_refuses_a_replayed_entry(
        database: Database) -> None:
    """Checks among the records of one batch (none of them is in the database yet): a
    repeated game id is stored once, two games for one schedule entry fail the batch with
    AlreadyPlayedError and nothing of it is stored; an aborted game leaves its entry free."""
    tid = database.create_tournament({"rules": "grid5"})
    first, second = database.schedule(tid, two_pairs())[:2]
    with pytest.raises(AlreadyPlayedError, match="already played as game s1"):
        database.save_games([scheduled_record("s1", first), played_record("s0", seed=3),
                             scheduled_record("s2", first)])
    assert count(database, "games") == count(database, "turns") == 0
    aborted = scheduled_record("s3", second)
    aborted.outcome = Outcome(None, Termination.ABORTED)
    assert database.save_games([played_record("s0", seed=3), played_record("s0", seed=4),
                                aborted, scheduled_record("s4", second)]) == \
        [True, False, True, True]
    assert database.load_game("s0").seed == 3
    assert database.load_game("s3").tournament_id == tid
    assert database.load_game("s4").schedule_id == second.schedule_id
    assert count(database, "game_seats") == sum(
        len(database.load_game(g).seats) for g in ("s0", "s3", "s4"))
    assert count(database, "turns") == sum(
        len(database.load_game(g).turns) for g in ("s0", "s3", "s4"))


def test_a_worker_whose_lease_passed_on_cannot_store_a_second_copy(
        database_url: str) -> None:
    """Two claims of one entry (the first lease expires, a second worker claims it), both
    workers store their game at the same moment from their own connections: exactly one
    game is stored, and the other gets AlreadyPlayedError naming the stored game."""
    first, second = Database.connect(database_url), Database.connect(database_url)
    tid = first.create_tournament({"rules": "grid5"})
    first.schedule(tid, two_pairs())
    a = first.claim(tid, "worker-a", lease_s=60)
    assert a is not None and a.schedule_id is not None
    assert first.renew(a.schedule_id, "worker-a", lease_s=-1)  # a's node stalls: expired
    b = second.claim(tid, "worker-b", lease_s=60)
    assert b is not None and b.schedule_id == a.schedule_id
    assert not first.renew(a.schedule_id, "worker-a", lease_s=60)  # a lost it for good
    start = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def store(db: Database, game_id: str, entry: ScheduledGame) -> None:
        start.wait()
        try:
            outcomes[game_id] = db.save_game(scheduled_record(game_id, entry))
        except Exception as exc:  # the loser's outcome, checked below
            outcomes[game_id] = exc

    threads = [threading.Thread(target=store, args=(first, "by-a", a)),
               threading.Thread(target=store, args=(second, "by-b", b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winner = [g for g, outcome in outcomes.items() if outcome is True]
    losers = [outcome for outcome in outcomes.values() if outcome is not True]
    assert len(winner) == 1 and len(losers) == 1, outcomes
    assert isinstance(losers[0], AlreadyPlayedError)
    assert f"was already played as game {winner[0]}" in str(losers[0])
    assert [g.game_id for g in first.list_games()] == winner
    assert [e.index for e in first.pending(tid)] == [1, 2, 3]
    # The storer that lost retrying (a server's retry) is refused the same way.
    loser_id = "by-a" if winner == ["by-b"] else "by-b"
    with pytest.raises(AlreadyPlayedError):
        first.save_game(scheduled_record(loser_id, a))
    assert count(first, "games") == 1
    first.close()
    second.close()


def test_the_unique_schedule_id_is_the_last_guard_and_says_already_played(
        database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the in-transaction check miss the first game (a race it cannot see), the
    unique games.schedule_id refuses the second, reported as AlreadyPlayedError."""
    tid = database.create_tournament({"rules": "grid5"})
    entry = database.schedule(tid, two_pairs())[0]
    database.save_game(scheduled_record("first", entry))
    real = Database._refuse_played
    calls: list[str] = []

    def blind_once(session: sa.orm.Session, record: GameRecord) -> None:
        calls.append(record.game_id)
        if len(calls) > 1:  # the check after the failed insert sees the stored game
            real(session, record)

    monkeypatch.setattr(Database, "_refuse_played", staticmethod(blind_once))
    with pytest.raises(AlreadyPlayedError, match="already played as game first"):
        database.save_game(scheduled_record("second", entry))
    assert calls == ["second", "second"]
    assert [g.game_id for g in database.list_games()] == ["first"]
    assert count(database, "turns") == len(scheduled_record("first", entry).turns)


def test_results_carry_pairs_and_schedule_players(database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5"})
    entries = database.schedule(tid, [
        ScheduledGame(0, 0, "a", "b+c", 3, pair_key="b+c|a|0"),
        ScheduledGame(1, 0, "b+c", "a", 3, pair_key="b+c|a|0")])
    database.save_game(scheduled_record("p0", entries[0]))
    database.save_game(scheduled_record("p1", entries[1]))
    rows = {r.game_id: r for r in database.results(tournament_id=tid)}
    assert rows["p0"].pair_key == rows["p1"].pair_key == f"{tid}/b+c|a|0"
    assert (rows["p0"].mrx_player, rows["p0"].detective_player) == ("a", "b+c")
    assert (rows["p1"].mrx_player, rows["p1"].detective_player) == ("b+c", "a")
    assert rows["p1"].schedule_id == entries[1].schedule_id
    assert rows["p1"].tournament_id == tid


def test_default_pair_keys_group_role_swapped_games() -> None:
    a, b, c = two_pairs()[:3]
    assert a.pair_key == b.pair_key != c.pair_key


def test_forfeit_marks_an_entry_done(database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5"})
    entry = database.schedule(tid, two_pairs())[2]
    outcome = Outcome.forfeit(1, Termination.DISCONNECTED)
    record = database.record_forfeit(tid, entry, outcome, "bot random never connected")
    database.record_forfeit(tid, entry, outcome, "again")  # idempotent
    assert entry.index not in [e.index for e in database.pending(tid)]
    stored = database.load_game(record.game_id)
    assert stored.outcome == outcome and stored.turns == [] and stored.seed == 12
    [row] = database.results(tournament_id=tid)
    assert row.winner is Winner.MRX and row.termination is Termination.DISCONNECTED


def test_tournament_errors(database: Database) -> None:
    with pytest.raises(TournamentError, match="no tournament 'missing'"):
        database.pending("missing")
    with pytest.raises(TournamentError, match="no tournament"):
        database.get_tournament("missing")
    with pytest.raises(TournamentError, match="JSON"):
        database.create_tournament({"rules": object()})
    tid = database.create_tournament({"rules": "grid5"}, tournament_id="cup")
    with pytest.raises(TournamentError, match="already exists"):
        database.create_tournament({}, tournament_id="cup")
    with pytest.raises(TournamentError, match="index 0 twice"):
        database.schedule(tid, two_pairs()[:1] * 2)
    database.schedule(tid, two_pairs())
    with pytest.raises(TournamentError, match="already has a schedule"):
        database.schedule(tid, two_pairs())
    with pytest.raises(TournamentError, match="unknown schedule id"):
        database.save_game(replace(played_record("x"), schedule_id=10_000))
    assert [t.tournament_id for t in database.list_tournaments()] == ["cup"]


def test_tournament_state_is_merged_and_read_back(database: Database) -> None:
    tid = database.create_tournament({"rules": "grid5"}, tournament_id="sprt-cup")
    assert database.get_tournament(tid).state == {}
    assert not database.get_tournament(tid).finished
    database.update_tournament_state(tid, sprt={"llr": 1.5, "decision": "continue"})
    state = database.update_tournament_state(tid, finished=True)
    assert state == {"sprt": {"llr": 1.5, "decision": "continue"}, "finished": True}
    info = database.get_tournament(tid)
    assert info.state == state and info.finished  # finished early, nothing scheduled
    assert database.list_tournaments()[0].state == state
    with pytest.raises(TournamentError, match="no tournament"):
        database.update_tournament_state("nope", finished=True)
    with pytest.raises(TournamentError, match="not JSON-ready"):
        database.update_tournament_state(tid, llr=float("inf"))
    assert database.get_tournament(tid).state == state


def test_a_tournament_is_deleted_whole_and_only_when_nobody_plays_it(
        database: Database) -> None:
    """`yard tournament delete`: games, seats, turns, records and schedule in one
    transaction; refused with stored games unless asked, and while a live runner or
    cluster workers hold the tournament."""
    tid = database.create_tournament({"rules": "grid5"}, tournament_id="gone")
    entries = database.schedule(tid, two_pairs())
    database.save_game(scheduled_record("t-1", entries[0]))
    aborted = replace(played_record("t-aborted"), tournament_id=tid,
                      outcome=Outcome(None, Termination.ABORTED))
    database.save_game(aborted)  # a tournament game without its schedule entry
    kept = database.create_tournament({"rules": "grid5"}, tournament_id="kept")
    database.save_game(scheduled_record("k-1", database.schedule(kept, two_pairs())[0]))
    database.save_game(played_record("alone", seed=7))
    before = {table: count(database, table) for table in ("games", "game_seats", "turns",
                                                          "game_records", "scheduled_games")}

    with pytest.raises(HasGamesError, match="has 2 stored games") as refused:
        database.delete_tournament(tid)
    assert (refused.value.games, refused.value.scheduled) == (2, 4)
    database.hold_runner(tid, 30)  # this process plays it
    with pytest.raises(TournamentError, match=rf"being played \(a runner on .* \(process "
                                              rf"{os.getpid()}\)"):
        database.delete_tournament(tid, with_games=True)
    database.release_runner(tid)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    database.update_tournament_state(tid, runner={  # a runner killed without giving it up
        "host": socket.gethostname(), "pid": int(gone.stdout),
        "expires": (datetime.now(UTC) + timedelta(minutes=5)).isoformat()})
    assert database.playing(tid) is None
    claimed = database.claim(tid, "worker-1", 30)
    assert claimed is not None and claimed.schedule_id is not None
    with pytest.raises(TournamentError, match="cluster workers hold leases on 1 of its"):
        database.delete_tournament(tid, with_games=True)
    database.release(claimed.schedule_id, "worker-1")
    assert {table: count(database, table) for table in before} == before  # nothing yet

    assert database.delete_tournament(tid, with_games=True) == (2, 4)
    with pytest.raises(TournamentError, match="no tournament 'gone'"):
        database.get_tournament(tid)
    with pytest.raises(TournamentError, match="no tournament 'gone'"):
        database.delete_tournament(tid)
    assert sorted(g.game_id for g in database.list_games()) == ["alone", "k-1"]
    with database._engine.connect() as conn:
        for table in ("game_seats", "turns", "game_records"):
            orphans = conn.execute(sa.text(f"SELECT count(*) FROM {table} WHERE game_id "
                                           f"NOT IN ('alone', 'k-1')")).scalar_one()
            assert orphans == 0, table
    assert count(database, "scheduled_games") == 4 and database.pending(kept) == \
        database.scheduled(kept)[1:]
    empty = database.create_tournament({"rules": "grid5"})
    database.schedule(empty, two_pairs())
    assert database.delete_tournament(empty) == (0, 4)  # nothing played: no need to ask


# ------------------------------------------------------------ schema and engine


def test_schema_is_migrated_once_and_matches_the_models(database_url: str) -> None:
    Database.connect(database_url).close()
    store = Database.connect(database_url)
    with store._engine.connect() as conn:
        versions = conn.execute(sa.text("SELECT version FROM schema_version")).scalars().all()
        inspector = sa.inspect(conn)
        for table in Base.metadata.sorted_tables:
            columns = {c["name"] for c in inspector.get_columns(table.name)}
            assert columns == set(table.columns.keys()), table.name
    assert versions == list(range(1, LATEST + 1))
    store.close()


def test_a_version_1_database_gains_the_tournament_state(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from db import migrations

    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
        patch.setattr(migrations, "LATEST", 1)
        old = Database.connect(database_url)
        with old._writer.begin() as conn:
            assert "state" not in {c["name"] for c in sa.inspect(conn).get_columns(
                "tournaments")}
            conn.execute(sa.text("INSERT INTO tournaments (id, created_at, spec) "
                                 "VALUES ('old', :t, '{}')"), {"t": T0})
        old.close()
    store = Database.connect(database_url)
    assert store.get_tournament("old").state == {}
    store.update_tournament_state("old", finished=True)
    assert store.get_tournament("old").finished
    store.close()


def test_a_newer_schema_is_refused(database_url: str) -> None:
    store = Database.connect(database_url)
    with store._writer.begin() as conn:
        conn.execute(sa.text("INSERT INTO schema_version VALUES (:v, 'future', :t)"),
                     {"v": LATEST + 1, "t": T0})
    store.close()
    with pytest.raises(DatabaseError, match="newer than this yard"):
        Database.connect(database_url)


def test_sqlite_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    store = Database.connect(f"sqlite:///{tmp_path / 'w.db'}")
    with store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    store.close()


def test_in_memory_sqlite_works() -> None:
    with Database.connect("sqlite://") as store:
        store.save_game(played_record("mem"))
        assert store.load_game("mem").game_id == "mem"


def test_concurrent_writers_share_one_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    Database.connect(url).close()
    records = [played_record(f"c{i}", seed=i) for i in range(8)]
    errors: list[BaseException] = []

    def write(part: list[GameRecord]) -> None:
        try:
            with Database.connect(url) as store:
                for record in part:
                    store.save_game(record)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(records[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Database.connect(url) as store:
        assert sorted(g.game_id for g in store.list_games()) == [f"c{i}" for i in range(8)]


@pytest.mark.parametrize("url, message", [
    ("not a url", "bad database URL"),
    ("nosuchdb://x/y", "cannot open database"),
    ("sqlite:////nonexistent-dir/sub/yard.db", "cannot open"),
])
def test_bad_urls_raise_database_error(url: str, message: str) -> None:
    with pytest.raises(DatabaseError, match=message):
        Database.connect(url)


def test_turn_record_defaults() -> None:
    turn = TurnRecord(0, 0, "taxi:1", 0.5)
    assert turn.fault is None and turn.detail is None


def test_layering_of_db_imports() -> None:
    code = ("import sys, db, records; light = 'sqlalchemy' not in sys.modules; "
            "import db.store, db.exchange; "
            "print(light, sorted(m for m in ('bots', 'server', 'torch', 'websockets') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.split() == ["True", "[]"]


def test_aborted_game_keeps_its_schedule_entry_pending(tmp_path: Path) -> None:
    """A game aborted by a shutdown was not played: a resume must play it again."""
    from game import Outcome, Termination
    from tournament.schedule import make_schedule

    db = Database.connect(f"sqlite:///{tmp_path / 'a.db'}")
    tid = db.create_tournament({"rules": "grid5"})
    entries = db.schedule(tid, make_schedule(["random", "rush"], pairs=1, seed=3))
    forfeit = db.record_forfeit(tid, entries[0], Outcome(None, Termination.ABORTED),
                                "server stopped")
    assert [e.index for e in db.pending(tid)] == [0, 1]
    assert db.load_game(forfeit.game_id).tournament_id == tid
    played = replace(forfeit, game_id="replayed", outcome=Outcome.forfeit(
        0, Termination.DISCONNECTED))
    assert db.save_game(played)
    assert [e.index for e in db.pending(tid)] == [1]


# ------------------------------------------------------------ compute and effort


def effort_record(game_id: str, seed: int, instance: str | None) -> GameRecord:
    """A played record whose Mister X reported playouts and detectives nodes and depth."""
    record = played_record(game_id, seed=seed, mrx="mcts", detectives="alphabeta")
    record.seats = [replace(s, instance=instance) for s in record.seats]
    record.turns = [replace(t, playouts=100 * (t.index + 1)) if t.seat == 0 else
                    replace(t, nodes=10, depth=2) for t in record.turns]
    return record


def test_effort_and_instances_are_stored_and_summed_per_process(database: Database) -> None:
    one, two = effort_record("g-e1", 1, "1"), effort_record("g-e2", 2, "2")
    # The server's random move on timeout is not the bot's: left out of its compute.
    two.turns[-1] = replace(two.turns[-1], fault="random_move_on_timeout", playouts=None,
                            nodes=None, depth=None)
    for record in (one, two):
        assert database.save_game(record)
        assert database.load_game(record.game_id) == record
    rows = {(r.bot, r.instance): r for r in database.compute()}
    assert sorted(rows) == [("alphabeta", "1"), ("alphabeta", "2"), ("mcts", "1"),
                            ("mcts", "2")]
    for record in (one, two):
        instance = record.seats[0].instance
        counted = [t for t in record.turns if t.move is not None
                   and t.fault != "random_move_on_timeout"]
        for bot, seats in (("mcts", {0}), ("alphabeta", set(range(1, 10)))):
            row = rows[bot, instance]
            mine = [t for t in counted if t.seat in seats]
            assert row.moves == len(mine)
            assert row.time_s == pytest.approx(sum(t.time_used for t in mine))
            assert row.playouts == sum(t.playouts or 0 for t in mine)
            assert row.playout_moves == sum(t.playouts is not None for t in mine)
            assert (row.nodes, row.node_moves) == (sum(t.nodes or 0 for t in mine),
                                                   sum(t.nodes is not None for t in mine))
            assert row.depth == 2 * row.depth_moves
    assert database.compute(tournament_id="no-such") == []


def test_a_version_1_database_opens_migrated_with_its_games(tmp_path: Path) -> None:
    """A database written before effort and instances were stored (schema version 1)."""
    from db import migrations

    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = played_record("g-old")
    engine = sa.create_engine(url)
    v1 = migrations._v1_tables().tables
    with engine.begin() as conn:
        migrations._version_meta.create_all(conn)
        migrations._v1(conn)
        conn.execute(migrations.schema_version.insert().values(
            version=1, description="initial", applied_at=T0))
        conn.execute(v1["bots"].insert(), [{"id": 1, "name": "random", "version": "1.2"},
                                           {"id": 2, "name": "random", "version": ""}])
        conn.execute(v1["games"].insert().values(
            id=old.game_id, ruleset=old.ruleset, seed=old.seed,
            start_position=old.start_position, winner=old.outcome.winner.value
            if old.outcome.winner else None, termination=old.outcome.termination.value,
            fault_seat=None, moves=old.moves, started_at=old.started_at,
            finished_at=old.finished_at, mrx_player="random", detective_player="random",
            tournament_id=None, schedule_id=None))
        conn.execute(v1["game_seats"].insert(), [
            {"game_id": old.game_id, "seat": s.seat, "bot_id": 1 if s.seat == 0 else 2}
            for s in old.seats])
        conn.execute(v1["turns"].insert(), [
            {"game_id": old.game_id, "turn_index": t.index, "seat": t.seat, "move": t.move,
             "time_used": t.time_used, "fault": t.fault, "detail": t.detail}
            for t in old.turns])
        data = format_1(old)
        assert all("playouts" not in t for t in data["turns"])  # the version 1 form
        conn.execute(v1["game_records"].insert().values(game_id=old.game_id, record=data))
    engine.dispose()

    store = Database.connect(url)
    with store._engine.connect() as conn:
        assert conn.execute(sa.text("SELECT max(version) FROM schema_version")).scalar() == \
            LATEST
    assert store.load_game("g-old") == old
    assert transcripts(store.load_game("g-old")) == old.transcripts  # stored ones
    assert [g.game_id for g in store.list_games()] == ["g-old"]
    (row,) = [r for r in store.compute() if r.bot == "random" and r.moves > 1]
    assert row.instance is None and row.playout_moves == row.node_moves == 0
    new = effort_record("g-new", 3, "1")
    assert store.save_game(new) and store.load_game("g-new") == new
    store.close()


def test_json_columns_write_what_orjson_cannot_too() -> None:
    """The JSON column serializer: orjson's text, the standard library's past 64 bits."""
    import json

    from db.engine import json_text

    plain = {"a": [1, 2.5, None, "\u00e9"], "b": {"c": True}}
    assert json.loads(json_text(plain)) == plain
    big = {"seed": 2**70, "n": [-(2**80)]}
    assert json.loads(json_text(big)) == big


def _table_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every game table's rows as SQLite returns them (text, integers and floats differ)."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        return {table: con.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("bots", "games", "game_seats", "turns", "game_records")}
    finally:
        con.close()


def test_sqlite_inserts_store_what_core_inserts_store(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Games, seats and records go to SQLite as plain tuples made by the columns' bind
    processors: every row equals what SQLAlchemy's Core insert (the generic path) stores,
    dates, JSON, NULLs, big seeds and non-ASCII text included."""
    def records() -> list[GameRecord]:
        odd = played_record("g-odd", seed=9, mrx="m\u00e9tro \U0001f600", minutes=3)
        odd.seed = 2**70  # past BIGINT: NULL in the column, exact in the JSON record
        odd.started_at = datetime(2024, 5, 1, 14, 0, 0, 1, tzinfo=timezone(timedelta(hours=2)))
        odd.finished_at = datetime(2024, 5, 1, 12, 0, 5)  # naive: taken as UTC
        odd.tournament_id = None
        return [played_record("g-a", seed=1), odd, played_record("g-b", seed=2, minutes=1)]

    fast = Database.connect(f"sqlite:///{tmp_path / 'fast.db'}")
    assert fast.save_game(records()[0]) and fast.save_games(records()[1:]) == [True, True]
    fast.close()

    def core_insert(self: Database, session: Any, table: sa.Table,
                    rows: list[dict[str, Any]]) -> None:
        if rows:
            session.execute(sa.insert(table), rows)

    monkeypatch.setattr(Database, "_insert", core_insert)
    core = Database.connect(f"sqlite:///{tmp_path / 'core.db'}")
    assert core.save_game(records()[0]) and core.save_games(records()[1:]) == [True, True]
    core.close()
    fast_rows = _table_rows(tmp_path / "fast.db")
    assert fast_rows == _table_rows(tmp_path / "core.db")
    assert len(fast_rows["games"]) == 3 and len(fast_rows["game_records"]) == 3


def test_cached_bot_ids_come_from_committed_writes_only(tmp_path: Path) -> None:
    """A bot created in a write that failed is not remembered (its id was rolled back);
    a cached id that went stale (the row deleted behind the store's back) fails one
    write, which drops the cache, and the next write stores the game."""
    store = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    tid = store.create_tournament({"rules": "grid5"})
    entry = store.schedule(tid, two_pairs())[0]
    fresh = played_record("f0", seed=3, mrx="fresh")
    with pytest.raises(AlreadyPlayedError):
        store.save_games([scheduled_record("s1", entry), fresh, scheduled_record("s2", entry)])
    assert count(store, "bots") == 0
    assert store.save_game(played_record("f1", seed=4, mrx="fresh"))
    assert store.save_games([played_record("f2", seed=5, mrx="fresh")]) == [True]
    with store._engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM games WHERE id IN ('f1', 'f2')"))
        conn.execute(sa.text("DELETE FROM bots WHERE name = 'fresh'"))
    stale = played_record("f3", seed=6, mrx="fresh")
    with pytest.raises(DatabaseError, match="FOREIGN KEY"):
        store.save_game(stale)
    assert store.save_game(stale) and store.load_game("f3") == stale
    store.close()
