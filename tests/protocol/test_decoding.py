"""The protocol's typed decoder on types other than messages: marks, datetimes, enums,
unions, non-strict objects at every depth, and errors that name the field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

import pytest

from game import Termination, Winner, parse_seat
from protocol import ErrorCode, ProtocolError, decode
from protocol.decoding import Check, Length, Parsed, Range, decode_value


def _is_even(value: int) -> bool:
    return value % 2 == 0


@dataclass(frozen=True)
class Turn:
    seat: Annotated[int, Parsed(parse_seat, "a seat name")]
    time: Annotated[float, Range(min=0)]
    note: Annotated[str, Length(max=3)] | None = None
    even: Annotated[int, Check(_is_even, "even")] = 0
    index: Annotated[int | None, Check(lambda v: v is not None, "an integer")] = None


@dataclass(frozen=True)
class Game:
    name: Annotated[str, Length(1, 8)]
    at: datetime
    winner: Winner | None
    why: Termination
    turns: list[Turn]
    path: Annotated[list[int], Length(min=1)]
    seconds: Annotated[int | float, Range(0, 60)]
    events: list[str | dict[str, Any]]
    extra: dict[str, Any]


GOOD: dict[str, Any] = {
    "name": "g1", "at": "2026-01-02T03:04:05.000006+00:00", "winner": "mrx",
    "why": "caught", "turns": [{"seat": "mrx", "time": 1}, {"seat": "d2", "time": 0.5,
                                                            "note": "ok", "even": 4}],
    "path": [1, 2], "seconds": 10, "events": ["a", {"k": 1}], "extra": {"x": [1]},
}


def test_a_tree_of_types_decodes() -> None:
    game: Game = decode_value(Game, GOOD)
    assert game.at == datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert game.winner is Winner.MRX and game.why is Termination.CAUGHT
    assert game.turns == [Turn(0, 1.0), Turn(2, 0.5, "ok", 4)]
    assert isinstance(game.turns[0].time, float)
    assert game.seconds == 10 and isinstance(game.seconds, int)  # kept as written
    assert decode_value(Game, {**GOOD, "seconds": 10.0}).seconds == 10.0
    assert decode_value(Game, {**GOOD, "seconds": 10.0}).seconds.is_integer()


def with_turn(**changes: Any) -> dict[str, Any]:
    return {**GOOD, "turns": [GOOD["turns"][0], {**GOOD["turns"][1], **changes}]}


@pytest.mark.parametrize(("data", "code", "message"), [
    ({**GOOD, "name": ""}, "bad_value", "game.name: must not be empty"),
    ({**GOOD, "name": "x" * 9}, "bad_value", "game.name: must have at most 8 characters, "
     "not 9"),
    ({**GOOD, "name": 5}, "wrong_type", "game.name: expected a string, got an integer"),
    ({**GOOD, "at": "noon"}, "bad_value", "game.at: 'noon' is not an ISO 8601 time"),
    ({**GOOD, "at": None}, "wrong_type", "game.at: expected a string, got null"),
    ({**GOOD, "at": "2026-01-02T03:04:05." + "0" * 60}, "bad_value",
     "game.at: '2026-01-02T03:04:05.000"),
    ({**GOOD, "winner": "both"}, "bad_value", "game.winner: 'both' is not one of mrx, "
     "detectives"),
    ({**GOOD, "why": None}, "wrong_type", "game.why: expected a string, got null"),
    ({**GOOD, "path": []}, "bad_value", "game.path: must not be empty"),
    ({**GOOD, "path": [1, True]}, "wrong_type", "game.path[1]: expected an integer, got a "
     "boolean"),
    ({**GOOD, "seconds": 61}, "bad_value", "game.seconds: must be in 0..60, not 61"),
    ({**GOOD, "seconds": "1"}, "wrong_type", "game.seconds: expected an integer or a number,"
     " got a string"),
    ({**GOOD, "seconds": float("nan")}, "bad_value", "game.seconds: must be a finite number"),
    ({**GOOD, "events": [3]}, "wrong_type", "game.events[0]: expected a string or an "
     "object, got an integer"),
    ({**GOOD, "extra": []}, "wrong_type", "game.extra: expected an object, got an array"),
    ({k: v for k, v in GOOD.items() if k != "why"}, "missing_field",
     "game: missing field 'why'"),
    ({**GOOD, "new": 1}, "extra_field", "game: unexpected field 'new'"),
    (with_turn(seat="x"), "bad_value", "game.turns[1].seat: must be a seat name, not 'x'"),
    (with_turn(seat=1), "wrong_type", "game.turns[1].seat: expected a string, got an "
     "integer"),
    (with_turn(time=-1), "bad_value", "game.turns[1].time: must be >= 0, not -1"),
    (with_turn(time=float("inf")), "bad_value", "game.turns[1].time: must be a finite "
     "number, not inf"),
    (with_turn(time=10**400), "bad_value", "game.turns[1].time: number is out of range"),
    (with_turn(note="long"), "bad_value", "game.turns[1].note: must have at most 3 "
     "characters, not 4"),
    (with_turn(even=3), "bad_value", "game.turns[1].even: must be even"),
    (with_turn(index=None), "bad_value", "game.turns[1].index: must be an integer"),
    (with_turn(more=1), "extra_field", "game.turns[1]: unexpected field 'more'"),
])
def test_each_mismatch_names_its_field(data: dict[str, Any], code: str, message: str
                                       ) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_value(Game, data, "game")
    assert str(info.value).startswith(message)
    assert info.value.code is ErrorCode(code)


def test_without_a_name_errors_start_at_the_fields() -> None:
    with pytest.raises(ProtocolError, match=r"^turns\[0\]: missing field 'time'$"):
        decode_value(Game, {**GOOD, "turns": [{"seat": "mrx"}]})
    with pytest.raises(ProtocolError, match=r"^missing field 'name'$"):
        decode_value(Game, {k: v for k, v in GOOD.items() if k != "name"})


def test_non_strict_ignores_unknown_keys_at_every_depth() -> None:
    data = {**with_turn(more=1), "new": {"a": 1}}
    assert decode_value(Game, data, strict=False) == decode_value(Game, GOOD)


def test_an_absent_field_takes_its_default_and_null_is_checked() -> None:
    assert decode_value(Turn, {"seat": "d1", "time": 0}).index is None
    assert decode_value(Turn, {"seat": "d1", "time": 0, "index": 7}).index == 7


def test_a_type_the_decoder_does_not_know_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="does not know"):
        decode_value(tuple[int, ...], [1])


def test_messages_decode_as_before() -> None:
    with pytest.raises(ProtocolError, match=r"^hello.protocol: expected an integer, got a "
                       "string$"):
        decode('{"type": "hello", "protocol": "1", "name": "x"}')
    with pytest.raises(ProtocolError, match="number is out of range"):
        decode('{"type": "start_match", "rules": "classic", "mrx": "a", "detectives": ["b"],'
               ' "time_control": {"move_s": 1' + "0" * 400 + '}}')
    newer = decode('{"type": "move_ok", "game": "g", "turn": 1, "seat": "mrx", '
                   '"move": "taxi:1", "later": {"x": 1}}', strict=False)
    assert newer.TYPE == "move_ok"
