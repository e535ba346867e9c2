"""The compiled kernel agrees with the reference engine move for move."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bots.mcts import kernel as K
from bots.mcts.compact import compact_state, move_key, to_move
from game import Outcome, State, Termination, from_text, load_ruleset, new_game

_OUTCOMES = {K.OUT_CAUGHT: Termination.CAUGHT, K.OUT_SURVIVED: Termination.SURVIVED,
             K.OUT_CORNERED: Termination.CORNERED, K.OUT_STUCK: Termination.DETECTIVES_STUCK}

GAMES = {"grid5": 400, "warwick": 150, "dash": 150, "bristol": 80, "classic": 80}


def _buffer(tb: K.Tables) -> np.ndarray:
    """A move list as long as any position's."""
    return np.zeros((K.max_bound_from(tb), 4), np.int32)


def _assert_same(state: State, st: np.ndarray) -> None:
    k = state.n_detectives
    assert tuple(st[K.ST_POS:K.ST_POS + k + 1]) == state.positions
    assert tuple(map(tuple, st[K.ST_POS + k + 1:].reshape(k + 1, 5))) == state.tickets
    assert st[K.ST_LOG] == len(state.log)
    if state.outcome is None:
        assert st[K.ST_OUT] == K.OUT_NONE and st[K.ST_TO_MOVE] == state.to_move
    else:
        assert _OUTCOMES[int(st[K.ST_OUT])] is state.outcome.termination


def _play_both(state: State, rng: random.Random, tb: K.Tables,
               out: np.ndarray) -> tuple[int, Outcome | None]:
    st = compact_state(state)
    plies = 0
    while state.outcome is None:
        n = K.search_moves(tb, st, out, False)  # unfiltered: every legal move
        moves = [to_move(out[i]) for i in range(n)]
        assert moves == list(state.legal_moves()), f"after {plies} plies: {state!r}"
        move = rng.choice(moves)
        state = state.apply(move)
        K.apply_move(tb, st, *move_key(move))
        _assert_same(state, st)
        plies += 1
    assert K.search_moves(tb, st, out, False) == 0
    return plies, state.outcome


@pytest.mark.parametrize("name", list(GAMES))
def test_kernel_matches_engine_on_random_games(name: str) -> None:
    rules = load_ruleset(name)
    tb = K.tables_for(rules)
    out = _buffer(tb)
    rng = random.Random(2024)
    endings: set[Termination] = set()
    for seed in range(GAMES[name]):
        _, outcome = _play_both(new_game(rules, seed), rng, tb, out)
        assert outcome is not None
        endings.add(outcome.termination)
    assert Termination.CAUGHT in endings and len(endings) >= 2


def test_kernel_matches_engine_with_fewer_detectives() -> None:
    rules = load_ruleset("classic").with_detectives(2)
    tb = K.tables_for(rules)
    out = _buffer(tb)
    rng = random.Random(5)
    for seed in range(60):
        _play_both(new_game(rules, seed), rng, tb, out)


@pytest.mark.parametrize("name", ["classic", "grid5"])
def test_filtered_moves_are_legal_and_drop_early_secrets(name: str) -> None:
    rules = load_ruleset(name)
    tb = K.tables_for(rules)
    out = _buffer(tb)
    state = new_game(rules, 11)
    st = compact_state(state)
    n = K.search_moves(tb, st, out, True)
    filtered = {to_move(out[i]) for i in range(n)}
    assert filtered and filtered <= set(state.legal_moves())
    # Rule of the filter: no secret ticket before the first reveal, no unthreatened doubles.
    assert all(m.ticket != 3 and not m.is_double for m in filtered)


@pytest.mark.parametrize("name", list(GAMES))
def test_playouts_finish_and_are_seeded(name: str) -> None:
    rules = load_ruleset(name)
    tb = K.tables_for(rules)
    st = compact_state(new_game(rules, 3))
    first = K.random_playouts(tb, st, 300, 0.2, True, 7)
    assert first == K.random_playouts(tb, st, 300, 0.2, True, 7)
    assert 0 <= first <= 300


# ---------------------------------------------------------------- stuck detectives

_SCARCE = {
    # Detectives run out of tickets within a few rounds: games end stuck, often right after
    # the last detective of a round moves, and single detectives are skipped before that.
    "scarce-london": 'extends = "classic"\nname = "scarce-london"\n'
                     'detective_tickets = { taxi = 3, bus = 2, underground = 1 }\n',
    "scarce-grid": 'extends = "grid5"\nname = "scarce-grid"\ndetectives = 4\n'
                   'detective_tickets = { taxi = 4 }\n',
    "hidden-grid": 'extends = "grid5"\nname = "hidden-grid"\nreveal_moves = []\n',
}


