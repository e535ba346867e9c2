"""The server core's shortcuts against the reference code they stand for: views built
without the view object, move texts made once, the one-pass message encoder, and the timer
woken only for an earlier deadline (a real server over loopback for that one)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import pytest
from websockets.asyncio.client import connect

from game import MRX, Move, builtin_rulesets, new_game
from game.state import play_out
from game.views import detective_log, view_dict
from protocol import Clock, MoveOk, StartMatch, TimeControl, Update, YourTurn, encode_bytes
from protocol.codec import _encode_stdlib
from protocol.messages import Policy
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from server.core import Core
from server.match import move_texts


@pytest.mark.parametrize("rules", [r.name for r in builtin_rulesets()])
def test_view_dict_is_the_view_objects_dict_for_every_seat(rules: str) -> None:
    """Along whole random games (also out of order: a state seen before its parent), for
    every seat and the spectators; a detective's never holds Mister X's station."""
    for seed in range(6):
        start = new_game(rules, seed)
        states = [start, *play_out(start, random.Random(seed))]
        order = states if seed % 2 else list(reversed(states))  # memo built either way
        for state in order:
            for seat in (None, *range(len(state.positions))):
                built = view_dict(state, seat)
                assert built == state.view(seat).to_dict()
                assert ("mrx" in built) == (seat == MRX)
            assert detective_log(state) == state.view(None).log


def test_move_texts_are_the_moves_str() -> None:
    start = new_game("classic", 4)
    for state in [start, *play_out(start, random.Random(4))]:
        moves = state.legal_moves()
        assert move_texts(moves) == [str(m) for m in moves]
        assert move_texts(moves) == [str(m) for m in moves]  # second time: from the cache
    assert move_texts([Move.parse("bus:52+taxi:13")]) == ["bus:52+taxi:13"]


@pytest.mark.parametrize("msg", [
    YourTurn("g1", 3, "d2", {"seat": "d2", "log": [{"ticket": "bus", "station": None}],
                             "possible": [1, 2], "tickets": {"mrx": None}}, ["taxi:1"],
             Clock(59.998, 0.0)),
    MoveOk("g1", 3, "d2", "taxi:1"),
    Update("g1", 4, "mrx", "secret+bus:12", "d1"),
    Update("g1", 4, "d5", "taxi:1", None),
    # Integer keys (no message the server makes has them): orjson's other option.
    YourTurn("g1", 3, "d2", {"tickets": {0: 1, 1: {"taxi": 2}}}, [], Clock(1.5, 0.0)),
])
def test_the_encoder_writes_the_standard_librarys_json(msg: Any) -> None:
    assert encode_bytes(msg) == _encode_stdlib(msg).encode()


def test_a_game_with_an_earlier_deadline_rearms_the_timer() -> None:
    core = Core(ServerConfig(admin_token="adm"))
    admin, bot = core.connect(0.0), core.connect(0.0)
    core.receive(admin, '{"type": "hello", "protocol": 1, "name": "a", "role": "admin", '
                 '"token": "adm"}', 0.0)
    core.receive(bot, '{"type": "hello", "protocol": 1, "name": "b"}', 0.0)
    assert core.next_deadline() is None and not core.rearm

    def start(move_s: float, now: float) -> list[Any]:
        return core.receive(admin, json.dumps({
            "type": "start_match", "rules": "grid5", "mrx": "b", "detectives": ["b"],
            "seed": 1, "time_control": {"move_s": move_s, "bank_s": 0.0}}), now)

    start(60.0, 1.0)
    assert core.rearm  # the first deadline
    assert core.next_deadline() == pytest.approx(61.0) and not core.rearm
    outputs = start(100.0, 2.0)
    assert not core.rearm  # later than the armed one: the timer need not wake
    turn = next(o.message for o in outputs if type(o.message) is YourTurn)
    core.receive(bot, json.dumps({"type": "move", "game": turn.game, "turn": turn.turn,
                                  "move": turn.legal[0]}), 3.0)
    assert not core.rearm  # the next turn's deadline (103 s) is later too
    core.disconnect(bot, 3.5)
    assert core.rearm  # the grace periods (10 s) end before 61 s
    assert core.next_deadline() == pytest.approx(13.5) and not core.rearm


async def test_a_short_clock_started_after_a_long_one_still_times_out_on_time() -> None:
    """A real server: the timer sleeps until the first game's deadline (a minute away);
    a game with a 0.3 s clock started after it must wake it, and times out at once."""
    server = MatchServer(ServerConfig(), recorder=None, port=0)
    await server.start()
    try:
        async with connect(server.url, proxy=None) as bot, \
                AdminClient(server.url, server.admin_token) as admin:
            await bot.send(json.dumps({"type": "hello", "protocol": 1, "name": "idle"}))
            await admin.start_match(StartMatch("grid5", "idle", ["idle"], seed=1,
                                               time_control=TimeControl(60.0)))
            started = time.monotonic()
            short = await admin.start_match(StartMatch(
                "grid5", "idle", ["idle"], seed=2, time_control=TimeControl(0.3),
                policy=Policy()))
            async with asyncio.timeout(45):
                while True:
                    msg = json.loads(await bot.recv())
                    if msg["type"] == "game_over" and msg["game"] == short:
                        break
            assert msg["termination"] == "timeout"
            # Not the other game's minute (a loaded machine may take seconds for 0.3 s).
            assert time.monotonic() - started < 30.0
    finally:
        await server.stop()
