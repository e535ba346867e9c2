"""PostgreSQL: the store tests in tests/db/test_db_store.py also run against the server named
by YARD_TEST_POSTGRES_URL (``.ci/postgres start`` makes a throwaway one); these add the
PostgreSQL-only checks. Under CI (CI=true) a missing URL is a failure, so CI can never skip
PostgreSQL silently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
import sqlalchemy as sa

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.errors import DatabaseError
from db.migrations import LATEST
from db.store import Database

POSTGRES_URL = os.environ.get("YARD_TEST_POSTGRES_URL")


def test_ci_provides_a_postgres_server() -> None:
    if os.environ.get("CI") == "true":
        assert POSTGRES_URL, ("CI=true but YARD_TEST_POSTGRES_URL is not set: .ci/run must "
                              "start PostgreSQL (.ci/postgres start) before pytest")


def test_an_unreachable_server_is_one_clear_error_without_the_password() -> None:
    with pytest.raises(DatabaseError) as info:
        Database.connect("postgresql+psycopg://yard:s3cret@127.0.0.1:9/yard?connect_timeout=2")
    message = str(info.value)
    assert "cannot open" in message and "127.0.0.1" in message
    assert "s3cret" not in message and "\n" not in message


if POSTGRES_URL:  # without a server only the two tests above exist (nothing is skipped)

    def test_concurrent_starters_migrate_once(pg_url: str) -> None:
        errors: list[BaseException] = []

        def open_close() -> None:
            try:
                Database.connect(pg_url).close()
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=open_close) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        engine = sa.create_engine(pg_url)
        with engine.connect() as conn:
            versions = conn.execute(sa.text("SELECT version FROM schema_version")).scalars()
            assert list(versions) == list(range(1, LATEST + 1))
        engine.dispose()

    def test_cli_reads_games_from_postgres(pg_url: str) -> None:
        result = play_game("grid5", make_bot("random", 1), [make_bot("rush", 1)], seed=1)
        with Database.connect(pg_url) as store:
            store.save_game(record_from_moves("pg-1", result.start, result.moves,
                                              {0: "random", 1: "rush"}, result.outcome))
        yard = str(os.path.join(os.path.dirname(sys.executable), "yard"))
        out = subprocess.run([yard, "games", "--db", pg_url, "--json"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert [g["game_id"] for g in json.loads(out.stdout)] == ["pg-1"]
        out = subprocess.run([yard, "replay", "pg-1", "--db", pg_url, "--as", "detectives"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "start: mrx=? " in out.stdout
