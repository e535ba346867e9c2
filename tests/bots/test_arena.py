"""The in-process arena: seats, seeding, forfeits, summaries."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bots.arena import (
    bot_seed,
    merge_summaries,
    play_game,
    play_many,
    seat_bots,
    wilson_interval,
)
from bots.base import NO_VIEW, Bot, BotRoleError, reads_view
from bots.registry import make_bot
from bots.simple import RandomBot, RunBot, RushBot
from game import Move, Outcome, Ruleset, Termination, View, Winner, new_game


class Recorder(RandomBot):
    """A random bot that records what the runner told it."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.seats: list[Sequence[int]] = []
        self.outcomes: list[Outcome] = []
        self.views: list[View] = []

    def new_game(self, rules: Ruleset, seats: Sequence[int]) -> None:
        self.seats.append(list(seats))

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        self.views.append(view)
        return super().choose(view, legal)

    def game_over(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)


class Cheat(Bot):
    """Plays a move that is never legal."""

    name = "cheat"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        return Move.parse("taxi:1")


def test_moves_replay_to_the_final_state() -> None:
    result = play_game("classic", RandomBot(), [RandomBot()], seed=9)
    state = new_game("classic", 9)
    for seat, move in result.moves:
        assert state.to_move == seat
        state = state.apply(move)
    assert state.outcome == result.outcome == result.final.outcome
    assert result.start.positions == new_game("classic", 9).positions


def test_same_seed_same_game() -> None:
    a = play_game("classic", RunBot(), [RushBot()], seed=4)
    b = play_game("classic", RunBot(seed=99), [RushBot(seed=7)], seed=4)
    assert a.moves == b.moves and a.outcome == b.outcome


def test_each_seat_sees_its_own_view_and_bots_learn_their_seats() -> None:
    mrx, d_a, d_b = Recorder(), Recorder(), Recorder()
    play_game("classic", mrx, [d_a, d_b], seed=3)
    assert mrx.seats == [[0]] and d_a.seats == [[1, 3, 5]] and d_b.seats == [[2, 4]]
    assert all(v.seat == 0 for v in mrx.views)
    assert all(v.seat in (1, 3, 5) and not hasattr(v, "mrx") for v in d_a.views)
    assert len(mrx.outcomes) == len(d_a.outcomes) == 1


class Peeker(Bot):
    """Plays at random and keeps every view it got (a bot that reads its views)."""

    name = "peeker"

    def __init__(self) -> None:
        self.views: list[View] = []

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        self.views.append(view)
        return self.rng.choice(legal)


class Blind(RandomBot):
    """A random bot that declares it reads no view, and keeps what it got."""

    reads_view = False

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.views: list[View] = []

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        self.views.append(view)
        return super().choose(view, legal)


def test_a_bot_that_reads_no_view_gets_none_and_plays_the_same_game() -> None:
    """RandomBot declares reads_view = False: the arena builds no view for it (NO_VIEW,
    which names the field a read asked for) and the game is the one a bot with views
    plays. The declaration is not inherited (Recorder, a RandomBot, reads its views), and
    the detectives beside a blind Mister X still see what the engine says they may."""
    assert not reads_view(RandomBot()) and reads_view(Recorder()) and reads_view(Blind()) is False
    blind, seeing = Blind(), Recorder()
    a = play_game("classic", blind, [RandomBot()], seed=5)
    b = play_game("classic", seeing, [RandomBot()], seed=5)
    assert a.moves == b.moves and a.outcome == b.outcome
    assert blind.views and all(v is NO_VIEW for v in blind.views)
    assert all(v.seat == 0 for v in seeing.views)
    with pytest.raises(AttributeError, match=r"'possible'.*reads_view = False"):
        _ = NO_VIEW.possible
    detectives = Peeker()
    result = play_game("classic", RandomBot(), [detectives], seed=6)
    state = result.start
    seen = iter(detectives.views)
    for seat, move in result.moves:
        if seat != 0:
            view = next(seen)
            assert view == state.view(seat)
            assert view.possible == state.possible_locations()
        state = state.apply(move)


def test_illegal_move_forfeits() -> None:
    result = play_game("grid5", RandomBot(), [Cheat()], seed=1)
    assert result.outcome == Outcome(Winner.MRX, Termination.ILLEGAL_MOVE, 1)
    assert result.moves == [(0, result.moves[0][1])]


def test_bot_in_the_wrong_role_fails_at_setup() -> None:
    with pytest.raises(BotRoleError, match="'rush' cannot play mrx"):
        play_game("classic", RushBot(), [RushBot()], seed=1)
    with pytest.raises(BotRoleError, match="'run' cannot play detectives"):
        play_game("classic", RunBot(), [RunBot()], seed=1)


def test_seat_bots_cycles_and_needs_a_detective() -> None:
    a, b, x = RandomBot(), RandomBot(), RandomBot()
    assert seat_bots(x, [a, b], 5) == [x, a, b, a, b, a]
    with pytest.raises(ValueError):
        seat_bots(x, [], 2)
    assert bot_seed(None, 1) is None and bot_seed(1, 1) != bot_seed(1, 2)


def test_play_many_summary() -> None:
    summary = play_many("grid5", RandomBot(), [RandomBot()], games=30, seed=5)
    assert summary.games == 30 == summary.mrx_wins + summary.detective_wins
    assert sum(summary.terminations.values()) == 30
    assert 0 < summary.mean_moves <= 15
    data = summary.to_dict()
    lo, hi = data["mrx_win_rate_ci95"]
    assert lo <= data["mrx_win_rate"] <= hi


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("mrx", "det"), [("random", "greedy"), ("run2", "dqn")])
def test_chunks_over_disjoint_seeds_merge_into_the_one_run_summary(mrx: str, det: str) -> None:
    """What bench/dqn.py --cluster relies on: each chunk (fresh bots, as on a Ray worker)
    plays seeds first..first+n-1; the merged counts equal one run over all the seeds."""
    whole = play_many("grid5", make_bot(mrx, 1), [make_bot(det, 1)], games=13, seed=40)
    parts = [play_many("grid5", make_bot(mrx, 1), [make_bot(det, 1)], games=n, seed=first)
             for first, n in ((40, 5), (45, 4), (49, 4))]
    merged = merge_summaries(parts, seconds=2.0)
    assert (merged.games, merged.mrx_wins, merged.detective_wins) == \
        (whole.games, whole.mrx_wins, whole.detective_wins)
    assert merged.terminations == whole.terminations
    assert merged.mean_moves == pytest.approx(whole.mean_moves)
    assert merged.seconds == 2.0 and merge_summaries(parts).seconds == sum(
        p.seconds for p in parts)
    assert whole.mrx_wins + whole.detective_wins > 0
