"""Playing moves by their text, for the rules tests."""

from __future__ import annotations

from game import Move, State


def play(state: State, *moves: str) -> State:
    """``state`` after ``moves`` (texts such as ``"taxi:8"``), each applied in turn."""
    for text in moves:
        state = state.apply(Move.parse(text))
    return state
