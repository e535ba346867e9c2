"""The codec: round trips, strict rejection of bad input, schemas, and the spec's examples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import Termination, Winner
from protocol import (
    MESSAGE_TYPES,
    BotInfo,
    Bots,
    Clock,
    Effort,
    Error,
    ErrorCode,
    GameOver,
    Hello,
    Message,
    MoveMsg,
    OnTimeout,
    Ping,
    Policy,
    ProtocolError,
    Role,
    StartMatch,
    TimeControl,
    YourTurn,
    decode,
    encode,
    encode_bytes,
    from_json,
    to_json,
)
from protocol.schema import SCHEMA_DIR, load_schema, message_schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

SAMPLES: list[Message] = [
    Hello(1, "closer", "1.0", token="t", resume=None, role=Role.ADMIN),
    MoveMsg("g1", 4, "bus:52+taxi:13", "mrx"),
    MoveMsg("g1", 5, "taxi:4", None, Effort(playouts=1234, depth=7)),
    Hello(1, "mcts", instance="2"),
    StartMatch("classic", "random", ["greedy", "mcts"], 7, 3, TimeControl(2.5, 10),
               Policy(OnTimeout.RANDOM, 2), "tag", "t1", 12),
    StartMatch({"name": "x"}, "a", ["b"]),
    StartMatch("grid5", "a", ["b"], instance="3"),
    YourTurn("g1", 2, "d1", {"seat": "d1", "possible": [1, 2]}, ["taxi:4"], Clock(1.5, 0.0)),
    GameOver("g1", None, Termination.ABORTED, None, 0, [5]),
    GameOver("g1", Winner.MRX, Termination.TIMEOUT, "d2", 7, [5, 6, 7]),
    Bots([BotInfo("a", "1", 2)]),
    Bots([BotInfo("a", "1", 3, ["1", "2"])]),
    Error(ErrorCode.STALE_TURN, "old", "g1"),
    Ping(3),
]


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: m.TYPE)
def test_round_trip_and_schema(msg: Message) -> None:
    text = encode(msg)
    assert decode(text) == msg
    jsonschema.validate(json.loads(text), load_schema(msg.TYPE))


def test_every_message_type_has_a_current_schema_file() -> None:
    files = {p.stem for p in SCHEMA_DIR.glob("*.json")}
    assert files == set(MESSAGE_TYPES)
    for kind in MESSAGE_TYPES:
        assert load_schema(kind) == message_schema(kind), f"regenerate schema for {kind}"


@pytest.mark.parametrize(("text", "code"), [
    ("{", ErrorCode.BAD_JSON),
    ("[1, 2]", ErrorCode.WRONG_TYPE),
    ('{"game": "g"}', ErrorCode.MISSING_FIELD),
    ('{"type": "teleport"}', ErrorCode.UNKNOWN_TYPE),
    ('{"type": "move", "game": "g", "turn": 1}', ErrorCode.MISSING_FIELD),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "x": 0}',
     ErrorCode.EXTRA_FIELD),
    ('{"type": "move", "game": "g", "turn": "1", "move": "taxi:1"}', ErrorCode.WRONG_TYPE),
    ('{"type": "move", "game": "g", "turn": true, "move": "taxi:1"}', ErrorCode.WRONG_TYPE),
    ('{"type": "move", "game": null, "turn": 1, "move": "taxi:1"}', ErrorCode.WRONG_TYPE),
    ('{"type": "hello", "protocol": 1, "name": "a", "role": "king"}', ErrorCode.BAD_VALUE),
    ('{"type": "start_match", "rules": "c", "mrx": "a", "detectives": ["b", 3]}',
     ErrorCode.WRONG_TYPE),
    ('{"type": "start_match", "rules": "c", "mrx": "a", "detectives": ["b"],'
     ' "time_control": {"move_s": 1, "bank": 2}}', ErrorCode.EXTRA_FIELD),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": {"playouts": -1}}',
     ErrorCode.BAD_VALUE),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": {"nodes": 1e3}}',
     ErrorCode.WRONG_TYPE),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": {"depth": true}}',
     ErrorCode.WRONG_TYPE),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": {"playout": 5}}',
     ErrorCode.EXTRA_FIELD),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": {"nodes": '
     '9223372036854775808}}', ErrorCode.BAD_VALUE),
    ('{"type": "move", "game": "g", "turn": 1, "move": "taxi:1", "effort": [1]}',
     ErrorCode.WRONG_TYPE),
    ('{"type": "ping", "nonce": NaN}', ErrorCode.BAD_JSON),
    ('{"type": "ping", "nonce": 1.5}', ErrorCode.WRONG_TYPE),
])
def test_decode_rejects_bad_frames_with_a_code(text: str, code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as info:
        decode(text)
    assert info.value.code is code


def test_oversized_frames_are_rejected_before_parsing() -> None:
    text = json.dumps({"type": "ping", "nonce": 1}) + " " * 100
    assert decode(text, max_size=200) == Ping(1)
    with pytest.raises(ProtocolError) as info:
        decode(text, max_size=50)
    assert info.value.code is ErrorCode.TOO_LARGE


def test_field_errors_name_the_field() -> None:
    with pytest.raises(ProtocolError, match=r"start_match\.time_control\.move_s"):
        decode('{"type": "start_match", "rules": "c", "mrx": "a", "detectives": [],'
               ' "time_control": {"move_s": "fast"}}')


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                              lambda c: st.lists(c, max_size=4)
                              | st.dictionaries(st.sampled_from(
                                  ["type", "game", "turn", "move", "seat", "nonce"]), c,
                                  max_size=5), max_leaves=12).map(json.dumps)))
def test_decode_fuzz_only_raises_protocol_error(text: str | bytes) -> None:
    try:
        msg = decode(text)
    except ProtocolError:
        return
    assert decode(encode(msg)) == msg


@settings(max_examples=100, deadline=None)
@given(st.builds(MoveMsg, st.text(max_size=20), st.integers(), st.text(max_size=20),
                 st.none() | st.text(max_size=4)))
def test_move_round_trips(msg: MoveMsg) -> None:
    assert decode(encode(msg)) == msg


def doc_examples() -> list[dict[str, Any]]:
    """Every ```json block of docs/protocol.md."""
    blocks = re.findall(r"```json\n(.*?)\n```", DOC.read_text(), flags=re.S)
    return [json.loads(block) for block in blocks]


def test_docs_cover_every_message_type() -> None:
    assert {ex["type"] for ex in doc_examples()} == set(MESSAGE_TYPES)


@pytest.mark.parametrize("example", doc_examples(), ids=lambda ex: ex["type"])
def test_doc_examples_decode_and_match_their_schema(example: dict[str, Any]) -> None:
    msg = decode(json.dumps(example))
    jsonschema.validate(example, load_schema(example["type"]))
    assert to_json(msg)["type"] == example["type"]


def _every_type() -> list[Message]:
    """SAMPLES plus one decoded example of every message type from the spec."""
    return [*SAMPLES, *(decode(json.dumps(ex)) for ex in doc_examples())]


@pytest.mark.parametrize("msg", _every_type(), ids=lambda m: m.TYPE)
def test_fast_encoder_writes_the_reference_bytes(msg: Message) -> None:
    """orjson's one-pass encoding equals the standard library's JSON of ``to_json``."""
    reference = json.dumps(to_json(msg), separators=(",", ":")).encode()
    assert encode_bytes(msg) == reference
    assert encode(msg) == reference.decode()


def test_fast_encoder_falls_back_where_orjson_cannot_write() -> None:
    """Non-ASCII text, integers past 64 bits and lone surrogates: the same JSON value."""
    for msg in (MoveMsg("g\u00e9", 2**70, "taxi:1"), Ping(-(2**80)),
                Error(ErrorCode.BAD_VALUE, "x\udfffy", None),
                YourTurn("g", 1, "d1", {"tickets": {0: 1, 1: 2}}, [], Clock(1e16, 0.5))):
        text = encode_bytes(msg)
        assert json.loads(text.decode("utf-8", "surrogatepass")) == \
            json.loads(json.dumps(to_json(msg)))


def _generic_decode(text: str) -> Message | tuple[ErrorCode, str]:
    """The validator every message type goes through (no ``move`` fast path)."""
    try:
        return from_json(json.loads(text))
    except ProtocolError as exc:
        return exc.code, str(exc)


_MOVE_VALUES = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
                | st.lists(st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(
    st.sampled_from(["game", "turn", "move", "seat", "effort", "nonce"]),
    _MOVE_VALUES | st.dictionaries(st.sampled_from(["playouts", "nodes", "depth", "x"]),
                                   _MOVE_VALUES, max_size=3), max_size=6))
def test_move_fast_path_decodes_as_the_generic_validator(body: dict[str, Any]) -> None:
    """``move`` frames take an orjson fast path: same message or same error as the rest."""
    text = json.dumps({"type": "move", **body})
    try:
        got: Message | tuple[ErrorCode, str] = decode(text)
    except ProtocolError as exc:
        got = exc.code, str(exc)
    assert got == _generic_decode(text)


def test_move_fast_path_keeps_big_integers_and_refuses_lone_surrogates() -> None:
    assert decode(f'{{"type":"move","game":"g","turn":{2**70},"move":"taxi:1"}}') == \
        MoveMsg("g", 2**70, "taxi:1")
    assert decode('{"type":"move","game":"g","turn":1,"move":"taxi:1","effort":'
                  '{"playouts":12,"depth":null}}') == \
        MoveMsg("g", 1, "taxi:1", None, Effort(playouts=12))
    with pytest.raises(ProtocolError) as exc:
        decode('{"type":"move","game":"g\\udfff","turn":1,"move":"taxi:1"}')
    assert exc.value.code is ErrorCode.BAD_VALUE
