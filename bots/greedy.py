"""``greedy``: a one-ply heuristic bot for both roles.

Mister X scores a move by ``|possible locations after it| + degree(destination) +
(distance to the nearest detective)²`` and plays the best one (the belief update is the
engine's :func:`game.belief.after_mrx_move`, so a reveal slot collapses the set to one).

Detectives take a winning move when Mister X's location is known exactly; otherwise each
picks the most plausible possible location by the same score (where a greedy Mister X
would like to be) and moves towards it.

>>> from bots.arena import play_game
>>> result = play_game("classic", GreedyBot(seed=1), [GreedyBot(seed=2)], seed=3)
>>> result.outcome.winner is not None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from bots.base import Bot
from bots.simple import best_of, cheapest, nearest
from game import MRX, Board, Move, Transport, View
from game.belief import after_mrx_move


@cache
def degrees(board: Board) -> tuple[int, ...]:
    """Distinct neighbours of every station over all transports (index 0 unused)."""
    adj = board.adjacency
    return tuple(len({d for t in Transport for d in adj[t][s]})
                 for s in range(board.n_stations + 1))


class GreedyBot(Bot):
    """One-ply heuristic for Mister X and for detectives."""

    name = "greedy"
    fast = True

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Mister X flees, detectives close in: each by its own greedy rule."""
        if view.to_move == MRX:
            return self._mrx(view, legal)
        return self._detective(view, legal)

    # ------------------------------------------------------------------ Mister X

    def _mrx(self, view: View, legal: Sequence[Move]) -> Move:
        degree = degrees(view.rules.board)
        ends = [m.destination for m in legal]
        near = nearest(view, ends, view.detectives).astype(int)
        memo: dict[Move, int] = {}
        scores = [self._spread(view, m, memo) + degree[end] + d * d
                  for m, end, d in zip(legal, ends, near.tolist(), strict=True)]
        return cheapest(best_of(legal, scores), view.tickets[MRX], self.rng)

    @staticmethod
    def _spread(view: View, move: Move, memo: dict[Move, int]) -> int:
        """|possible| after ``move``; moves with the same public trace share one result."""
        slot = len(view.log)
        reveals = view.rules.reveal_moves
        # Only the tickets and the revealed stations are public: key the memo by those.
        key = Move(move.ticket, move.to if slot + 1 in reveals else 0, move.ticket2,
                   None if move.to2 is None else move.to2 if slot + 2 in reveals else 0)
        if key not in memo:
            memo[key] = len(after_mrx_move(view.rules, view.possible, move, slot,
                                           view.detectives))
        return memo[key]

    # ------------------------------------------------------------------ detectives

    def _detective(self, view: View, legal: Sequence[Move]) -> Move:
        own = view.tickets[view.to_move]
        if len(view.possible) == 1:
            winning = [m for m in legal if m.to in view.possible]
            if winning:
                return cheapest(winning, own, self.rng)
        if not view.possible:
            return self.rng.choice(legal)
        target = self._likely_location(view)
        gaps = nearest(view, [m.to for m in legal], [target])
        return cheapest(best_of(legal, -gaps), own, self.rng)

    def _likely_location(self, view: View) -> int:
        """A possible location with the best Mister X score (ties: random)."""
        degree = degrees(view.rules.board)
        candidates = sorted(view.possible)
        near = nearest(view, candidates, view.detectives).tolist()
        scores = [degree[s] + d * d for s, d in zip(candidates, near, strict=True)]
        top = max(scores)
        return self.rng.choice([s for s, v in zip(candidates, scores, strict=True) if v == top])
