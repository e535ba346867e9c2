"""Explicit positions: text round trip and every invalid setup rejected."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import MoveParseError, PositionError, Termination, Winner, from_text, new_game, to_text
from game.moves import Move

POSITION_EXAMPLES = 200

TEXT = "rules=classic turn=d2 mrx=58:4.3.3.2.5 det=13:10.8.4,26:9.8.4 log=taxi:46,bus:58"


def test_round_trip_of_a_written_position() -> None:
    state = from_text(TEXT)
    assert state.to_move == 2 and state.positions == (58, 13, 26)
    assert state.tickets[2] == (9, 8, 4, 0, 0)
    again = from_text(to_text(state))
    assert to_text(again) == to_text(state)
    assert again.possible_locations() == state.possible_locations()


@pytest.mark.parametrize("ruleset", ["classic", "dash", "warwick", "grid5", "bristol"])
def test_round_trip_along_random_games(ruleset: str) -> None:
    rng = random.Random(ruleset)
    state = new_game(ruleset, seed=4)
    while state.outcome is None:
        copy = from_text(to_text(state))
        assert copy.positions == state.positions and copy.tickets == state.tickets
        assert copy.log == state.log and copy.to_move == state.to_move
        assert copy.possible_locations() == state.possible_locations()
        assert set(copy.legal_moves()) == set(state.legal_moves())
        state = state.apply(rng.choice(state.legal_moves()))


def test_mister_x_on_a_detectives_station_is_a_caught_position() -> None:
    state = from_text("rules=classic turn=d1 mrx=13:4.3.3.2.5 det=13:10.8.4 log=taxi:13 "
                      "possible=13")
    assert state.outcome is not None
    assert (state.outcome.winner, state.outcome.termination) == (
        Winner.DETECTIVES, Termination.CAUGHT)
    assert from_text(to_text(state)).outcome == state.outcome


@pytest.mark.parametrize(("text", "message"), [
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4,13:10.8.4",
     "two detectives on one station"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4.1.0", "cannot hold secret or double"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4.0.1", "cannot hold secret or double"),
    ("rules=classic mrx=45:4.3.3.2.5 det=200:10.8.4", "unknown station 200"),
    ("rules=classic mrx=0:4.3.3.2.5 det=13:10.8.4", "unknown station 0"),
    ("rules=classic turn=d3 mrx=45:4.3.3.2.5 det=13:10.8.4", "only 1 detectives"),
    ("rules=classic turn=x mrx=45:4.3.3.2.5 det=13:10.8.4", "turn"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 log=" + ",".join(["taxi:45"] * 25),
     "more than max_moves=24"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 log=taxi:44", "last station 44"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 log=taxi:999", "unknown station 999"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 log=rocket:45", "log entry"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 log=double:45", "not 'double'"),
    ("rules=classic mrx=45:4.3 det=13:10.8.4", "3 or 5"),
    ("rules=classic mrx=45:4.3.-3 det=13:10.8.4", "non-negative"),
    ("rules=classic mrx=x det=13:10.8.4", "mrx='x'"),
    ("rules=classic mrx=45 det=13:10.8.4", "needs ticket counts"),
    ("rules=warwick mrx=45:1.1.1 det=13", "holds tickets"),
    ("rules=dash mrx=45:4.3.3.2.5 det=13:10.8.4", "no double moves"),
    ("rules=chess mrx=45 det=13", "unknown ruleset"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 colour=red", "unknown fields"),
    ("rules=classic rules=dash", "repeated"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 possible=1.2", "does not contain"),
    ("rules=classic mrx=45:4.3.3.2.5 det=13:10.8.4 possible=a", "possible"),
    ("rules=classic mrx=45:4.3.3.2.5 det=", "allows 1..5 detectives, not 0"),
])
def test_invalid_setups_are_rejected(text: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        from_text(text)


def test_non_string_position() -> None:
    with pytest.raises(PositionError):
        from_text(None)  # type: ignore[arg-type]


@given(st.text(max_size=200))
def test_fuzzed_position_text_raises_only_position_error(text: str) -> None:
    with contextlib.suppress(PositionError):
        from_text(text)


@given(st.text(max_size=80))
def test_fuzzed_move_text_raises_only_move_parse_error(text: str) -> None:
    try:
        move = Move.parse(text)
    except MoveParseError:
        return
    assert Move.parse(str(move)) == move


@given(st.from_regex(r"\A(taxi|bus|underground|secret|black|x2|ug|double|):-?[0-9]{0,4}"
                     r"(\+(taxi|bus|secret):[0-9]{1,3})?\Z"))
def test_fuzzed_near_miss_moves(text: str) -> None:
    try:
        move = Move.parse(text)
    except MoveParseError:
        return
    assert Move.parse(str(move)) == move


station = st.integers(-1, 201).map(str)
tickets = st.lists(st.integers(-1, 12).map(str), min_size=0, max_size=6).map(".".join)
piece = st.one_of(station, st.tuples(station, tickets).map(":".join))
log_entry = st.tuples(st.sampled_from(["taxi", "bus", "secret", "double", "boat"]),
                      station).map(":".join)
field_values = {
    "rules": st.sampled_from(["classic", "warwick", "grid5", "dash", "nope"]),
    "turn": st.sampled_from(["mrx", "d1", "d2", "d6", "d0", "x"]),
    "mrx": piece,
    "det": st.lists(piece, max_size=6).map(",".join),
    "log": st.one_of(st.just("-"), st.lists(log_entry, max_size=26).map(",".join)),
    "possible": st.lists(station, max_size=4).map(".".join),
}


@settings(max_examples=POSITION_EXAMPLES)
@given(st.fixed_dictionaries({}, optional=field_values))
def test_fuzzed_structured_positions(fields: dict[str, str]) -> None:
    text = " ".join(f"{k}={v}" for k, v in fields.items())
    try:
        state = from_text(text)
    except PositionError:
        return
    assert from_text(to_text(state)).positions == state.positions
