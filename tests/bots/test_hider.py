"""The ``hider`` Mister X: legal moves, seat view only, reproducible, exact random model."""

from __future__ import annotations

import random
from typing import Literal

import pytest

from bots.arena import play_game
from bots.base import BotRoleError
from bots.hider import HiderBot, _random_detectives
from bots.registry import BotOptionError, bot_from_spec, make_bot
from game import BUILTIN, Move, State, Termination, from_text, load_ruleset, new_game
from game.views import view_from_dict


def mrx_position(name: str, seed: int) -> State:
    """A random unfinished position with Mister X to move."""
    rng = random.Random(seed)
    state = new_game(name, seed)
    for _ in range(rng.randrange(0, 30)):
        nxt = state.apply_unchecked(rng.choice(state.legal_moves()))
        if nxt.outcome is not None:
            break
        state = nxt
    while state.to_move != 0:
        state = state.apply_unchecked(state.legal_moves()[0])
        assert state.outcome is None
    return state


@pytest.mark.parametrize("name", BUILTIN)
def test_returns_legal_moves_on_every_ruleset(name: str) -> None:
    bot = HiderBot(seed=1, depth=2)
    for seed in range(3):
        state = mrx_position(name, seed)
        move = bot.choose(state.view(0), state.legal_moves())
        assert move in state.legal_moves()


@pytest.mark.parametrize("spec", ["hider:depth=2", "hider:model=random",
                                  "hider:depth=2,model=mass", "hider:depth=2,blend=1"])
def test_full_games_end_without_forfeit(spec: str) -> None:
    for seed, detectives in ((1, "random"), (2, "alphabeta:depth=2,time=0")):
        result = play_game("grid5", bot_from_spec(spec), [bot_from_spec(detectives)],
                           seed=seed)
        assert result.outcome.termination is not Termination.ILLEGAL_MOVE
        assert result.outcome.winner is not None


def test_more_detectives_search_one_round() -> None:
    rules = load_ruleset("grid5").with_detectives(4)
    result = play_game(rules, HiderBot(seed=3), [make_bot("random", seed=4)], seed=5)
    assert result.outcome.termination is not Termination.ILLEGAL_MOVE


def test_same_seed_same_game() -> None:
    def moves(seed: int) -> list[tuple[int, Move]]:
        return play_game("grid5", HiderBot(seed=99), [make_bot("random")], seed=seed).moves

    assert moves(11) == moves(11)
    assert moves(11) != moves(12)


def test_decides_from_its_view_alone() -> None:
    # The view as a network client receives it (to_dict, then rebuilt) gives the same move.
    for seed in range(4):
        state = mrx_position("grid5", seed)
        view = state.view(0)
        wire = view_from_dict(view.to_dict(), state.rules)
        a = HiderBot(seed=5).choose(view, state.legal_moves())
        b = HiderBot(seed=5).choose(wire, state.legal_moves())
        assert a == b


def test_plays_mister_x_only() -> None:
    with pytest.raises(BotRoleError):
        HiderBot(seed=1).begin(load_ruleset("grid5"), [1, 2])


@pytest.mark.parametrize("options", [{"model": "psychic"}, {"depth": 0}, {"depth": 99},
                                     {"epsilon": 1.5}, {"prune": 1.0}, {"blend": -1.0},
                                     {"scale": 0.0}])
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(BotOptionError):
        HiderBot(seed=1, **options)  # type: ignore[arg-type]


def test_unknown_options_are_refused() -> None:
    with pytest.raises(BotOptionError, match="no option 'mix'"):
        bot_from_spec("hider:mix=1")


def test_exact_survival_against_random_detectives() -> None:
    # After Mister X's last move (15 entries) the detectives get one more turn.
    # Mister X on 1 (corner); d1 on 2 (moves to 1, 3 or 7), d2 on 6 (to 1, 7 or 11 unless
    # d1 took 7): survives 1/3 * 1/2 (d1 to 7) + 1/3 * 2/3 (d1 to 3) = 7/18.
    rules = load_ruleset("grid5")
    assert _random_detectives(rules, 15, 1, (2, 6), 0) == pytest.approx(7 / 18)
    assert _random_detectives(rules, 15, 1, (2, 25), 0) == pytest.approx(2 / 3)
    # A round earlier, Mister X picks the best of his moves.
    earlier = _random_detectives(rules, 14, 1, (2, 25), 0)
    assert 0.0 < earlier < 1.0


@pytest.mark.parametrize("model", ["chase", "mass", "random"])
def test_does_not_reveal_himself_next_to_a_detective(
        model: Literal["chase", "mass", "random"]) -> None:
    # Move 3 is a reveal: 8 and 12 are next to a detective, 14 and 18 are not.
    state = from_text("rules=grid5 turn=mrx mrx=13 det=3,11 log=taxi:7,taxi:13")
    move = HiderBot(seed=1, model=model).choose(state.view(0), state.legal_moves())
    assert move.to in (14, 18)
