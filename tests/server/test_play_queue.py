"""People get a seat (issue 41): a person's ``play`` for a busy ladder bot waits in its
queue, told its place and expected wait, and is served before the ladder refills the bot's
freed slot; one game or place per address; idle people hold nothing. The queue itself
(server/play_queue.py) with controlled ``now``, then in the sans-I/O core."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from db.store import Database
from protocol import (
    Error,
    ErrorCode,
    GameStart,
    Hello,
    MatchStarted,
    Play,
    Queued,
    Role,
    Side,
    TimeControl,
    encode,
)
from server.app import MatchServer
from server.config import ServerConfig
from server.play_queue import Durations, PlayQueue, Waiting, expected_wait
from tests import SCALE
from tests.server.test_ladder_core import Harness

#: The real server's config (the ``server`` fixture): a ladder whose games end on the clock.
SERVER_CONFIG = ServerConfig(ladder=("grid5",), time_control=TimeControl(0.5),
                             ladder_pause_after=100, grace_s=1.0,
                             play_time_control=TimeControl(0.5))


def waiting(session: str, bot: str = "greedy", address: str | None = None,
            since: float = 0.0) -> Waiting:
    return Waiting(session, "grid5", "mrx", bot, address, since)


def test_the_queue_is_first_come_first_served_per_bot() -> None:
    queue = PlayQueue()
    assert [queue.add(waiting("s1")), queue.add(waiting("s2", "random")),
            queue.add(waiting("s3"))] == [1, 1, 2]
    with pytest.raises(ValueError, match="waits already"):
        queue.add(waiting("s1"))
    assert [w.session for w in queue.for_bot("greedy")] == ["s1", "s3"]
    assert queue.drop("s1") == waiting("s1") and queue.drop("s1") is None
    assert queue.place("s3") == 1 and queue.place("s1") == 0
    assert len(queue) == 2 and [w.session for w in queue.waiting()] == ["s2", "s3"]
    queue.add(waiting("s4", address="203.0.113.7"))
    assert queue.holds_address("203.0.113.7") and not queue.holds_address("203.0.113.8")


def test_the_expected_wait_is_the_place_th_slot_to_free_up() -> None:
    assert expected_wait(1, [], 60.0) == 0.0  # a free slot: no wait
    assert expected_wait(1, [30.0, 5.0], 60.0) == 5.0
    assert expected_wait(2, [30.0, 5.0], 60.0) == 30.0
    assert expected_wait(3, [30.0, 5.0], 60.0) == 65.0  # the first slot, freed again
    assert expected_wait(1, [-10.0], 60.0) == 0.0  # a game longer than expected: any moment


def test_game_lengths_are_a_running_mean_per_key() -> None:
    durations = Durations(default_s=60.0)
    assert durations.mean("a") == 60.0
    durations.note(["a", "b"], 10.0)
    durations.note(["a"], 20.0)
    assert durations.mean("a") == pytest.approx(12.0) and durations.mean("b") == 10.0


def busy_pair(**config: object) -> Harness:
    """A core whose ladder bots ``a`` and ``b`` (one slot each) never move: their ladder
    game runs on the clock (1 s a move) and ends in a timeout."""
    h = Harness(games=0, ladder=("grid5",), ladder_pause_after=100,
                play_time_control=TimeControl(1.0), **config)
    h.hello("a", ladder=["grid5"])
    h.hello("b", ladder=["grid5"])
    return h


def test_a_person_waits_for_a_busy_bot_and_is_served_before_the_ladder() -> None:
    h = busy_pair()
    a_games = lambda: {s.game for msgs in h.inbox.values() for s in msgs  # noqa: E731
                       if isinstance(s, GameStart) and "a" in s.players.values()}
    assert len(a_games()) == 1  # a's ladder game
    first = h.hello("first", role=Role.HUMAN)
    h.send(first, Play("grid5", Side.MRX, "a"))
    (queued,) = h.of(first, Queued)
    assert queued == Queued("grid5", "a", 1, 60.0)  # nothing ended yet: 60 s a game
    second = h.hello("second", role=Role.HUMAN)
    h.send(second, Play("grid5", Side.DETECTIVES, "a"))
    assert h.of(second, Queued)[-1] == Queued("grid5", "a", 2, 120.0)
    h.run(1.5)  # the ladder game times out: a's slot goes to the first person
    assert len(h.of(first, MatchStarted)) == 1 and h.of(first, GameStart)
    told = h.of(second, Queued)[-1]
    assert told.place == 1 and not h.of(second, MatchStarted)  # type: ignore[attr-defined]
    # No ladder game for a meanwhile: its second leg against b waits behind the people.
    assert len(a_games()) == 2
    h.run(1.5)  # the first person's game times out: the second one's turn
    assert len(h.of(second, MatchStarted)) == 1
    assert h.of(second, GameStart)[-1].seats == ["d1", "d2"]  # type: ignore[attr-defined]
    h.run(1.5)  # nobody waits any more: the ladder has a again
    assert len(a_games()) > 3


def test_leaving_gives_the_place_up_and_the_next_moves_up() -> None:
    h = busy_pair()
    people = [h.hello(name, role=Role.HUMAN) for name in ("p1", "p2", "p3")]
    for conn in people:
        h.send(conn, Play("grid5", Side.MRX, "a"))
    assert [h.of(c, Queued)[-1].place for c in people] == [1, 2, 3]  # type: ignore[attr-defined]
    h.feed(h.core.disconnect(people[0], h.now))
    assert [h.of(c, Queued)[-1].place for c in people[1:]] == [1, 2]  # type: ignore[attr-defined]
    assert not h.core.ladder_games.queue.get("p1")
    h.send(people[1], Play("grid5", Side.MRX, "a"))  # one place at a time
    assert h.of(people[1], Error)[-1].code is ErrorCode.BAD_MATCH  # type: ignore[attr-defined]


def test_a_waiting_person_hears_when_the_bot_leaves() -> None:
    h = Harness(games=0, ladder=("grid5",), ladder_pause_after=100)
    bot = h.hello("a", ladder=["grid5"])
    h.hello("b", ladder=["grid5"])
    me = h.hello("me", role=Role.HUMAN)
    h.send(me, Play("grid5", Side.MRX, "a"))
    assert h.of(me, Queued)
    h.feed(h.core.disconnect(bot, h.now))
    assert h.of(me, Error)[-1].code is ErrorCode.BOT_NOT_CONNECTED  # type: ignore[attr-defined]
    assert not len(h.core.ladder_games.queue)


def person(h: Harness, name: str, address: str) -> int:
    """A person's connection from ``address`` (the shell passes remote addresses)."""
    conn = h.core.connect(h.now, address=address)
    h.inbox[conn] = []
    h.policies[conn] = lambda turn: None
    h.feed(h.core.receive(conn, encode(Hello(1, name, role=Role.HUMAN)), h.now))
    return conn


