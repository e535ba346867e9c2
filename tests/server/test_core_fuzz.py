"""Hostile frames against the sans-I/O server core: nothing a client sends makes it raise.

Each example runs a real grid5 game on a :class:`Core` (fake clock) and, between honest
moves, feeds it frames a hostile client could send: garbage text, every message type with
fields of the wrong JSON type, huge numbers, the running game's id with wrong turns and
moves. Any exception escaping ``Core.receive`` fails the test (in the asyncio shell it
would cost the connection, or worse). Afterwards the game must still reach an end with a
recorded termination.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game import Termination
from protocol import MESSAGE_TYPES, MoveMsg
from server.config import ServerConfig
from tests.server.test_match_core_harness import Harness

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=24))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=8)
GARBAGE = st.sampled_from([
    "", "{", "[]", "null", "42", '"hello"', '{"type": 1}', '{"type": null}',
    '{"type": "move"}', '{"type": "nope"}', '{"type": "move", "game": {}}',
    '{"type":"move","game":"g1","turn":1e400,"move":"taxi:1"}', "\udcff", "\x00" * 10,
    '{"type": "hello", "protocol": 1, "name": "\\udfff"}',
])


def _frame(data: st.DataObject, game: str, turn: int, legal: list[str]) -> str:
    """A frame a hostile client might send, often close to a valid one."""
    kind = data.draw(st.sampled_from(["garbage", "fields", "move"]))
    if kind == "garbage":
        return data.draw(GARBAGE | st.text(max_size=40))
    if kind == "move":
        msg: dict[str, Any] = {"type": "move", "game": game,
                               "turn": data.draw(st.sampled_from([turn, turn + 1, turn - 1, 0]))
                               if data.draw(st.booleans()) else data.draw(JSON_VALUES),
                               "move": data.draw(st.sampled_from(legal or ["taxi:1"]))
                               if data.draw(st.booleans()) else data.draw(JSON_VALUES)}
        for extra in data.draw(st.sets(st.sampled_from(["seat", "effort", "junk"]), max_size=2)):
            msg[extra] = data.draw(JSON_VALUES)
        return json.dumps(msg)
    cls = MESSAGE_TYPES[data.draw(st.sampled_from(sorted(MESSAGE_TYPES)))]
    msg = {"type": cls.TYPE}
    for field in dataclasses.fields(cls):
        if data.draw(st.integers(0, 3)) == 0:
            continue  # leave this field out
        msg[field.name] = (game if field.name == "game" and data.draw(st.booleans())
                           else data.draw(JSON_VALUES))
    return json.dumps(msg)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_hostile_frames_never_escape_the_core_and_the_game_still_ends(
        data: st.DataObject) -> None:
    h = Harness(ServerConfig(max_violations=1000))
    mrx, det, admin = h.connect("runner"), h.connect("hunter"), h.admin()
    late = h.core.connect(h.now)  # never says hello
    game = h.start(admin, "runner", ["hunter"], rules="grid5", seed=data.draw(
        st.integers(0, 2**31)))
    rng = random.Random(0)
    for _ in range(data.draw(st.integers(1, 25))):
        pending = h.pending_turn([mrx, det], game)
        turn, legal = (pending[1].turn, pending[1].legal) if pending else (0, [])
        conn = data.draw(st.sampled_from([mrx, det, admin, late]))
        h.send(conn, _frame(data, game, turn, legal))  # an exception here fails the test
        if pending is not None and data.draw(st.booleans()):
            h.now += 0.01
            h.send(pending[0], MoveMsg(game, turn, rng.choice(legal)))
    for _ in range(200):  # honest play (or the clocks) must still finish the game
        if any(f.record.game_id == game for f in h.finished):
            break
        pending = h.pending_turn([mrx, det], game)
        if pending is not None and pending[0] not in h.closed:
            h.now += 0.01
            h.send(pending[0], MoveMsg(game, pending[1].turn, rng.choice(pending[1].legal)))
        else:
            h.advance(60.0)
    done = [f for f in h.finished if f.record.game_id == game]
    assert done, "the game never ended"
    assert isinstance(done[0].record.outcome.termination, Termination)
    for frames in h.frames.values():  # whatever the clients sent, what they got is protocol
        assert all(json.loads(frame)["type"] in MESSAGE_TYPES for frame in frames)
