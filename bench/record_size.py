"""Stored bytes per game: a real server (in this process, SQLite in a temporary folder)
referees random bots over loopback; then the database is measured and, where the yard has
it, every game's messages are rebuilt from its record.

    .venv/bin/python bench/record_size.py [--games 100] [--concurrent 20] [--rules classic]

Prints one JSON object: ``record_bytes_per_game`` (the ``game_records`` row's JSON, what
the issue's 8 kB target is about), ``stored_bytes_per_game`` (every column of every table,
as ``bench/server_cpu.py`` counts it), ``db_file_bytes_per_game``, turns per game, and
``regenerate_games_per_s`` (``server.transcript.regenerate``; ``null`` on a yard without
it). To measure an older commit the same way: ``git archive COMMIT | tar -x -C /tmp/base``
and run this file with ``PYTHONPATH=/tmp/base``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

# This folder holds a server.py: keep it off the import path (the `server` package).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from bots.client import BotClient  # noqa: E402
from bots.registry import make_bot  # noqa: E402
from db.store import Database  # noqa: E402
from host.writer import GameWriter  # noqa: E402
from protocol import StartMatch  # noqa: E402
from protocol.tokens import new_token  # noqa: E402
from server.admin import AdminClient  # noqa: E402
from server.app import MatchServer  # noqa: E402
from server.config import ServerConfig  # noqa: E402

ADMIN_TOKEN = new_token()
"""The admin token of the in-process server."""


async def play(url: str, rules: str, games: int, concurrent: int) -> list[str]:
    clients = [BotClient(lambda: make_bot("random"), url, name) for name in ("x", "d")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    for client in clients:
        await asyncio.wait_for(client.connected.wait(), 30)
    played: list[str] = []
    async with AdminClient(url, ADMIN_TOKEN) as admin:
        running: list[str] = []
        for seed in range(games):
            running.append(await admin.start_match(StartMatch(rules, "x", ["d"], seed=seed)))
            if len(running) >= concurrent:
                await admin.result(running[0], 600)
                played.append(running.pop(0))
        for game in running:
            await admin.result(game, 600)
            played.append(game)
    for task in tasks:
        task.cancel()
    return played


async def serve_and_play(db_url: str, args: argparse.Namespace) -> list[str]:
    store = Database.connect(db_url)
    server = MatchServer(ServerConfig(admin_token=ADMIN_TOKEN), GameWriter(store), port=0)
    await server.start()
    try:
        return await play(server.url, args.rules, args.games, args.concurrent)
    finally:
        await server.stop()
        store.close()


def column_bytes(db: Path) -> tuple[int, int, int, int]:
    """Total bytes of every column, of ``game_records.record``, games, turns."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total = 0
        for table in tables:
            for col in [r[1] for r in con.execute(f"PRAGMA table_info({table})")]:
                total += con.execute(f"SELECT COALESCE(SUM(LENGTH(CAST({col} AS BLOB))), 0) "
                                     f"FROM {table}").fetchone()[0]
        records = con.execute("SELECT SUM(LENGTH(CAST(record AS BLOB))) FROM game_records"
                              ).fetchone()[0]
        games = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        turns = con.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
        return total, records, games, turns
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--rules", default="classic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "yard.db"
        url = f"sqlite:///{db}"
        started = time.perf_counter()
        games = asyncio.run(serve_and_play(url, args))
        played_s = time.perf_counter() - started
        total, records, n, turns = column_bytes(db)
        result: dict[str, object] = {
            "rules": args.rules, "games": n, "turns_per_game": round(turns / n, 1),
            "record_bytes_per_game": round(records / n),
            "stored_bytes_per_game": round(total / n),
            "db_file_bytes_per_game": round(os.path.getsize(db) / n),
            "play_s": round(played_s, 1), "regenerate_games_per_s": None}
        import server.app

        if Path(server.app.__file__).with_name("transcript.py").exists():  # this yard has it
            from server.transcript import regenerate

            with Database.connect(url) as store:
                loaded = [store.load_game(g) for g in games]
            started = time.perf_counter()
            for record in loaded:
                regenerate(record)
            result["regenerate_games_per_s"] = round(
                len(loaded) / (time.perf_counter() - started), 1)
        print(json.dumps(result))


if __name__ == "__main__":
    main()
