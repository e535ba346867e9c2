"""The ``hider`` bot: a Mister X that searches over what the detectives know.

Mister X is hidden except on reveal slots, so the detectives only know the public
possible-location set (``view.possible``; :mod:`game.belief`). ``hider`` plays an expectimax
search over his own moves in which the detectives are a *model* that sees only that public
set, never his station:

* ``model=chase`` (default): each detective, in seat order, picks a station uniformly from
  the current possible set and steps along a shortest path towards it (ties split evenly);
  with probability ``epsilon`` it plays a uniformly random legal move instead. A detective
  that steps onto a possible station without catching him removes it from the set, as in
  the real game. This is how the sampling search detectives (``alphabeta``, ``mcts``)
  behave: they act on determinizations drawn from the possible set.
* ``model=mass``: as ``chase``, but each detective steps to minimise its summed distance to
  the possible set.
* ``model=random``: every detective plays a uniformly random legal move. On ticket-free
  rulesets (``grid5``) Mister X then plays the move with the highest *exact* survival
  probability to the end of the game (a table over station triples and rounds, filled once
  per process; ``depth`` is not used): the optimal Mister X against ``random`` detectives.

With ``blend`` > 0 (default 0) on those rulesets, the value of each of Mister X's moves
under ``model=chase`` or ``mass`` is multiplied by his exact survival probability against
random detectives raised to ``blend``: a move must be safe against chasers *and* against
wandering detectives.

The search looks ``depth`` rounds ahead (a round is Mister X's move and every detective's
reply) and is exact within that horizon: a catch scores 0, surviving the last round 1, and
a position at the horizon scores a survival estimate in [0, 1] from the distance to the
nearest detective, the size of the possible set, Mister X's escape squares and the stations
he reaches first. Values are memoised per decision; equal-valued moves are split with
``self.rng`` (seeded).

The model covers ticket-free rulesets on boards of up to 100 stations (``grid5``); with more
than two detectives it searches one round only. On other rulesets (tickets, London) it
only scores each legal move's destination with the estimate, from the exact possible set
after the move (:func:`game.belief.after_mrx_move`): legal, fast and much weaker.

Options (defaults in brackets): ``depth`` [3] rounds searched; ``model`` [chase] ``chase``,
``mass`` or ``random``; ``epsilon`` [0.05] share of random detective moves in the
``chase``/``mass`` models; ``blend`` [0] (above); ``prune`` [0.002] branches below this
probability are scored by the estimate instead of searched. The estimate: ``w_dist`` [0.8]
per step to the nearest detective beyond the first (at most 3), ``w_belief`` [0.5] per bit
of the possible set, ``w_escape`` [0.3] per move out of every detective's reach, ``w_area``
[0.3] per station he reaches strictly before every detective, over ``scale`` [2]:
``1 - 0.9 exp(-score / scale)``. Measured strength: docs/reproductions.md "Strength gaps".

>>> from game import new_game
>>> state = new_game("grid5", seed=3)
>>> bot = HiderBot(seed=1)
>>> bot.choose(state.view(0), state.legal_moves()) in state.legal_moves()
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, ClassVar, Literal, get_args

from bots.base import Bot
from bots.options import Range
from bots.registry import BotOptionError
from game import Board, Move, MrXView, Ruleset, View
from game.belief import after_mrx_move

Model = Literal["chase", "mass", "random"]
MODELS: tuple[str, ...] = get_args(Model)
MAX_DEPTH = 6


@dataclass(frozen=True)
class _Tables:
    """Per-board lookups in plain Python form (lists index faster than numpy scalars)."""

    neighbours: tuple[tuple[int, ...], ...]  # land neighbours of each station
    masks: tuple[int, ...]  # the same as bit masks (bit s = station s)
    dist: tuple[tuple[int, ...], ...]


@cache
def _tables(board: Board) -> _Tables:
    adjacency = board.adjacency
    neighbours = tuple(tuple(sorted({d for t in (0, 1, 2) for d in adjacency[t][s]}))
                       for s in range(board.n_stations + 1))
    masks = tuple(sum(1 << d for d in row) for row in neighbours)
    dist = tuple(tuple(int(x) for x in row) for row in board.distances())
    return _Tables(neighbours, masks, dist)


def _bits(mask: int) -> list[int]:
    """Stations in a bit mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class HiderBot(Bot):
    """Belief-aware expectimax Mister X (see the module docstring for options)."""

    name = "hider"
    roles: ClassVar[frozenset[str]] = frozenset({"mrx"})
    rulesets: ClassVar[frozenset[str] | None] = frozenset({"grid5"})

    def __init__(self, seed: int | None = None, *,
                 depth: Annotated[int, Range(ge=1, le=MAX_DEPTH)] = 3,
                 model: Model = "chase",
                 epsilon: Annotated[float, Range(ge=0, le=1)] = 0.05,
                 prune: Annotated[float, Range(ge=0, lt=1)] = 0.002, w_dist: float = 0.8,
                 w_belief: float = 0.5, w_escape: float = 0.3, w_area: float = 0.3,
                 scale: Annotated[float, Range(gt=0)] = 2.0,
                 blend: Annotated[float, Range(ge=0)] = 0.0) -> None:
        """Set the search's options and the detectives' model.

        Args:
            seed: seeds ``self.rng`` (not an option: see :meth:`Bot.create`)
            depth: rounds searched
            model: the detectives' model (see bots/hider.py)
            epsilon: random detective moves in chase/mass
            prune: branches less likely are only estimated
            w_dist: estimate: per step to the nearest detective
            w_belief: estimate: per bit of the possible set
            w_escape: estimate: per move out of detectives' reach
            w_area: estimate: per station he reaches first
            scale: estimate: 1 - 0.9 exp(-score / scale)
            blend: weight of survival vs random detectives
        """
        super().__init__(seed)
        if model not in MODELS:
            raise BotOptionError(f"bot 'hider': model={model!r} is not one of "
                                 f"{', '.join(MODELS)}")
        if not 1 <= depth <= MAX_DEPTH:
            raise BotOptionError(f"bot 'hider': depth must lie in [1, {MAX_DEPTH}]")
        if not 0.0 <= epsilon <= 1.0 or not 0.0 <= prune < 1.0:
            raise BotOptionError("bot 'hider': epsilon must lie in [0, 1], prune in [0, 1)")
        if blend < 0.0 or scale <= 0.0:
            raise BotOptionError("bot 'hider': blend must be >= 0, scale > 0")
        self.depth, self.model = depth, model
        self.epsilon = 1.0 if model == "random" else epsilon
        self.prune = prune
        self.w_dist, self.w_belief, self.w_escape = w_dist, w_belief, w_escape
        self.w_area, self.scale, self.blend = w_area, scale, blend
        self._area: dict[tuple[int, ...], int] = {}
        self.nodes = 0
        self._memo: dict[tuple[int, ...], float] = {}
        self._chase: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
        self._tb: _Tables | None = None
        self._rules: Ruleset | None = None

    def describe(self) -> str:
        """Name plus depth, model and epsilon, for logs and tables."""
        return f"hider(depth={self.depth}, model={self.model}, epsilon={self.epsilon})"

    # ------------------------------------------------------------------ root

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Play the move of best estimated survival (Mister X only)."""
        if not isinstance(view, MrXView):
            raise BotOptionError("bot 'hider' plays Mister X only")
        if len(legal) == 1:
            return legal[0]
        rules = view.rules
        if self._rules is not rules:
            self._rules, self._tb = rules, _tables(rules.board)
            self._chase.clear()
            self._area.clear()
        self._memo.clear()
        self.nodes = 0
        dets = tuple(view.detectives)
        k = len(view.log)
        values: dict[Move, float] = {}
        if self.model == "random" and _exact_random_ok(rules, len(dets)):
            for move in legal:
                values[move] = _random_detectives(rules, k + 1, move.destination, dets, 0)
            return self._pick(legal, values)
        searchable = _searchable(rules)
        exact = _exact_random_ok(rules, len(dets))
        tb = self._tb
        assert tb is not None
        depth = self.depth if len(dets) <= 2 else 1
        for move in legal:
            after = after_mrx_move(rules, view.possible, move, k, dets)
            mask = sum(1 << s for s in after)
            slots = 2 if move.is_double else 1
            to = move.destination
            if searchable:
                values[move] = self._detectives(k + slots, to, dets, mask, 0, depth, 1.0)
                if self.blend and exact:
                    values[move] *= _random_detectives(rules, k + slots, to, dets,
                                                       0) ** self.blend
            else:
                escapes = [n for n in tb.neighbours[to] if n not in dets]
                values[move] = self._estimate(to, dets, mask, escapes)
        self.report(nodes=self.nodes, depth=self.depth)
        return self._pick(legal, values)

    def _pick(self, legal: Sequence[Move], values: dict[Move, float]) -> Move:
        """The best-valued move; ties split with ``self.rng``."""
        top = max(values.values())
        best = [m for m in legal if values[m] >= top - 1e-9]
        return best[0] if len(best) == 1 else self.rng.choice(best)

    # ------------------------------------------------------------------ search

    def _mrx(self, k: int, m: int, dets: tuple[int, ...], mask: int, depth: int,
             prob: float) -> float:
        """Mister X to move with ``k`` log entries made: the value of his best move."""
        rules = self._rules
        assert rules is not None and self._tb is not None
        if k >= rules.max_moves:
            return 1.0
        moves = [n for n in self._tb.neighbours[m] if n not in dets]
        if not moves:
            return 0.0
        if depth <= 0 or prob < self.prune:
            return self._estimate(m, dets, mask, moves)
        key = (k, m, mask, depth, *dets)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        self.nodes += 1
        reveal = k + 1 in rules.reveal_moves
        spread = 0 if reveal else self._spread(mask, dets)
        best = 0.0
        for n in moves:
            after = (1 << n) if reveal else spread
            value = self._detectives(k + 1, n, dets, after, 0, depth, prob)
            if value > best:
                best = value
                if best >= 1.0:
                    break
        self._memo[key] = best
        return best

    def _spread(self, mask: int, dets: tuple[int, ...]) -> int:
        """Mister X's possible stations after a hidden move from ``mask``: every neighbour,
        less the detectives' stations."""
        assert self._tb is not None
        spread = 0
        for s in _bits(mask):
            spread |= self._tb.masks[s]
        for d in dets:
            spread &= ~(1 << d)
        return spread

    def _detectives(self, k: int, m: int, dets: tuple[int, ...], mask: int, seat: int,
                    depth: int, prob: float) -> float:
        """Detective ``seat`` (0-based among detectives) to move under the model."""
        if seat >= len(dets):
            return self._mrx(k, m, dets, mask, depth - 1, prob)
        assert self._tb is not None
        here = dets[seat]
        options = [n for n in self._tb.neighbours[here] if n not in dets]
        if not options:
            return self._detectives(k, m, dets, mask, seat + 1, depth, prob)
        total = 0.0
        for n, p in self._policy(here, options, dets, mask):
            if n == m:
                continue  # caught: scores 0
            moved = (*dets[:seat], n, *dets[seat + 1:])
            total += p * self._detectives(k, m, moved, mask & ~(1 << n), seat + 1, depth,
                                          prob * p)
        return total

    def _policy(self, here: int, options: list[int], dets: tuple[int, ...],
                mask: int) -> list[tuple[int, float]]:
        """The model's move probabilities for a detective on ``here``."""
        blocked = 0
        for d in dets:
            blocked |= 1 << d
        key = (here, blocked, mask)
        hit = self._chase.get(key)
        if hit is not None:
            return hit
        out = [(o, p) for o, p in self._model_probs(options, _bits(mask)).items() if p > 0.0]
        if len(self._chase) > 200_000:
            self._chase.clear()
        self._chase[key] = out
        return out

    def _model_probs(self, options: list[int], targets: list[int]) -> dict[int, float]:
        """The model's probability of each of ``options`` when Mister X may be on any of
        ``targets``: ``epsilon`` spread evenly, the rest on the moves that ``model`` picks."""
        assert self._tb is not None
        eps = self.epsilon
        probs = dict.fromkeys(options, eps / len(options))
        if eps < 1.0 and targets and self.model == "mass":
            dist = self._tb.dist
            sums = [sum(dist[o][t] for t in targets) for o in options]
            low = min(sums)
            best = [o for o, x in zip(options, sums, strict=True) if x == low]
            for o in best:
                probs[o] += (1.0 - eps) / len(best)
        elif eps < 1.0 and targets:
            dist = self._tb.dist
            share = (1.0 - eps) / len(targets)  # each possible station steered for evenly
            for t in targets:
                row = [dist[o][t] for o in options]
                low = min(row)
                best = [o for o, x in zip(options, row, strict=True) if x == low]
                for o in best:
                    probs[o] += share / len(best)
        elif eps < 1.0:
            for o in options:
                probs[o] += (1.0 - eps) / len(options)
        return probs

    def _estimate(self, m: int, dets: tuple[int, ...], mask: int, moves: list[int]) -> float:
        """Survival estimate in (0, 1) of a position at the horizon, Mister X to move."""
        assert self._tb is not None
        dist = self._tb.dist
        near = min((dist[m][d] for d in dets), default=4)
        escapes = sum(1 for n in moves if min((dist[n][d] for d in dets), default=2) >= 2)
        size = max(1, mask.bit_count())
        score = (self.w_dist * min(near - 1, 3) + self.w_belief * math.log2(size)
                 + self.w_escape * escapes)
        if self.w_area:
            score += self.w_area * self._territory(m, dets)
        return 1.0 - 0.9 * math.exp(-score / self.scale)

    def _territory(self, m: int, dets: tuple[int, ...]) -> int:
        """Stations Mister X reaches strictly before every detective."""
        key = (m, *dets)
        hit = self._area.get(key)
        if hit is None:
            assert self._tb is not None
            dist = self._tb.dist
            own = dist[m]
            rows = [dist[d] for d in dets]
            hit = sum(1 for c in range(1, len(own))
                      if all(own[c] < row[c] for row in rows))
            self._area[key] = hit
        return hit