def test_one_game_or_place_per_address_and_idle_people_hold_nothing() -> None:
    h = Harness(games=0, ladder=("grid5",), ladder_pause_after=100)
    idle = [person(h, f"idle{i}", "203.0.113.9") for i in range(4)]  # never send play
    h.hello("a", ladder=["grid5"], max_games=2)
    h.hello("b", ladder=["grid5"], max_games=2)
    starts = {m.game for msgs in h.inbox.values() for m in msgs if isinstance(m, GameStart)}
    assert len(starts) == 2  # both legs of a pair at once: idle people took no slot
    assert not any(h.inbox[c][1:] for c in idle)  # welcome only
    one = person(h, "one", "198.51.100.4")
    h.send(one, Play("grid5", Side.MRX, "a"))
    assert h.of(one, Queued)
    again = person(h, "again", "198.51.100.4")
    h.send(again, Play("grid5", Side.MRX, "b"))
    error = h.of(again, Error)[-1]
    assert error.code is ErrorCode.BAD_MATCH and "address" in error.message  # type: ignore[attr-defined]
    other = person(h, "other", "198.51.100.5")
    h.send(other, Play("grid5", Side.MRX, "b"))
    assert h.of(other, Queued) and not h.of(other, Error)


async def _hello(url: str, name: str, **fields: Any) -> ClientConnection:
    ws = await connect(url)
    await ws.send(encode(Hello(1, name, **fields)))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _next(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next message of type ``kind`` (others skipped)."""
    async with asyncio.timeout(10 * SCALE):
        while True:
            msg: dict[str, Any] = json.loads(await ws.recv())
            if msg["type"] == kind:
                return msg


async def test_a_real_server_queues_a_person_then_starts_the_game(server: MatchServer,
                                                                  db: Database) -> None:
    """Two ladder bots that never move keep each other busy; a person's ``play`` is
    queued at place 1, then started when their game ends on the clock."""
    for group, kind in (("ladder-grid5", "ladder"), ("play-grid5", "play")):
        db.ensure_group(group, {"format": kind, "rules": "grid5"})  # as `yard serve` does
    bots = [await _hello(server.url, name, ladder=["grid5"]) for name in ("a", "b")]
    await _next(bots[0], "game_start")
    me = await _hello(server.url, "pat", role=Role.HUMAN)
    await me.send(encode(Play("grid5", Side.MRX, "a")))
    queued = await _next(me, "queued")
    assert (queued["opponent"], queued["place"]) == ("a", 1) and queued["wait_s"] >= 0
    started = await _next(me, "match_started")
    start = await _next(me, "game_start")
    assert start["game"] == started["game"] and start["players"]["d1"] == "a"
    for ws in (*bots, me):
        await ws.close()
