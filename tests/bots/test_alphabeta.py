"""The Alpha-Beta bot: legal moves within budget, reproducibility, no peeking, tactics."""

from __future__ import annotations

import time

import pytest

from bots.alphabeta import AlphaBetaBot
from bots.eval import filter_mrx_moves
from bots.registry import BotOptionError, make_bot
from game import BUILTIN, from_text, new_game
from tests.bots.test_mcts import hidden_twin, random_position


@pytest.mark.parametrize("name", BUILTIN)
def test_returns_legal_moves_on_random_positions(name: str) -> None:
    bot = AlphaBetaBot(seed=3, depth=2, samples=2)
    for seed in range(4):
        state = random_position(name, seed)
        move = bot.choose(state.view(state.to_move), state.legal_moves())
        assert move in state.legal_moves()


@pytest.mark.parametrize("name", ["classic", "warwick", "grid5"])
def test_respects_the_time_budget(name: str) -> None:
    bot = AlphaBetaBot(seed=1, time=0.3)
    state = random_position(name, 6)
    started = time.process_time()
    move = bot.choose(state.view(state.to_move), state.legal_moves())
    assert move in state.legal_moves()
    # The budget is wall time, which on a loaded machine is mostly spent waiting for a
    # core; the CPU time of a search that stops at its deadline is under the budget (plus
    # the last step's overrun) whatever the load, that of one that ignores it is not.
    assert time.process_time() - started < 0.3 + 0.5
    assert bot.reached_depth >= 1


def test_fixed_depth_reproduces_the_move() -> None:
    state = random_position("classic", 9)
    view = state.view(state.to_move)
    moves = {AlphaBetaBot(seed=4, depth=3).choose(view, state.legal_moves()) for _ in range(3)}
    assert len(moves) == 1


@pytest.mark.parametrize("seed", [1, 2])
def test_detective_cannot_peek(seed: int) -> None:
    real, twin = hidden_twin(seed)
    view_a, view_b = real.view(real.to_move), twin.view(twin.to_move)
    assert view_a.to_dict() == view_b.to_dict()
    a = AlphaBetaBot(seed=7, depth=2).choose(view_a, real.legal_moves())
    b = AlphaBetaBot(seed=7, depth=2).choose(view_b, twin.legal_moves())
    assert a == b


def test_detective_takes_a_capture() -> None:
    # Mister X revealed at 12 on move 3; detective 1 stands next to him.
    state = from_text("rules=grid5 turn=d1 mrx=12 det=7,25 log=taxi:6,taxi:11,taxi:12 "
                      "possible=12")
    move = AlphaBetaBot(seed=1, depth=2).choose(state.view(1), state.legal_moves())
    assert move.to == 12


def test_mrx_avoids_an_adjacent_capture_on_a_grid() -> None:
    state = from_text("rules=grid5 turn=mrx mrx=7 det=2,6 log=-")
    move = AlphaBetaBot(seed=2, depth=3).choose(state.view(0), state.legal_moves())
    assert move.to in (8, 12)


def test_filter_keeps_doubles_and_secrets_out_early() -> None:
    state = new_game("classic", 4)
    kept = filter_mrx_moves(state, state.legal_moves())
    assert kept and all(not m.is_double and m.ticket != 3 for m in kept)


def test_options_are_checked() -> None:
    with pytest.raises(BotOptionError, match="samples"):
        AlphaBetaBot(samples=0)
    bot = make_bot("alphabeta", 1, {"depth": "3", "width": "6"})
    assert isinstance(bot, AlphaBetaBot) and bot.depth == 3 and bot.width == 6
