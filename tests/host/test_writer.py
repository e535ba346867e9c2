"""The game writer's group commits: when finished games are written, and with what."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from host.writer import STORE_BATCH, GameWriter
from protocol import MatchResult, decode
from records import GameRecord
from server.outputs import Finished

LONG = 60.0
"""A linger no test waits out: a write that came only after it would time the test out."""


def finished(seed: int) -> Finished:
    result = play_game("grid5", make_bot("random", seed), [make_bot("random", seed + 1)],
                       seed)
    record = record_from_moves(f"w{seed}", result.start, result.moves,
                               {0: "random", 1: "random"}, result.outcome, seed=seed)
    outcome = record.outcome
    return Finished(record, 1, MatchResult(record.game_id, outcome.winner,
                                           outcome.termination, None, record.moves))


class Batches(Database):
    """A real database that notes the size of every write."""

    batches: list[int]

    def save_game(self, record: GameRecord) -> bool:
        self.batches.append(1)
        return super().save_game(record)

    def save_games(self, records: Sequence[GameRecord]) -> list[bool]:
        self.batches.append(len(records))
        return super().save_games(records)


@pytest.fixture
def store(tmp_path: Path) -> Batches:
    db = Batches.connect(f"sqlite:///{tmp_path / 'w.db'}")
    assert isinstance(db, Batches)
    db.batches = []
    return db


class Results:
    """The writer's ``send``: the game ids of the results sent, and a wake-up per result."""

    def __init__(self) -> None:
        self.games: list[str] = []
        self.changed = asyncio.Event()

    def __call__(self, conn: int, text: bytes) -> None:
        message = decode(text)
        assert isinstance(message, MatchResult) and conn == 1
        self.games.append(message.game)
        self.changed.set()

    async def until(self, count: int) -> None:
        while len(self.games) < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 30)


async def test_games_ending_while_others_play_are_written_together(store: Batches) -> None:
    games = [finished(seed) for seed in range(4)]
    results, running = Results(), [True]
    writer = GameWriter(store, results, running=lambda: running[0], linger_s=LONG)
    for game in games[:3]:
        writer.queue(game)
        await asyncio.sleep(0)  # one loop turn: the writer starts waiting for more
    assert store.batches == [] and results.games == []
    running[0] = False  # the last game ends: nothing more is coming, write now
    writer.queue(games[3])
    await results.until(4)
    assert store.batches == [4]
    assert results.games == [g.record.game_id for g in games]
    assert sorted(g.game_id for g in store.list_games()) == sorted(results.games)


async def test_a_game_ending_alone_is_written_at_once(store: Batches) -> None:
    results = Results()
    writer = GameWriter(store, results, running=lambda: False, linger_s=LONG)
    writer.queue(finished(7))
    await results.until(1)
    assert store.batches == [1] and results.games == ["w7"]


async def test_a_full_batch_and_a_stop_are_written_at_once(store: Batches) -> None:
    results = Results()
    writer = GameWriter(store, results, running=lambda: True, linger_s=LONG)
    one = finished(0)
    batch = [Finished(GameRecord(**{**vars(one.record), "game_id": f"b{i}"}), 1,
                      MatchResult(f"b{i}", one.result.winner, one.result.termination, None,
                                  one.result.moves)) for i in range(STORE_BATCH)]
    for game in batch:
        writer.queue(game)
    await results.until(STORE_BATCH)
    assert store.batches == [STORE_BATCH]
    writer.queue(finished(1))  # games still running, but the server stops: no waiting
    await asyncio.wait_for(writer.wait(), 30)
    assert store.batches == [STORE_BATCH, 1] and results.games[-1] == "w1"
