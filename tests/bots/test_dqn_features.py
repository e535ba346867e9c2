"""DQN encoders: shapes, action masks, and no leak of Mister X's hidden station."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots.dqn.features import (
    CANDIDATE_FEATURES,
    Direction,
    GraphEncoder,
    GridEncoder,
    move_of,
    observe,
)
from game import Move, State, Ticket, load_ruleset, new_game
from game.belief import step


def _play_until_hidden(rules: str, seed: int) -> State:
    """A detective-to-move state off a reveal, with at least two possible stations."""
    rng = random.Random(seed)
    for attempt in range(50):
        state = new_game(rules, seed * 100 + attempt)
        while state.outcome is None:
            if state.to_move == 1 and len(state.possible_locations()) > 1 and state.move_number:
                return state
            state = state.apply_unchecked(rng.choice(state.legal_moves()))
    raise AssertionError("no hidden position found")


@pytest.mark.parametrize(("version", "scalars"), [(1, 4), (2, 5)])
def test_grid_shapes_and_mask_match_legal_moves(version: int, scalars: int) -> None:
    rules = load_ruleset("grid5")
    enc = GridEncoder(rules, version)
    rng = random.Random(4)
    for seed in range(20):
        state = new_game(rules, seed)
        while state.outcome is None:
            view = state.view(state.to_move)
            legal = state.legal_moves()
            obs = observe(enc, view, legal)
            assert obs.state.shape == (4 * 81 + scalars,)
            assert obs.mask is not None and obs.mask.shape == (4,)
            assert obs.mask.sum() == len(legal)
            for action in np.flatnonzero(obs.mask):
                assert move_of(enc, view, legal, int(action)) in legal
            state = state.apply_unchecked(rng.choice(legal))


def test_grid_directions_follow_rows_and_columns() -> None:
    enc = GridEncoder(load_ruleset("grid5"))
    assert enc.direction(13, Move(Ticket.TAXI, 8)) is Direction.UP
    assert enc.direction(13, Move(Ticket.TAXI, 18)) is Direction.DOWN
    assert enc.direction(13, Move(Ticket.TAXI, 12)) is Direction.LEFT
    assert enc.direction(13, Move(Ticket.TAXI, 14)) is Direction.RIGHT
    with pytest.raises(ValueError):
        enc.direction(5, Move(Ticket.TAXI, 6))  # end of a row is not adjacent to the next
    corner = enc.mask(1, [Move(Ticket.TAXI, 2), Move(Ticket.TAXI, 6)])
    assert corner.tolist() == [False, True, False, True]


def test_grid_planes_are_centred_on_the_acting_piece() -> None:
    state = new_game("grid5", seed=2)
    enc = GridEncoder(state.rules)
    centre, e = 40, 81  # the 9x9 frame's middle cell
    x = enc.encode(state.view(0))
    assert x[centre] == 1.0  # Mister X sees himself
    assert x[2 * e:3 * e].sum() == 2.0  # both detectives, elsewhere
    assert x[2 * e + centre] == 0.0
    assert x[3 * e:4 * e].sum() == 25.0  # the board's cells
    state = state.apply(state.legal_moves()[0])
    y = enc.encode(state.view(1))
    assert y[2 * e:3 * e].sum() == 1.0  # only the other detective
    assert y[:e].sum() == pytest.approx(1.0)  # a probability over the possible set
    r0, c0 = divmod(state.detective_stations[0] - 1, 5)
    r1, c1 = divmod(state.detective_stations[1] - 1, 5)
    assert y[2 * e + (r1 - r0 + 4) * 9 + (c1 - c0 + 4)] == 1.0


def test_walk_posterior_is_a_probability_over_the_possible_set() -> None:
    rng = random.Random(6)
    enc = GridEncoder(load_ruleset("grid5"))
    for seed in range(10):
        state = new_game("grid5", seed)
        while state.outcome is None:
            view = state.view(1)
            p = enc.walk_posterior(view)
            assert p.sum() == pytest.approx(1.0)
            assert set(np.flatnonzero(p > 0)) <= view.possible
            if len(view.possible) == 1:
                assert p[next(iter(view.possible))] == pytest.approx(1.0)
            state = state.apply_unchecked(rng.choice(state.legal_moves()))


def test_walk_posterior_puts_the_centre_of_a_spread_above_its_rim() -> None:
    enc = GridEncoder(load_ruleset("grid5"))
    state = new_game("grid5", seed=0)
    # Mister X revealed on the middle cell (13) at slot 3, then two hidden moves.
    hidden = _with_log(state, reveal_at=13, hidden_moves=2, detectives=(1, 25))
    view = hidden.view(1)
    p = enc.walk_posterior(view)
    assert {13, 3, 23, 11, 15, 7, 9, 17, 19} <= view.possible
    assert p[13] > p[7] > p[3]  # back where he was > diagonal (two paths) > straight (one)
    assert enc.encode(view)[:81].sum() == pytest.approx(1.0)


def test_turn_order_scalar_tells_the_detectives_apart() -> None:
    enc = GridEncoder(load_ruleset("grid5"))
    state = new_game("grid5", seed=1)
    state = state.apply(state.legal_moves()[0])
    first = enc.encode(state.view(1))
    state = state.apply(state.legal_moves()[0])
    second = enc.encode(state.view(2))
    assert (first[-1], second[-1]) == (0.5, 0.0)
    assert GridEncoder(state.rules, 1).state_dim == enc.state_dim - 1


def test_unknown_grid_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version 3"):
        GridEncoder(load_ruleset("grid5"), 3)


def _with_log(state: State, reveal_at: int, hidden_moves: int,
              detectives: tuple[int, int]) -> State:
    """A grid5 state whose log reveals ``reveal_at`` at slot 3, then ``hidden_moves`` taxi
    moves; detective 1 to move; the possible set as the engine computes it."""
    rules = state.rules
    log: list[tuple[Ticket, int]] = [(Ticket.TAXI, s) for s in (7, 8, reveal_at)]
    possible = frozenset((reveal_at,))
    for _ in range(hidden_moves):
        possible = step(rules, possible, Ticket.TAXI, detectives)
        log.append((Ticket.TAXI, reveal_at))
    return State.from_position(rules, (reveal_at, *detectives), state.tickets, tuple(log), 1,
                               possible)


def test_graph_shapes() -> None:
    state = new_game("classic", seed=5)
    enc = GraphEncoder(state.rules)
    obs = observe(enc, state.view(0), state.legal_moves())
    assert obs.state.shape == (enc.state_dim,)
    assert obs.cands is not None and obs.dests is not None
    assert obs.cands.shape == (len(state.legal_moves()), len(CANDIDATE_FEATURES))
    assert obs.dests.tolist() == [m.destination for m in state.legal_moves()]
    double = [i for i, m in enumerate(state.legal_moves()) if m.is_double]
    assert double and obs.cands[double, CANDIDATE_FEATURES.index("double")].all()


@pytest.mark.parametrize(("rules", "version"),
                         [("grid5", 1), ("grid5", 2), ("classic", 0), ("warwick", 0)])
def test_detective_input_ignores_hidden_mrx_station(rules: str, version: int) -> None:
    state = _play_until_hidden(rules, 3)
    view = state.view(1)
    others = sorted(view.possible - {state.mrx_station})
    twin = _moved(state, others[0], state.to_move)
    enc = GridEncoder(state.rules, version) if version else GraphEncoder(state.rules)
    a = observe(enc, view, state.legal_moves())
    b = observe(enc, twin.view(1), twin.legal_moves())
    assert np.array_equal(a.state, b.state)
    if a.cands is not None and b.cands is not None:
        assert np.array_equal(a.cands, b.cands)
    # Mister X's own input does change: the test can fail.
    mine, other = _moved(state, state.mrx_station, 0), _moved(state, others[0], 0)
    assert not np.array_equal(enc.encode(mine.view(0)), enc.encode(other.view(0)))


def _moved(state: State, mrx: int, to_move: int) -> State:
    """``state`` with Mister X on ``mrx`` and ``to_move`` to play; same public information."""
    return State.from_position(state.rules, (mrx, *state.detective_stations), state.tickets,
                               state.log, to_move, state.possible_locations())
