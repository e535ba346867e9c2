"""The possible-location set of Mister X, from public information only."""

from __future__ import annotations

import random

from game import Move, Ticket, from_text, load_ruleset, new_game
from game.belief import after_mrx_move, initial_belief, step
from tests.game.moves import play


def test_initial_belief_is_start_cards_minus_detectives() -> None:
    rules = load_ruleset("classic")
    assert initial_belief(rules, [45]) == frozenset(rules.board.mrx_starts) - {45}
    grid = load_ruleset("grid5")
    assert initial_belief(grid, [1, 2]) == frozenset(range(3, 26))


def test_step_follows_the_ticket_and_skips_detectives() -> None:
    rules = load_ruleset("classic")
    assert step(rules, frozenset({104}), Ticket.TAXI, ()) == {86, 116}
    assert step(rules, frozenset({104}), Ticket.TAXI, (86,)) == {116}
    assert step(rules, frozenset({104}), Ticket.BUS, ()) == frozenset()
    assert step(rules, frozenset({1, 104}), Ticket.UNDERGROUND, ()) == {46}


def test_secret_step_includes_the_ferry_only_where_the_ruleset_has_it() -> None:
    assert 108 in step(load_ruleset("classic"), frozenset({115}), Ticket.SECRET, ())
    assert 108 not in step(load_ruleset("dash"), frozenset({115}), Ticket.SECRET, ())


def test_double_move_steps_each_leg_and_reveals_by_slot() -> None:
    rules = load_ruleset("classic")
    move = Move(Ticket.TAXI, 86, Ticket.BUS, 52)
    hidden = after_mrx_move(rules, frozenset({104}), move, 0, ())
    assert hidden == step(rules, frozenset({86, 116}), Ticket.BUS, ())
    assert after_mrx_move(rules, frozenset({104}), move, 1, ()) == {52}  # slot 3 revealed
    revealed_first = after_mrx_move(rules, frozenset({104}), move, 2, ())  # slots 3, 4
    assert revealed_first == step(rules, frozenset({86}), Ticket.BUS, ())


def test_detective_moves_remove_their_station() -> None:
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.5.2 det=117:10.8.4 possible=104")
    after = play(state, "taxi:86")
    assert after.possible_locations() == {86, 116}
    assert play(after, "taxi:116").possible_locations() == {86}


def test_memoised_chain_matches_step_by_step() -> None:
    rng = random.Random(7)
    state = new_game("classic", seed=7)
    states = [state]
    while state.outcome is None:
        state = state.apply_unchecked(rng.choice(state.legal_moves()))
        states.append(state)
    # Step by step (each parent already known) ...
    expected = [s.possible_locations() for s in states]
    # ... and all at once from a fresh replay of the same moves.
    replay = new_game("classic", seed=7)
    fresh = [replay]
    for _, move in states[-1].history():
        replay = replay.apply(move)
        fresh.append(replay)
    assert fresh[-1].possible_locations() == expected[-1]
    assert [s.possible_locations() for s in fresh] == expected
    assert all(s.mrx_station in p for s, p in zip(states, expected, strict=True))


def test_rebuilt_belief_of_a_position_is_a_superset() -> None:
    rng = random.Random(3)
    state = new_game("classic", seed=3)
    while state.outcome is None and state.move_number < 6:
        state = state.apply(rng.choice(state.legal_moves()))
    text = " ".join(p for p in repr(state)[7:-2].split() if not p.startswith("possible="))
    rebuilt = from_text(text).possible_locations()
    assert state.possible_locations() <= rebuilt
