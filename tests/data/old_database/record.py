"""Writes expected.json: what each read command of the yard that runs this printed for the
database yard.sqlite (run by make.sh with the yard of commit e5264b0).

Usage: record.py YARD_EXECUTABLE FOLDER. Each entry: ``args`` (without ``--db``),
``kind`` (``json``: one JSON document; ``jsonl``: one per line; ``text``: lines) and the
parsed ``output``. tests/db/test_old_database.py runs the same commands with today's yard.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def parse(kind: str, text: str) -> Any:
    if kind == "json":
        return json.loads(text)
    if kind == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return text.splitlines()


def commands(db: Path) -> list[tuple[list[str], str]]:
    con = sqlite3.connect(db)
    try:
        def first(where: str) -> str:
            row = con.execute(f"SELECT id FROM games WHERE {where} ORDER BY started_at, id "
                              "LIMIT 1").fetchone()
            return str(row[0])

        tournament_game = first("ruleset = 'grid5' AND tournament_id IS NOT NULL "
                                "AND moves > 5")
        classic = first("ruleset = 'classic'")
        effort = first("id IN (SELECT game_id FROM turns WHERE nodes IS NOT NULL)")
        forfeit = first("termination = 'disconnected'")
        sprt = con.execute("SELECT id FROM tournaments WHERE state IS NOT NULL").fetchone()[0]
    finally:
        con.close()
    out: list[tuple[list[str], str]] = [
        (["games", "--json"], "json"),
        (["games", "--json", "--rules", "classic"], "json"),
        (["tournament", "list", "--json"], "json"),
        (["sprt", "--tournament", sprt, "--json"], "json"),
        (["leaderboard", "--json", "--seed", "3", "--samples", "40"], "json"),
        (["leaderboard", "--json", "--seed", "3", "--samples", "40", "--tournament", sprt],
         "json"),
        (["matrix", "--json"], "json"),
        (["export", "--what", "games", "--format", "json"], "json"),
        (["export", "--what", "turns", "--format", "json"], "json"),
        (["export", "--what", "ratings", "--format", "json", "--seed", "3", "--samples", "40"],
         "json"),
        (["export", "--what", "records"], "jsonl"),
    ]
    for game in (tournament_game, classic, effort, "old-format-1", forfeit):
        out.append((["replay", game, "--json"], "jsonl"))
        out.append((["replay", game], "text"))
    out.append((["replay", classic, "--as", "detectives"], "text"))
    for game, seat in ((tournament_game, "public"), (effort, "d2"), ("old-format-1", "mrx"),
                       (forfeit, "detail")):
        out.append((["replay", game, "--messages", seat], "jsonl"))
    return out


def main() -> None:
    yard, folder = sys.argv[1], Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "yard.db"
        shutil.copy(folder / "yard.sqlite", db)
        expected = []
        for args, kind in commands(db):
            done = subprocess.run([yard, *args, "--db", f"sqlite:///{db}"], check=True,
                                  capture_output=True, text=True)
            expected.append({"args": args, "kind": kind, "output": parse(kind, done.stdout)})
    lines = ",\n".join(json.dumps(entry, separators=(",", ":")) for entry in expected)
    (folder / "expected.json").write_text(f"[\n{lines}\n]\n")


if __name__ == "__main__":
    main()
