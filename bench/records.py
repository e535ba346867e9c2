"""Self-contained game records: export N stored games to JSON Lines, import them into a
fresh database (checking each by replay), import again (all skipped).

    .venv/bin/python bench/records.py [--games 300] [--rules classic]

Uses new SQLite files in a temporary folder and the same code as ``yard export --what
records`` / ``yard import``. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

# The checkout this script is in, not bench/ (whose records.py, server.py and tournament.py
# would shadow those packages): a copy of the repository benchmarks its own code, and
# scripts import each other as ``bench.NAME``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bench.db_store import records  # noqa: E402
from db.exchange import record_lines  # noqa: E402
from db.portable import PortableGame, read_lines  # noqa: E402
from db.store import Database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--rules", default="classic")
    args = parser.parse_args()
    todo = records(args.rules, args.games)
    with tempfile.TemporaryDirectory() as tmp:
        with Database.connect(f"sqlite:///{Path(tmp) / 'a.db'}") as source:
            for record in todo:
                source.save_game(record)
            started = time.perf_counter()
            lines = list(record_lines(source))
            exported = time.perf_counter()
        games = [g for _, g in read_lines(lines) if isinstance(g, PortableGame)]
        checked = time.perf_counter()
        with Database.connect(f"sqlite:///{Path(tmp) / 'b.db'}") as target:
            first = target.import_games(games)
            stored = time.perf_counter()
            second = target.import_games(games)
            again = time.perf_counter()
    n = len(todo)
    size = sum(len(line) + 1 for line in lines)
    print(json.dumps({
        "rules": args.rules, "games": n, "bytes_per_game": round(size / n),
        "turns_per_game": round(sum(len(r.turns) for r in todo) / n, 1),
        "export_games_per_s": round(n / (exported - started), 1),
        "read_and_check_games_per_s": round(n / (checked - exported), 1),
        "store_games_per_s": round(n / (stored - checked), 1),
        "imported": first.count(True), "skipped_on_reimport": second.count(False),
        "reimport_s": round(again - stored, 3)}))


if __name__ == "__main__":
    main()
