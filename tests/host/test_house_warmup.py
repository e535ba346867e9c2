"""House bots (host/house.py) start as ``yard bot --warm-up`` processes: they compile and
warm up before their ``hello``, so a fresh server sees them only once they are ready."""

from __future__ import annotations

from host.house import House, HouseBot
from server.config import ServerConfig


def test_house_bots_warm_up_before_they_connect() -> None:
    house = House([HouseBot("mcts", "mcts")], ServerConfig(ladder=("grid5",)))
    assert "--warm-up" in house.command(house.bots[0], "ws://127.0.0.1:1")
