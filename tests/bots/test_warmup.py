"""A bot's warm-up (bots/warmup.py, ``yard bot --warm-up``, every house bot): one move of
each side it plays, in-process, before it connects."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from bots.base import Bot
from bots.simple import RushBot
from bots.warmup import warm_up
from game import Move, View
from host.house import House, HouseBot
from server.config import ServerConfig

ASKED: list[int | None] = []


class Counting(Bot):
    """Notes the seat of every move it is asked for (in :data:`ASKED`)."""

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        ASKED.append(view.seat)
        return legal[0]


class Broken(Bot):
    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        raise RuntimeError("no weights")


def test_every_side_of_every_ruleset_plays_one_move() -> None:
    ASKED.clear()
    assert warm_up(Counting, ["grid5", "classic"], seed=3) == [
        "grid5 mrx", "grid5 detectives", "classic mrx", "classic detectives"]
    assert ASKED == [0, 1, 0, 1]  # Mister X, then the first detective


def test_a_side_the_bot_does_not_play_or_a_failing_move_is_left_out(
        caplog: pytest.LogCaptureFixture) -> None:
    assert warm_up(RushBot, ["grid5"], seed=1) == ["grid5 detectives"]
    with caplog.at_level(logging.ERROR, "bots.warmup"):
        assert warm_up(Broken, ["grid5"], seed=1) == []
    assert "no weights" in caplog.text


def test_house_bots_warm_up_before_they_connect() -> None:
    house = House([HouseBot("mcts", "mcts")], ServerConfig(ladder=("grid5",)))
    assert "--warm-up" in house.command(house.bots[0], "ws://127.0.0.1:1")
