"""Storage throughput: save N played games to a fresh database, then list, load and
replay them.

    .venv/bin/python bench/db_store.py [--games 200] [--rules classic] [--db URL]

Without --db it uses a new SQLite file in a temporary folder. Prints one JSON object.
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

from bots.arena import play_game  # noqa: E402
from bots.registry import make_bot  # noqa: E402
from db.build import record_from_moves  # noqa: E402
from db.replay import Perspective, replay_lines  # noqa: E402
from db.store import Database  # noqa: E402
from records import GameRecord  # noqa: E402


def records(rules: str, games: int) -> list[GameRecord]:
    out = []
    for seed in range(games):
        result = play_game(rules, make_bot("random", seed), [make_bot("random", seed)], seed)
        out.append(record_from_moves(f"bench-{seed}", result.start, result.moves,
                                     {0: "random", 1: "random"}, result.outcome, seed=seed))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rules", default="classic")
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    todo = records(args.rules, args.games)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Database.connect(url) as store:
            started = time.perf_counter()
            for record in todo:
                store.save_game(record)
            saved = time.perf_counter()
            listed = store.list_games()
            listed_at = time.perf_counter()
            for record in todo:
                replay_lines(store.load_game(record.game_id), Perspective.DETECTIVES)
            done = time.perf_counter()
    n = len(todo)
    print(json.dumps({
        "db": url.split(":")[0], "rules": args.rules, "games": n,
        "turns_per_game": sum(len(r.turns) for r in todo) / n,
        "save_games_per_s": round(n / (saved - started), 1),
        "list_ms": round(1000 * (listed_at - saved), 1), "listed": len(listed),
        "load_and_replay_games_per_s": round(n / (done - listed_at), 1)}))


if __name__ == "__main__":
    main()