# ---------------------------------------------------------------------- model=random, exact


def _searchable(rules: Ruleset) -> bool:
    """The search models ticket-free rulesets on small boards; elsewhere ``hider`` only
    scores its own move's destination (one ply, no detective replies)."""
    return (rules.mrx_tickets is None and rules.detective_tickets is None
            and rules.board.n_stations <= 100)


def _exact_random_ok(rules: Ruleset, detectives: int) -> bool:
    """The exact table needs a ticket-free ruleset without double moves, small enough."""
    return (rules.mrx_tickets is None and rules.detective_tickets is None
            and rules.board.n_stations ** (detectives + 1) <= 2_000_000)


@cache
def _random_detectives(rules: Ruleset, k: int, m: int, dets: tuple[int, ...],
                       seat: int) -> float:
    """Mister X's exact survival probability against uniformly random detectives when he
    stands on ``m`` with ``k`` log entries made and detective ``seat`` (0-based) to move,
    if he then plays optimally (shared by every game in the process)."""
    neighbours = _tables(rules.board).neighbours
    if seat >= len(dets):
        if k >= rules.max_moves:
            return 1.0
        moves = [n for n in neighbours[m] if n not in dets]
        return max((_random_detectives(rules, k + 1, n, dets, 0) for n in moves),
                   default=0.0)
    here = dets[seat]
    options = [n for n in neighbours[here] if n not in dets]
    if not options:
        return _random_detectives(rules, k, m, dets, seat + 1)
    total = 0.0
    for n in options:
        if n != m:
            moved = (*dets[:seat], n, *dets[seat + 1:])
            total += _random_detectives(rules, k, m, moved, seat + 1)
    return total / len(options)
