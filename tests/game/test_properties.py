"""Hypothesis properties over random legal games on every ruleset."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from game import BUILTIN, DetectiveView, State, from_text, load_ruleset, new_game, to_text
from game.outcome import Termination

RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}

games = st.tuples(st.sampled_from(BUILTIN), st.integers(0, 2**32), st.integers(1, 5))


def random_game(ruleset: str, seed: int, detectives: int) -> list[State]:
    rules = load_ruleset(ruleset)
    k = min(max(detectives, rules.min_detectives), rules.max_detectives)
    rng = random.Random(seed)
    state = new_game(rules, seed, detectives=k)
    states = [state]
    while state.outcome is None:
        state = state.apply(rng.choice(state.legal_moves()))
        states.append(state)
        assert len(states) < 10_000
    return states


@settings(max_examples=40)
@given(games)
def test_random_games_end_by_a_rule_within_the_game_length(game: tuple[str, int, int]) -> None:
    states = random_game(*game)
    final = states[-1]
    assert final.outcome is not None and final.outcome.termination in RULE_ENDINGS
    assert final.move_number <= final.rules.max_moves
    rounds = final.rules.max_moves * (final.n_detectives + 1)
    assert len(states) - 1 <= rounds
    if final.outcome.termination is Termination.SURVIVED:
        assert final.move_number == final.rules.max_moves


@settings(max_examples=40)
@given(games)
def test_belief_always_contains_the_true_position(game: tuple[str, int, int]) -> None:
    for state in random_game(*game):
        assert state.mrx_station in state.possible_locations()


@settings(max_examples=30)
@given(games)
def test_detective_views_never_reveal_mrx_off_reveal(game: tuple[str, int, int]) -> None:
    for state in random_game(*game):
        reveals = state.rules.reveal_moves
        for seat in [None, *range(1, state.n_detectives + 1)]:
            view = state.view(seat)
            assert isinstance(view, DetectiveView) and not hasattr(view, "mrx")
            data = view.to_dict()
            assert "mrx" not in data
            for slot, entry in enumerate(data["log"], start=1):
                assert (entry["station"] is not None) == (slot in reveals)
            last = data["last_reveal"]
            assert last is None or last["move"] in reveals


@settings(max_examples=20)
@given(games)
def test_same_seed_same_game(game: tuple[str, int, int]) -> None:
    first = random_game(*game)
    second = random_game(*game)
    assert [to_text(s) for s in first] == [to_text(s) for s in second]
    assert first[-1].outcome == second[-1].outcome


@settings(max_examples=20)
@given(games, st.integers(0, 1000))
def test_positions_round_trip_mid_game(game: tuple[str, int, int], pick: int) -> None:
    states = random_game(*game)
    state = states[pick % len(states)]
    copy = from_text(to_text(state))
    assert (copy.positions, copy.tickets, copy.log, copy.to_move) == (
        state.positions, state.tickets, state.log, state.to_move)
    if state.outcome is None:
        assert copy.outcome is None
        assert set(copy.legal_moves()) == set(state.legal_moves())
