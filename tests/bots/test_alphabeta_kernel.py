"""Alpha-Beta on the compiled kernel against its pure-Python reference.

With the transposition table off the kernel search visits the reference's nodes in the
reference's order: same value, same move, same node count. With the table on, the same
value and a move the reference values as highly (stored bounds change what failing nodes
return, and with it the order of equal-valued root moves). Same seed, same
determinizations.
"""

from __future__ import annotations

import math
import random

import pytest

from bots.alphabeta import AlphaBetaBot
from bots.registry import BotOptionError, make_bot
from game import Move, State, View, new_game, state_from_view

SAMPLES = 2
#: (ruleset, depth, random games): each game gives a Mister X and a detective position.
CASES = [("grid5", 4, 60), ("classic", 2, 50), ("classic", 3, 25)]


def positions(name: str, games: int, seed: int) -> list[State]:
    """Unfinished positions with a choice to make, Mister X's and a detective's from each
    seeded random game."""
    rng = random.Random(seed)
    out: list[State] = []
    for _ in range(games):
        state = new_game(name, rng.getrandbits(32))
        for _ in range(rng.randrange(0, 50)):
            nxt = state.apply_unchecked(rng.choice(state.legal_moves()))
            if nxt.outcome is not None:
                break
            state = nxt
        for mrx in (True, False):
            found = state
            while found.outcome is None and (found.to_move == 0) != mrx:
                found = found.apply_unchecked(rng.choice(found.legal_moves()))
            if found.outcome is None and len(found.legal_moves()) > 1:
                out.append(found)
    return out


def bot(profile: str, depth: int, seed: int, tt_bits: int = 18) -> AlphaBetaBot:
    made = AlphaBetaBot(seed=seed, depth=depth, samples=SAMPLES, profile=profile)  # type: ignore[arg-type]
    made.tt_bits = tt_bits
    return made


def reference_value(view: View, move: Move, seed: int, depth: int) -> float:
    """The reference's exact value of ``move`` (mean over the same determinizations)."""
    ref = bot("reference", depth, seed)
    roots = ref._roots(view)
    values = [ref._search(root.apply_unchecked(move), depth - 1, -math.inf, math.inf, 1)
              for root in roots]
    return sum(values) / len(roots)


@pytest.mark.parametrize(("name", "depth", "games"), CASES)
def test_kernel_search_agrees_with_the_reference(name: str, depth: int, games: int) -> None:
    states = positions(name, games, seed=27)
    assert sum(s.to_move == 0 for s in states) >= games // 2 <= sum(s.to_move for s in states)
    for i, state in enumerate(states):
        view, legal = state.view(state.to_move), state.legal_moves()
        where = f"{name} position {i}: {state.to_text()}"
        ref = bot("reference", depth, i)
        move = ref.choose(view, legal)
        same = bot("kernel", depth, i, tt_bits=0)
        assert same.choose(view, legal) == move, where
        assert same.value == pytest.approx(ref.value, rel=1e-12, abs=1e-9), where
        assert (same.nodes, same.reached_depth) == (ref.nodes, ref.reached_depth), where
        fast = bot("kernel", depth, i)
        chosen = fast.choose(view, legal)
        assert fast.value == pytest.approx(ref.value, rel=1e-12, abs=1e-9), where
        assert fast.reached_depth == ref.reached_depth, where
        if chosen != move:
            value = reference_value(view, chosen, i, ref.reached_depth)
            assert value == pytest.approx(ref.value, rel=1e-12, abs=1e-9), where


@pytest.mark.parametrize("name", ["grid5", "classic"])
@pytest.mark.parametrize("filtering", [True, False])
def test_kernel_orders_the_root_moves_as_the_reference(name: str, filtering: bool) -> None:
    """The kernel generates and orders the root moves itself: the reference's root order
    of the legal moves (Mister X's filtered), ties in the engine's order."""
    from bots.alphabeta_kernel import KernelSearch

    for i, state in enumerate(positions(name, 20, seed=5)):
        view, legal = state.view(state.to_move), state.legal_moves()
        ref = AlphaBetaBot(seed=i, filter=filtering, profile="reference")
        stations = ref._stations(view)
        expected = ref._ordered(state_from_view(view, stations[0]), list(legal), root=True)
        search = KernelSearch(state.rules, state.n_detectives, ref.weights, filtering,
                              ref.width)
        found = search.search(view, stations, 0)
        assert (found.depth, found.move) == (0, expected[0]), state.to_text()
        assert search.root_moves() == expected, state.to_text()


def test_a_new_move_ignores_the_last_ones_table() -> None:
    """The table is not emptied between moves, yet a search repeated gives the same
    result (the entries of earlier moves no longer match)."""
    state = new_game("classic", 4)
    view = state.view(0)
    searcher = bot("kernel", 5, 1)
    first = searcher.choose(view, state.legal_moves()), searcher.value, searcher.nodes
    again = searcher.choose(view, state.legal_moves()), searcher.value, searcher.nodes
    assert again == first


def test_the_table_saves_nodes() -> None:
    start = new_game("classic", 4)
    state = start.apply_unchecked(start.legal_moves()[0])  # a detective to move
    view, legal = state.view(state.to_move), state.legal_moves()
    plain, fast = bot("kernel", 7, 1, tt_bits=0), bot("kernel", 7, 1)
    assert plain.choose(view, legal) in legal and fast.choose(view, legal) in legal
    assert fast.value == pytest.approx(plain.value)
    assert fast.nodes < plain.nodes


def test_profile_option() -> None:
    made = make_bot("alphabeta", 1, {"profile": "reference", "depth": "2"})
    assert isinstance(made, AlphaBetaBot) and made.profile == "reference"
    assert "profile=reference" in made.describe()
    assert AlphaBetaBot().profile == "kernel"
    with pytest.raises(BotOptionError, match="profile"):
        make_bot("alphabeta", 1, {"profile": "fast"})


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_the_merge_sort_orders_as_numpys_stable_argsort(dtype: str) -> None:
    """The search's own stable argsort (move lists longer than insertion sort's, root
    re-sorts) gives numpy's stable order: ties in index order, every length up to 300."""
    import numpy as np

    from bots.alphabeta_kernel import _argsort_stable

    rng = np.random.default_rng(8)
    for n in [*range(0, 40), 63, 64, 65, 127, 128, 129, 300]:
        keys = rng.integers(-5, 6, n + 3).astype(dtype)  # few values: many ties
        if dtype == "float64" and n:
            keys[rng.integers(0, n)] = -np.inf
        got = _argsort_stable(keys, n)
        assert got.tolist() == np.argsort(keys[:n], kind="mergesort").tolist(), n
