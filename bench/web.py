"""Leaderboard endpoint speed on a large database: cold (ratings computed) and warm
(cached per ruleset, tournament and games stored).

    .venv/bin/python bench/web.py [--games 100000] [--db sqlite:///bench-web.db] [--warm 20]

Builds (or reuses, when it already holds the games) a SQLite database of synthetic grid5
games: one round-robin tournament of 8 bots with a hidden strength each, its schedule and
games bulk-inserted through the store's tables (no records or turns: ratings read only the
games and schedule tables). Then starts a real match server with the pages on a free port
and times ``GET /api/leaderboard?rules=grid5`` over HTTP. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

# bench/server.py is named like the `server` package; keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import sqlalchemy as sa  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from db.models import GameRow, ScheduledGameRow, TournamentRow  # noqa: E402
from db.store import Database  # noqa: E402
from host.web.http import WebApp, web_url  # noqa: E402
from host.writer import GameWriter  # noqa: E402
from server.app import MatchServer  # noqa: E402
from server.config import ServerConfig  # noqa: E402

BOTS = {"random": 0.0, "greedy": 150.0, "rush": 120.0, "mcts": 300.0, "alphabeta": 260.0,
        "dqn": 200.0, "run2/rush": 180.0, "greedy+rush": 170.0}
TOURNAMENT = "bench-web"


def build(url: str, games: int, seed: int = 1) -> float:
    """Insert ``games`` games (a multiple of two: role-swapped pairs); returns seconds."""
    started = time.perf_counter()
    rng = random.Random(seed)
    names = list(BOTS)
    pairings = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with Database.connect(url) as store:
        store.create_tournament({"rules": "grid5", "bots": names, "format": "round-robin",
                                 "pairs": games // (2 * len(pairings))}, TOURNAMENT)
    engine = sa.create_engine(url)
    schedule, rows = [], []
    for index in range(games):
        pair = index // 2
        a, b = pairings[pair % len(pairings)]
        mrx, det = (a, b) if index % 2 == 0 else (b, a)
        pair_index = pair // len(pairings)
        low, high = sorted((a, b))
        schedule.append({"id": index + 1, "tournament_id": TOURNAMENT, "game_index": index,
                         "pair_index": pair_index, "pair_key": f"{low}|{high}|{pair_index}",
                         "mrx_player": mrx, "detective_player": det, "seed": index})
        advantage = BOTS[mrx] - BOTS[det] + 30.0
        mrx_won = rng.random() < 1 / (1 + 10 ** (-advantage / 400))
        moment = now + timedelta(seconds=index)
        rows.append({"id": f"g{index}", "ruleset": "grid5", "seed": index,
                     "start_position": "-", "winner": "mrx" if mrx_won else "detectives",
                     "termination": "survived" if mrx_won else "caught", "fault_seat": None,
                     "moves": 15 if mrx_won else 8, "started_at": moment,
                     "finished_at": moment, "mrx_player": mrx, "detective_player": det,
                     "tournament_id": TOURNAMENT, "schedule_id": index + 1})
    with Session(engine) as session, session.begin():
        for chunk in range(0, games, 10_000):
            session.execute(sa.insert(ScheduledGameRow), schedule[chunk:chunk + 10_000])
            session.execute(sa.insert(GameRow), rows[chunk:chunk + 10_000])
    engine.dispose()
    return time.perf_counter() - started


def stored(url: str) -> int:
    with Database.connect(url) as store:
        engine = sa.create_engine(url)
        with Session(engine) as session:
            count = session.scalar(sa.select(sa.func.count()).select_from(GameRow)
                                   .where(GameRow.tournament_id == TOURNAMENT))
            known = session.get(TournamentRow, TOURNAMENT) is not None
        engine.dispose()
        store.close()
    return int(count or 0) if known else -1


def fetch(url: str) -> tuple[float, bytes]:
    """Time a GET, following 503 "computing" answers (retry every 0.2 s) to the result."""
    started = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(url, timeout=600) as response:
                body = response.read()
            return time.perf_counter() - started, body
        except urllib.error.HTTPError as exc:
            if exc.code != 503:
                raise
            time.sleep(0.2)


async def measure(url: str, warm: int) -> dict[str, object]:
    store = Database.connect(url)
    server = MatchServer(ServerConfig(), GameWriter(store), port=0)
    app = WebApp(url, live=server.core)
    server.process_request = app.process_request
    base = web_url(await server.start())
    try:
        endpoint = f"{base}api/leaderboard?rules=grid5"
        cold, body = await asyncio.to_thread(fetch, endpoint)
        warm_times = [(await asyncio.to_thread(fetch, endpoint))[0] for _ in range(warm)]
        all_cold, _ = await asyncio.to_thread(fetch, f"{base}api/leaderboard")
        all_warm = [(await asyncio.to_thread(fetch, f"{base}api/leaderboard"))[0]
                    for _ in range(warm)]
        board = json.loads(body)
    finally:
        await server.stop()
        app.close()
        store.close()
    return {"cold_s": round(cold, 3), "warm_median_ms": round(1000 * statistics.median(
        warm_times), 2), "warm_max_ms": round(1000 * max(warm_times), 2),
            "all_rulesets_first_s": round(all_cold, 3),
            "all_rulesets_warm_median_ms": round(1000 * statistics.median(all_warm), 2),
            "rated_games": board["games"], "players": len(board["rows"]),
            "leader": board["rows"][0]["player"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--db", default="sqlite:///bench-web.db")
    parser.add_argument("--warm", type=int, default=20)
    args = parser.parse_args()
    games = args.games - args.games % 2
    have = stored(args.db)
    built = None
    if have == -1:
        built = build(args.db, games)
    elif have != games:
        raise SystemExit(f"{args.db} holds {have} bench games, not {games}: use another --db")
    result = asyncio.run(measure(args.db, args.warm))
    print(json.dumps({"games": games, "db": args.db, "build_s": None if built is None
                      else round(built, 2), **result}, indent=1))


if __name__ == "__main__":
    main()
