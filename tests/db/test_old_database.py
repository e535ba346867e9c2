"""A database written by an older yard (commit e5264b0, before the database stored
self-contained records) reads as that yard read it.

``tests/data/old_database/yard.sqlite`` was written by that yard (``make.sh`` there): a
round-robin and an SPRT tournament on grid5 (the SPRT stopped early, entries left), a
classic game, a game whose bot reported its search effort, a tournament interrupted before
its first game, a forfeit, an aborted game and a record in the even older format 1 (turns
and transcripts inline). ``expected.json`` holds what that yard printed for each read
command; today's yard must print the same (parsed JSON compared, floats to 1e-9 relative:
the ratings' last bits follow the CPU's vector path) on a copy of the file;
``yard export --what records`` now adds a tournament line per tournament after the game
records, which that yard did not write.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from db.build import record_from_moves
from db.errors import DatabaseError
from db.migrations import MIGRATIONS, schema_version
from db.portable import RECORD_FORMAT, TOURNAMENT_FORMAT
from db.store import Database
from game import new_game
from yard.cli import cli

DATA = Path(__file__).parents[1] / "data" / "old_database"
EXPECTED: list[dict[str, Any]] = json.loads((DATA / "expected.json").read_text())


def run(db: Path | str, args: list[str]) -> str:
    """``yard ARGS --db ...`` on the SQLite file ``db`` (or the URL ``db``): its output."""
    url = db if isinstance(db, str) else f"sqlite:///{db}"
    result = CliRunner().invoke(cli, [*args, "--db", url])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def parse(kind: str, text: str) -> Any:
    """The output as compared: JSON, text lines, or the game records of JSON Lines (an
    export's tournament lines are checked by the round-trip test below)."""
    if kind == "json":
        return json.loads(text)
    if kind == "jsonl":
        return [data for line in text.splitlines() if line.strip()
                if (data := json.loads(line)).get("format") != TOURNAMENT_FORMAT]
    return text.splitlines()


def close_to(expected: Any) -> Any:
    """``expected`` with every float a ``pytest.approx`` (relative 1e-9), for ``==``: numpy's
    sums take a different order on a CPU with other vector units, so a rating's last digits
    may differ between machines while the computation is the same."""
    if isinstance(expected, float):
        return pytest.approx(expected, rel=1e-9, abs=1e-12)
    if isinstance(expected, dict):
        return {key: close_to(value) for key, value in expected.items()}
    if isinstance(expected, list):
        return [close_to(value) for value in expected]
    return expected


@pytest.fixture(scope="module")
def old_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the old database (reading it must not change the fixture)."""
    path = tmp_path_factory.mktemp("old") / "yard.db"
    shutil.copy(DATA / "yard.sqlite", path)
    return path


def stored_forms(path: Path) -> list[Any]:
    con = sqlite3.connect(path)
    try:
        return [json.loads(text).get("format") for (text,) in
                con.execute("SELECT record FROM game_records ORDER BY game_id")]
    finally:
        con.close()


def test_the_fixture_holds_only_old_forms() -> None:
    forms = stored_forms(DATA / "yard.sqlite")
    assert len(forms) == 18 and RECORD_FORMAT not in forms
    assert sorted(set(forms)) == [1, 2]


@pytest.mark.parametrize("entry", EXPECTED, ids=[" ".join(e["args"]) for e in EXPECTED])
def test_read_commands_print_what_the_old_yard_printed(old_db: Path,
                                                       entry: dict[str, Any]) -> None:
    assert parse(entry["kind"], run(old_db, entry["args"])) == close_to(entry["output"])


def test_reading_needs_no_write_access(tmp_path: Path) -> None:
    """Old rows are converted as they are read: a read-only open reads every game."""
    path = tmp_path / "yard.db"
    shutil.copy(DATA / "yard.sqlite", path)
    before = path.read_bytes()
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    for args in (["export", "--what", "records"], ["games", "--json"]):
        (expected,) = [e["output"] for e in EXPECTED if e["args"] == args]
        assert parse("json" if args[0] == "games" else "jsonl", run(read_only, args)) == \
            expected
    assert path.read_bytes() == before


def test_new_games_are_stored_as_records_and_read_back_the_same(old_db: Path,
                                                                tmp_path: Path) -> None:
    """The old games, imported into a new database, are stored in the portable form and
    export, list and replay as before; a new game in the old database sits beside the
    old rows."""
    (records,) = [e["output"] for e in EXPECTED if e["args"] == ["export", "--what", "records"]]
    source = tmp_path / "records.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    new = tmp_path / "new.db"
    assert json.loads(run(new, ["import", str(source), "--json"])) == \
        {"imported": len(records), "skipped": 0, "tournaments": 0}  # an older export
    assert set(stored_forms(new)) == {RECORD_FORMAT}
    assert parse("jsonl", run(new, ["export", "--what", "records"])) == records
    for entry in EXPECTED:  # (the text shows times, which records round to 0.1 ms)
        if entry["args"][0] == "replay" and "--json" in entry["args"]:
            assert parse(entry["kind"], run(new, entry["args"])) == close_to(entry["output"])
    (listed,) = [e["output"] for e in EXPECTED if e["args"] == ["games", "--json"]]
    assert json.loads(run(new, ["games", "--json"])) == listed

    mixed = tmp_path / "mixed.db"
    shutil.copy(DATA / "yard.sqlite", mixed)
    with Database.connect(f"sqlite:///{new}") as store:
        game = store.load_game("old-format-1")
    game.game_id = "new-beside-old"
    with Database.connect(f"sqlite:///{mixed}") as store:
        assert store.save_game(game)
        assert store.load_game("new-beside-old").turns == game.turns
        assert store.load_game("old-format-1").turns == game.turns
    assert sorted(set(stored_forms(mixed)), key=str) == [1, 2, RECORD_FORMAT]


def test_an_export_carries_every_schedule_and_sprt_state_into_an_import(
        old_db: Path, tmp_path: Path) -> None:
    """An import of a whole export shows what the source showed: the SPRT that stopped
    early keeps its unplayed entries and its recorded decision, the tournament interrupted
    before its first game is there with its whole schedule (yard import used to lose
    both: the SPRT read 7/7 instead of 7/24, with ``recorded`` null)."""
    exported = tmp_path / "all.jsonl"
    run(old_db, ["export", "--what", "records", "--out", str(exported)])
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    heads = [line for line in lines if line["format"] == TOURNAMENT_FORMAT]
    listing = ["tournament", "list", "--json"]
    (listed,) = [e["output"] for e in EXPECTED if e["args"] == listing]
    (sprt_args,) = [e["args"] for e in EXPECTED if e["args"][0] == "sprt"]
    (tested,) = [e["output"] for e in EXPECTED if e["args"][0] == "sprt"]
    assert len(heads) == len(listed) == 4
    assert [line["format"] for line in lines[-4:]] == [TOURNAMENT_FORMAT] * 4  # at the end
    sprt_head = next(h for h in heads if h["id"] == tested["tournament_id"])
    assert len(sprt_head["schedule"]) == 24 and sprt_head["state"]["finished"] is True

    new = tmp_path / "new.db"
    assert json.loads(run(new, ["import", str(exported), "--json"])) == \
        {"imported": len(lines) - 4, "skipped": 0, "tournaments": 4}
    assert json.loads(run(new, listing)) == listed  # scheduled/played as the old yard had
    assert json.loads(run(new, sprt_args)) == tested  # the same test, the same `recorded`
    assert tested["recorded"] is not None
    assert run(new, ["export", "--what", "records"]) == \
        run(old_db, ["export", "--what", "records"])  # and it exports the same file again
    # Importing the file again changes nothing.
    assert json.loads(run(new, ["import", str(exported), "--json"])) == \
        {"imported": 0, "skipped": len(lines) - 4, "tournaments": 4}
    assert json.loads(run(new, listing)) == listed


def test_a_read_only_file_with_an_older_schema_is_read_without_being_changed(
        tmp_path: Path) -> None:
    """A file one migration behind this yard, opened read-only (as without write
    permission; a URL says it since root may write anyway): read commands read it (through
    a migrated private copy), writes are refused, the file stays as it was."""
    path = tmp_path / "older.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:  # as the yard before the last migration left it
        schema_version.create(conn)
        for number, description, apply in MIGRATIONS[:-1]:
            apply(conn)
            conn.execute(schema_version.insert().values(
                version=number, description=description, applied_at=datetime.now(UTC)))
    engine.dispose()
    before = path.read_bytes()
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    assert json.loads(run(read_only, ["games", "--json"])) == []
    with Database.connect(read_only, create=False) as store:
        assert store.results(None, None) == []
        start = new_game("grid5", seed=1)
        record = record_from_moves("g", start, [(0, start.legal_moves()[0])], {0: "a", 1: "b"})
        with pytest.raises(DatabaseError, match="readonly"):
            store.save_game(record)
    assert path.read_bytes() == before