@pytest.mark.parametrize("name", list(_SCARCE))
def test_kernel_matches_engine_when_detectives_get_stuck(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_text(_SCARCE[name])
    rules = load_ruleset(str(path))
    tb = K.tables_for(rules)
    out = _buffer(tb)
    rng = random.Random(9)
    endings: set[Termination] = set()
    for seed in range(150):
        _, outcome = _play_both(new_game(rules, seed), rng, tb, out)
        assert outcome is not None
        endings.add(outcome.termination)
    if name != "hidden-grid":
        assert Termination.DETECTIVES_STUCK in endings


_NEAR_STUCK = [
    # The reproduction: the only detective spends its last ticket.
    "rules=bristol turn=mrx mrx=86:4.3.3.5.2 det=108:1.0.0 possible=86",
    # d2 holds tickets but is boxed in once d1 takes station 58.
    "rules=classic turn=mrx mrx=104:4.3.3.0.0 det=57:1.0.0,1:10.8.4,8:0.0.0,9:0.0.0,46:0.0.0 "
    "possible=104",
    # d1 is stuck from the start and skipped; d2 has two tickets left.
    "rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0,13:1.1.0 possible=104",
    # Mister X nearly out of tickets: cornered or handed one by a detective.
    "rules=classic turn=d1 mrx=104:0.1.0.0.0 det=1:1.1.0,13:1.0.0 possible=104",
]


@pytest.mark.parametrize("text", _NEAR_STUCK)
def test_kernel_matches_engine_from_positions_near_stuck(text: str) -> None:
    start = from_text(text)
    assert start.outcome is None
    tb = K.tables_for(start.rules)
    out = _buffer(tb)
    rng = random.Random(3)
    endings = set()
    for _ in range(40):
        _, outcome = _play_both(start, rng, tb, out)
        assert outcome is not None
        endings.add(outcome.termination)
    assert endings & {Termination.DETECTIVES_STUCK, Termination.CORNERED}


_SET_UP = [
    ("rules=bristol turn=mrx mrx=86:4.3.3.5.2 det=105:0.0.0 possible=86",
     Termination.DETECTIVES_STUCK),
    ("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=58:0.0.0,1:10.8.4,8:0.0.0,9:0.0.0,46:0.0.0 "
     "possible=104", Termination.DETECTIVES_STUCK),
    ("rules=classic turn=mrx mrx=104:0.0.0.0.0 det=1:0.0.0 possible=104",
     Termination.DETECTIVES_STUCK),
    ("rules=classic turn=mrx mrx=1:1.0.0.0.0 det=8:10.8.4,9:10.8.4 possible=1",
     Termination.CORNERED),
    ("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0,13:1.0.0 possible=104", None),
]


@pytest.mark.parametrize(("text", "expected"), _SET_UP)
def test_kernel_new_round_judges_set_up_positions_like_the_engine(
        text: str, expected: Termination | None) -> None:
    state = from_text(text)
    assert (state.outcome.termination if state.outcome else None) is expected
    tb = K.tables_for(state.rules)
    st = compact_state(state)
    st[K.ST_OUT] = K.OUT_NONE
    K.new_round(tb, st)
    _assert_same(state, st)


# ---------------------------------------------------------------- search steps


@pytest.mark.parametrize("name", [*GAMES, *_SCARCE])
@pytest.mark.parametrize("filtering", [False, True])
def test_step_is_apply_move_then_search_moves(name: str, filtering: bool,
                                              tmp_path: Path) -> None:
    if name in _SCARCE:
        (tmp_path / f"{name}.toml").write_text(_SCARCE[name])
        name = str(tmp_path / f"{name}.toml")
    rules = load_ruleset(name)
    tb = K.tables_for(rules)
    out = _buffer(tb)
    moves = _buffer(tb)
    rng = random.Random(17)
    for seed in range(40):
        st = compact_state(new_game(rules, seed))
        ref = st.copy()
        n = K.search_moves(tb, st, moves, filtering)
        while n > 0:
            assert n == K.search_moves(tb, ref, out, filtering)
            assert (moves[:n] == out[:n]).all()
            i = rng.randrange(n)
            t1, d1, t2, d2 = (int(x) for x in out[i])
            K.apply_move(tb, ref, t1, d1, t2, d2)
            n = K.step(tb, st, moves, i, filtering)
            assert (st == ref).all()
        assert ref[K.ST_OUT] != K.OUT_NONE and K.search_moves(tb, ref, out, filtering) == 0
