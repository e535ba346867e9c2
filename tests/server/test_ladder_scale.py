"""The ladder's matchmaking at scale (issue 40.4), sans-I/O: the work of one proposal grows
no faster than the bots waiting (counted in :data:`server.ladder.OPS`, not timed), and a
bot waiting for its pair's second game is not left idle."""

from __future__ import annotations

import heapq
import random

from game import Termination, Winner
from server import ladder as ladder_module
from server.ladder import Ladder, Result


def _ops_per_proposal(bots: int, games: int = 400) -> float:
    """Candidates examined per proposal once ``games`` games have been played among
    ``bots`` bots of 1-4 slots, each game finishing in turn and a proposal after each."""
    rng = random.Random(bots)
    ladder = Ladder(["grid5"], placement=2, rng=random.Random(bots))
    free = {f"bot-{i:04d}": rng.randint(1, 4) for i in range(bots)}
    for name in free:
        ladder.join(name, ["grid5"])
    running: list[tuple[float, int, str, str]] = []
    now, serial, proposals, ops = 0.0, 0, 0, 0
    for step in range(2 * games):
        before = ladder_module.OPS.value
        for game in ladder.propose(free, now):
            free[game.mrx] -= 1
            free[game.detective] -= 1
            serial += 1
            heapq.heappush(running, (now + rng.uniform(5, 15), serial, game.mrx,
                                     game.detective))
        if step >= games:  # past the start, when every bot was free at once
            proposals += 1
            ops += ladder_module.OPS.value - before
        now, _, mrx, detective = heapq.heappop(running)
        free[mrx] += 1
        free[detective] += 1
        ladder.result(Result("grid5", mrx, detective, Winner.MRX, Termination.SURVIVED), now)
        for name in (mrx, detective):
            ladder.rank("grid5", name, now)
    return ops / proposals


def test_the_work_per_proposal_grows_linearly_in_the_bots() -> None:
    per_bot = {n: _ops_per_proposal(n) / n for n in (25, 100, 400)}
    assert max(per_bot.values()) < 6, per_bot
    assert per_bot[400] < 1.5 * per_bot[25], per_bot


def test_a_bot_waiting_for_its_second_game_takes_new_games_in_its_other_slots() -> None:
    ladder = Ladder(["grid5"], placement=0, rng=random.Random(1))
    for name in ("a", "b"):
        ladder.join(name, ["grid5"])
    (first,) = ladder.propose({"a": 3, "b": 1})
    (second,) = ladder.pending
    ladder.join("c", ["grid5"])
    assert {first.mrx, first.detective} == {"a", "b"}
    new = ladder.propose({"a": 2, "b": 0, "c": 2})
    assert {frozenset((g.mrx, g.detective)) for g in new} == {frozenset(("a", "c"))}
    assert ladder.pending[0] == second  # still waiting for b
    assert ladder.propose({"a": 1, "b": 1, "c": 0})[0] == second  # before any new pair
