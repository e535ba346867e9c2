"""``yard accounts add|list|revoke|rotate`` through the ``yard`` entry point (in this process,
and once as a real process), on a SQLite file and, when YARD_TEST_POSTGRES_URL is set, on
PostgreSQL (see tests/db/test_db_postgres.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from db.store import Database
from db.store.accounts import token_matches
from tests.yard_cli import yard_here

YARD = str(Path(sys.executable).with_name("yard"))


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return yard_here(*args, env=env)


def test_accounts_add_list_revoke_rotate(database_url: str) -> None:
    db = ("--db", database_url)
    added = yard("accounts", "add", "alice", *db)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert added.stdout == token + "\n" and len(token) >= 40  # the token alone on stdout
    assert "shown only now" in added.stderr and token not in added.stderr
    assert yard("accounts", "add", "bob", *db).returncode == 0

    # Only a salted hash is stored.
    engine = sa.create_engine(database_url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT name, token_hash FROM accounts ORDER BY name")
                            ).all()
    engine.dispose()
    assert [r.name for r in rows] == ["alice", "bob"]
    assert rows[0].token_hash.startswith("scrypt$") and token not in rows[0].token_hash
    assert token_matches(token, rows[0].token_hash)
    assert rows[0].token_hash.split("$")[4] != rows[1].token_hash.split("$")[4]  # salts

    revoked = yard("accounts", "revoke", "bob", *db)
    assert revoked.returncode == 0 and "revoked" in revoked.stderr
    listed = yard("accounts", "list", *db, "--json")
    assert listed.returncode == 0, listed.stderr
    rows_json = json.loads(listed.stdout)
    assert [(r["name"], r["status"], r["source"]) for r in rows_json] == [
        ("alice", "active", "cli"), ("bob", "revoked", "cli")]
    assert all(set(r) == {"name", "status", "source", "created_at", "last_used",
                          "revoked_at"} for r in rows_json)
    assert token not in listed.stdout and "scrypt" not in listed.stdout
    table = yard("accounts", "list", *db)
    assert table.stdout.splitlines()[0].split() == ["name", "status", "source", "created",
                                                    "last", "used"]
    assert "bob" in table.stdout and "revoked" in table.stdout and "never" in table.stdout

    rotated = yard("accounts", "rotate", "bob", *db)
    new = rotated.stdout.strip()
    assert rotated.returncode == 0 and new and new != token
    with Database.connect(database_url) as store:
        bob = store.account("bob")
        assert bob is not None and bob.active and token_matches(new, bob.token_hash)
        alice = store.account("alice")
        assert alice is not None and not token_matches(new, alice.token_hash)


def test_account_mistakes_are_one_line_errors(database_url: str) -> None:
    db = ("--db", database_url)
    assert yard("accounts", "add", "alice", *db).returncode == 0
    for args, text in ((("add", "alice"), "account 'alice' exists"),
                       (("add", "x" * 65), "longer than 64 characters"),
                       (("add", "tab\there"), "a control character"),
                       (("add", "аlice"), "looks like 'alice'"),  # Cyrillic а
                       (("add", "Alice"), "looks like 'alice'"),
                       (("add", "human:bob"), "starts with 'human:'"),
                       (("add", "b o b"), "holds a space"),
                       (("revoke", "ghost"), "no account 'ghost'"),
                       (("rotate", "ghost"), "no account 'ghost'")):
        done = yard("accounts", *args, *db)
        assert done.returncode == 2 and done.stdout == "", (args, done)
        assert done.stderr.startswith("error: ") and text in done.stderr
        assert done.stderr.count("\n") == 1


def test_yard_accounts_as_a_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'yard.db'}"
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    done = subprocess.run([YARD, "accounts", "add", "carol", "--db", url], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([YARD, "accounts", "list", "--json", "--db", url],
                            capture_output=True, text=True, env=env, timeout=60)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["carol"]
    assert done.stdout.strip() not in listed.stdout
