"""The ``hider`` Mister X: legal moves, seat view only, reproducible, exact random model."""

from __future__ import annotations

import random

import pytest

from bots.arena import play_game
from bots.base import BotRoleError
from bots.hider import HiderBot, _full_info, _maximin, _random_detectives, _tables
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
                                  "hider:depth=2,model=mass,grab=4,paranoid=1",
                                  "hider:depth=2,mix=1,cover=0.8,lc=1,live=1,setup=1,"
                                  "extend=1,w_surv=0.5"])
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
def test_does_not_reveal_himself_next_to_a_detective(model: str) -> None:
    # Move 3 is a reveal: 8 and 12 are next to a detective, 14 and 18 are not.
    state = from_text("rules=grid5 turn=mrx mrx=13 det=3,11 log=taxi:7,taxi:13")
    move = HiderBot(seed=1, model=model).choose(state.view(0), state.legal_moves())
    assert move.to in (14, 18)


def test_maximin_mixes_a_guessing_game() -> None:
    # He goes to a (worth 0.8 if missed) or b (0.4); the detective covers one of them.
    # Equilibrium: a with 0.4 / 1.2 = 1/3, so that either guess catches him equally often.
    weights = _maximin([[0.0, 0.8], [0.4, 0.0]])
    assert weights == pytest.approx([1 / 3, 2 / 3])
    assert _maximin([[0.5, 0.5], [0.2, 0.9]]) == pytest.approx([1.0, 0.0])  # a sure 0.5
    assert sum(_maximin([[0.3, 0.6, 0.1], [0.7, 0.2, 0.5], [0.4, 0.4, 0.4]])) == \
        pytest.approx(1.0)


def test_mix_randomises_a_covered_hidden_move() -> None:
    # Just seen in the corner 1: both exits (2, 6) are next to the detective on 7, who
    # guesses. The pure search always takes the same exit; with mix=1 he draws one.
    state = from_text("rules=grid5 turn=mrx mrx=1 det=7,24 log=taxi:3,taxi:2,taxi:1")
    legal = state.legal_moves()
    pure = {HiderBot(seed=i).choose(state.view(0), legal).to for i in range(20)}
    mixed = {HiderBot(seed=i, mix=True).choose(state.view(0), legal).to for i in range(20)}
    assert len(pure) == 1
    assert mixed == {2, 6}


def test_coverable_reveal_stations() -> None:
    rules = load_ruleset("grid5")
    bot = HiderBot(seed=1, cover=0.8)
    bot._tb = _tables(rules.board)
    assert bot._coverable(1, (8, 20))  # 8 -> 7 is next to both exits of the corner
    assert not bot._coverable(1, (14, 20))
    assert bot._coverable(13, (2, 24))  # 7 and 19 cover 8, 12 and 14, 18
    assert not bot._coverable(13, (1, 25))


def test_cover_avoids_a_reveal_the_detectives_can_cover() -> None:
    # Move 3 is a reveal. From 3 he can show himself on 2 or 8 (4 is next to the detective
    # on 5). On 8 the detectives can step to 4 and 12, next to all four of his
    # exits, so his next hidden move is a guess they can win; on 2 they cannot cover 1.
    state = from_text("rules=grid5 turn=mrx mrx=3 det=5,17 log=taxi:8,taxi:3")
    legal = state.legal_moves()
    bot = HiderBot(seed=1, cover=0.8)
    bot._tb = _tables(state.rules.board)
    assert bot._coverable(8, (5, 17)) and not bot._coverable(2, (5, 17))
    assert HiderBot(seed=1).choose(state.view(0), legal).to == 8
    assert HiderBot(seed=1, cover=0.8).choose(state.view(0), legal).to == 2


def test_full_information_survival() -> None:
    rules = load_ruleset("grid5")
    # Mister X to move in the corner 1, detectives next to both exits: caught this round.
    assert _full_info(rules, 5, 1, (3, 11), 2) == 6
    # After his last move he only has to outlast one detective turn.
    assert _full_info(rules, 15, 13, (1, 25), 0) == 16
    # Detectives who see him catch him on a 5x5 grid well before move 15.
    assert _full_info(rules, 0, 13, (1, 25), 2) <= 8


def test_parity_is_known_on_bipartite_boards_only() -> None:
    assert _tables(load_ruleset("grid5").board).bipartite
    assert not _tables(load_ruleset("classic").board).bipartite
