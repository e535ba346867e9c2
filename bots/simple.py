"""The simplest bots: ``random`` for both roles; ``rush`` (detectives); ``run``, ``run2``
(Mister X). Distances are the board's precomputed shortest paths (land transport).

Distance bots judge a move by its final destination. Among equally good moves they keep
the cheapest: a plain ticket before a secret one, a single move before a double one, and
for one destination the ticket type the player holds most of; remaining ties go to
``self.rng``.

>>> from bots.arena import play_game
>>> result = play_game("classic", RunBot(seed=1), [RushBot(seed=2)], seed=3)
>>> result.outcome.winner is not None
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from bots.base import Bot
from game import Move, Ticket, View

Score = Callable[[Move], float]


def special_cost(move: Move) -> int:
    """How many scarce tickets a move spends: secret tickets count 1, a double move 2."""
    cost = 2 if move.to2 is not None else 0
    cost += (move.ticket == Ticket.SECRET) + (move.ticket2 == Ticket.SECRET)
    return cost


def best_by(moves: Sequence[Move], score: Score) -> list[Move]:
    """The moves with the highest ``score`` (all of them on a tie)."""
    scores = [score(m) for m in moves]
    top = max(scores)
    return [m for m, s in zip(moves, scores, strict=True) if s == top]


def cheapest(moves: Sequence[Move], tickets: Sequence[int], rng: random.Random) -> Move:
    """Break a tie between equally good moves: fewest scarce tickets, then a random
    destination, then the ticket type held most of (``tickets`` is the mover's hand)."""
    least = min(special_cost(m) for m in moves)
    pool = [m for m in moves if special_cost(m) == least]
    destination = rng.choice(sorted({m.destination for m in pool}))
    pool = [m for m in pool if m.destination == destination]
    most = max(_plain_left(m, tickets) for m in pool)
    return rng.choice([m for m in pool if _plain_left(m, tickets) == most])


def _plain_left(move: Move, tickets: Sequence[int]) -> int:
    held = [tickets[t] for t in (move.ticket, move.ticket2) if t is not None]
    return min(held)


def distance_table(view: View) -> Any:
    """The board's all-pairs distance matrix (numpy, computed once per board)."""
    return view.rules.board.distances()


class RandomBot(Bot):
    """Uniformly random legal move."""

    name = "random"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        return self.rng.choice(legal)


class RushBot(Bot):
    """Detective: move to the station closest to the nearest possible location of Mister X.

    Before Mister X's first reveal it moves at random.
    """

    name = "rush"
    roles = frozenset({"detectives"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        if view.last_reveal() is None or not view.possible:
            return self.rng.choice(legal)
        dist = distance_table(view)
        targets = sorted(view.possible)

        def score(move: Move) -> float:
            return -float(dist[move.to, targets].min())

        return cheapest(best_by(legal, score), view.tickets[view.to_move], self.rng)


class RunBot(Bot):
    """Mister X: maximise the distance from his destination to the nearest detective."""

    name = "run"
    roles = frozenset({"mrx"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        dist = distance_table(view)
        detectives = list(view.detectives)

        def score(move: Move) -> float:
            return float(dist[move.destination, detectives].min())

        return cheapest(best_by(legal, score), view.tickets[0], self.rng)


class Run2Bot(Bot):
    """Mister X: minimise the sum over detectives of 3^(-distance) at his destination."""

    name = "run2"
    roles = frozenset({"mrx"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        dist = distance_table(view)
        detectives = list(view.detectives)

        def score(move: Move) -> float:
            return -round(sum(3.0 ** -int(d) for d in dist[move.destination, detectives]), 12)

        return cheapest(best_by(legal, score), view.tickets[0], self.rng)
