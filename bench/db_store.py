"""Storage throughput: save N played games to a fresh database, then list, load and
replay them.

    .venv/bin/python bench/db_store.py [--games 200] [--rules classic] [--db URL]

Without --db it uses a new SQLite file in a temporary folder. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.replay import Perspective, replay_lines
from db.store import Database
from records import GameRecord


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
