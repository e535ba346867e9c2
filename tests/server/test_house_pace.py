"""House bots pace their games with each other (issue 41): at most ``house_rate`` games a
minute between two house bots, woken by the core's timer when the next pair may start;
games with other bots are not paced. The pace itself (server/house_pace.py), then the
sans-I/O core with controlled time."""

from __future__ import annotations

import pytest

from protocol import GameStart
from server.house_pace import HousePace
from tests.server.test_ladder_core import Harness


def test_a_pair_of_house_bots_waits_for_the_bucket() -> None:
    pace = HousePace({"a", "b"}, rate=6.0, now=100.0)  # a pair every 20 s
    assert not pace.apart("a", "b", 100.0) and pace.next_pair(100.0) == 100.0
    pace.paired("a", "b", 100.0)
    assert pace.apart("a", "b", 110.0) and pace.next_pair(110.0) == pytest.approx(120.0)
    assert not pace.apart("a", "b", 120.0)
    assert not pace.apart("a", "x", 110.0)  # another bot is never held back
    pace.paired("a", "x", 120.0)  # nor paid for
    assert not pace.apart("a", "b", 120.0)
    never = HousePace({"a", "b"}, rate=0.0, now=0.0)
    assert never.apart("a", "b", 1e9) and never.next_pair(0.0) is None
    with pytest.raises(ValueError, match=">= 0"):
        HousePace({"a"}, rate=-1.0, now=0.0)


def house_games(h: Harness, names: set[str]) -> set[str]:
    return {m.game for msgs in h.inbox.values() for m in msgs
            if isinstance(m, GameStart) and set(m.players.values()) <= names}


def test_house_bots_play_each_other_at_the_rate_and_guests_at_once() -> None:
    h = Harness(games=10**6, ladder=("grid5",), house_names=frozenset({"a", "b"}),
                house_rate=6.0)
    h.hello("a", ladder=["grid5"], max_games=2)
    h.hello("b", ladder=["grid5"], max_games=2)
    assert len(house_games(h, {"a", "b"})) == 2  # the first pair at once, then nothing
    h.run(59.0)  # the timer wakes the ladder when the next pair may start: every 20 s
    assert len(house_games(h, {"a", "b"})) == 6  # pairs at 0, 20 and 40 s
    h.games = h.over + 40  # the bots answer 40 more games at once, then stop
    guest = h.hello("guest", ladder=["grid5"], max_games=2)
    # A guest's games are not paced: one after another, all at the same moment.
    assert len({m.game for m in h.of(guest, GameStart)}) >= 20  # type: ignore[attr-defined]
    assert len(house_games(h, {"a", "b"})) <= 8


def test_a_house_rate_of_zero_keeps_house_bots_apart() -> None:
    h = Harness(games=10**6, ladder=("grid5",), house_names=frozenset({"a", "b"}),
                house_rate=0.0)
    h.hello("a", ladder=["grid5"])
    h.hello("b", ladder=["grid5"])
    h.run(600.0)
    assert not house_games(h, {"a", "b"}) and h.core.next_deadline() is None
