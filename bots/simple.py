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
from collections.abc import Sequence
from typing import Any

from bots.base import Bot
from game import Move, Ticket, View


def special_cost(move: Move) -> int:
    """How many scarce tickets a move spends: secret tickets count 1, a double move 2."""
    cost = 2 if move.to2 is not None else 0
    cost += (move.ticket == Ticket.SECRET) + (move.ticket2 == Ticket.SECRET)
    return cost


def best_of(moves: Sequence[Move], scores: Sequence[float] | Any) -> list[Move]:
    """The moves whose entry in ``scores`` (a sequence or numpy array) is highest."""
    top = max(scores)
    return [m for m, s in zip(moves, scores, strict=True) if s == top]


def nearest(view: View, stations: Sequence[int], targets: Sequence[int]) -> Any:
    """For each of ``stations``, the distance to the nearest of ``targets`` (numpy array)."""
    import numpy as np  # here: the random bot's processes never load numpy

    dist = distance_table(view)
    return dist[np.ix_(np.asarray(stations), np.asarray(targets))].min(axis=1)


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
    fast = True
    reads_view = False

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """A uniformly random legal move."""
        return self.rng.choice(legal)


class RushBot(Bot):
    """Detective: move to the station closest to the nearest possible location of Mister X.

    Before Mister X's first reveal it moves at random.
    """

    name = "rush"
    fast = True
    roles = frozenset({"detectives"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """The cheapest move closest to where Mister X may be (random before he shows)."""
        if view.last_reveal() is None or not view.possible:
            return self.rng.choice(legal)
        gaps = nearest(view, [m.to for m in legal], sorted(view.possible))
        return cheapest(best_of(legal, -gaps), view.tickets[view.to_move], self.rng)


class RunBot(Bot):
    """Mister X: maximise the distance from his destination to the nearest detective."""

    name = "run"
    fast = True
    roles = frozenset({"mrx"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """The cheapest move farthest from the nearest detective."""
        gaps = nearest(view, [m.destination for m in legal], view.detectives)
        return cheapest(best_of(legal, gaps), view.tickets[0], self.rng)


class Run2Bot(Bot):
    """Mister X: minimise the sum over detectives of 3^(-distance) at his destination."""

    name = "run2"
    fast = True
    roles = frozenset({"mrx"})

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """The cheapest move to the least dangerous destination."""
        import numpy as np

        dist = distance_table(view)
        ends = np.asarray([m.destination for m in legal])
        danger = (3.0 ** -dist[np.ix_(ends, np.asarray(view.detectives))]).sum(axis=1)
        return cheapest(best_of(legal, -danger.round(12)), view.tickets[0], self.rng)
