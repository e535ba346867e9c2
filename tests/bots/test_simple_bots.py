"""Baseline bots: each picks a best move under its documented score."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bots.greedy import GreedyBot, degrees
from bots.registry import make_bot
from bots.simple import RandomBot, Run2Bot, RunBot, RushBot, cheapest, special_cost
from game import Move, State, from_text, new_game
from game.belief import after_mrx_move

REVEALED_46 = ("rules=classic turn=d1 mrx=46:4.3.3.2.2 det={det}:10.8.4 "
               "log=taxi:33,taxi:45,taxi:46 possible=46")


def choice(bot_name: str, state: State, seed: int = 1) -> str:
    bot = make_bot(bot_name, seed)
    return str(bot.choose(state.view(state.to_move), state.legal_moves()))


def test_roles() -> None:
    assert RushBot.roles == {"detectives"}
    assert RunBot.roles == Run2Bot.roles == {"mrx"}
    assert GreedyBot.roles == RandomBot.roles == {"mrx", "detectives"}


def test_rush_moves_onto_a_known_location_with_its_most_plentiful_ticket() -> None:
    state = from_text(REVEALED_46.format(det=1))  # 1 reaches 46 by bus (8) and underground (4)
    assert {choice("rush", state, seed) for seed in range(5)} == {"bus:46"}


def test_rush_moves_towards_the_nearest_possible_location() -> None:
    state = from_text(REVEALED_46.format(det=13).replace("possible=46", "possible=1.46"))
    # From 13, station 46 is reachable (distance 0 to a possible location).
    assert choice("rush", state) == "underground:46"


def test_rush_is_random_before_the_first_reveal() -> None:
    state = new_game("classic", seed=2)
    state = state.apply(state.legal_moves()[0])
    picks = {choice("rush", state, seed) for seed in range(12)}
    assert len(picks) > 1


def test_run_keeps_away_and_does_not_waste_a_secret_ticket() -> None:
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.1.0 det=117:10.8.4 possible=104")
    assert {choice("run", state, seed) for seed in range(5)} == {"taxi:86"}
    assert {choice("run2", state, seed) for seed in range(5)} == {"taxi:86"}


def test_cheapest_prefers_plain_single_moves() -> None:
    moves = [Move.parse(t) for t in ("secret:86", "taxi:86+taxi:69", "taxi:86", "bus:86")]
    assert special_cost(moves[0]) == 1 and special_cost(moves[1]) == 2
    tickets = (4, 1, 3, 5, 2)
    assert {str(cheapest(moves, tickets, random.Random(s))) for s in range(5)} == {"taxi:86"}


def test_greedy_detective_takes_the_winning_move() -> None:
    state = from_text(REVEALED_46.format(det=13))
    assert choice("greedy", state) == "underground:46"


def sample_states(ruleset: str, seat_kind: str, count: int) -> list[State]:
    rng = random.Random(ruleset + seat_kind)
    out: list[State] = []
    game = 0
    while len(out) < count:
        state = new_game(ruleset, game)
        game += 1
        while state.outcome is None:
            if (state.to_move == 0) == (seat_kind == "mrx") and rng.random() < 0.3:
                out.append(state)
            state = state.apply(rng.choice(state.legal_moves()))
    return out[:count]


def dist_score(state: State, kind: str) -> Callable[[Move], float]:
    dist = state.board.distances()
    dets = state.detective_stations
    if kind == "run":
        return lambda m: min(int(dist[m.destination, d]) for d in dets)
    if kind == "run2":
        return lambda m: -round(sum(3.0 ** -int(dist[m.destination, d]) for d in dets), 12)
    degree = degrees(state.board)
    possible = state.possible_locations()

    def greedy(m: Move) -> float:
        near = min(int(dist[m.destination, d]) for d in dets)
        spread = len(after_mrx_move(state.rules, possible, m, state.move_number, dets))
        return spread + degree[m.destination] + near * near

    return greedy


@pytest.mark.parametrize("kind", ["run", "run2", "greedy"])
@pytest.mark.parametrize("ruleset", ["classic", "warwick"])
def test_mrx_bots_pick_a_best_move_and_the_cheapest_among_equals(kind: str,
                                                                 ruleset: str) -> None:
    for i, state in enumerate(sample_states(ruleset, "mrx", 12)):
        score = dist_score(state, kind)
        legal = state.legal_moves()
        picked = make_bot(kind, i).choose(state.view(0), legal)
        best = max(score(m) for m in legal)
        assert score(picked) == best
        cost = min(special_cost(m) for m in legal if score(m) == best)
        assert special_cost(picked) == cost


def test_rush_picks_a_move_closest_to_the_possible_set() -> None:
    for i, state in enumerate(sample_states("classic", "detectives", 20)):
        view = state.view(state.to_move)
        picked = RushBot(seed=i).choose(view, state.legal_moves())
        if view.last_reveal() is None:
            continue
        dist = state.board.distances()
        gaps = {m: min(int(dist[m.to, p]) for p in view.possible) for m in state.legal_moves()}
        assert gaps[picked] == min(gaps.values())


def test_bots_are_seeded() -> None:
    state = sample_states("classic", "mrx", 1)[0]
    for name in ("random", "greedy", "run"):
        picks = {str(make_bot(name, 5).choose(state.view(0), state.legal_moves()))
                 for _ in range(3)}
        assert len(picks) == 1
