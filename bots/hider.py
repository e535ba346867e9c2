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
from typing import ClassVar

from bots.base import Bot
from bots.registry import BotOptionError
from game import Board, Move, MrXView, Ruleset, View
from game.belief import after_mrx_move

MODELS = ("chase", "mass", "random")
MAX_DEPTH = 6


@dataclass(frozen=True)
class _Tables:
    """Per-board lookups in plain Python form (lists index faster than numpy scalars)."""

    neighbours: tuple[tuple[int, ...], ...]  # land neighbours of each station
    masks: tuple[int, ...]  # the same as bit masks (bit s = station s)
    dist: tuple[tuple[int, ...], ...]
    bipartite: bool  # every cycle even: distance parity says who can ever step onto him


@cache
def _tables(board: Board) -> _Tables:
    adjacency = board.adjacency
    neighbours = tuple(tuple(sorted({d for t in (0, 1, 2) for d in adjacency[t][s]}))
                       for s in range(board.n_stations + 1))
    masks = tuple(sum(1 << d for d in row) for row in neighbours)
    dist = tuple(tuple(int(x) for x in row) for row in board.distances())
    n = board.n_stations
    bipartite = (all(dist[1][a] <= n for a in range(1, n + 1))
                 and all(dist[1][a] % 2 != dist[1][b] % 2
                         for a in range(1, n + 1) for b in neighbours[a]))
    return _Tables(neighbours, masks, dist, bipartite)


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

    def __init__(self, seed: int | None = None, *, depth: int = 3, model: str = "chase",
                 epsilon: float = 0.05, prune: float = 0.002, w_dist: float = 0.8,
                 w_belief: float = 0.5, w_escape: float = 0.3, w_area: float = 0.3,
                 scale: float = 2.0, grab: float = 0.0, paranoid: int = 0,
                 blend: float = 0.0, mix: bool = False, live: bool = False,
                 setup: bool = False, extend: bool = False, cover: float = 0.0,
                 lc: bool = False, w_surv: float = 0.0) -> None:
        super().__init__(seed)
        if model not in MODELS:
            raise BotOptionError(f"bot 'hider': model={model!r} is not one of "
                                 f"{', '.join(MODELS)}")
        if not 1 <= depth <= MAX_DEPTH:
            raise BotOptionError(f"bot 'hider': depth must lie in [1, {MAX_DEPTH}]")
        if not 0.0 <= epsilon <= 1.0 or not 0.0 <= prune < 1.0:
            raise BotOptionError("bot 'hider': epsilon must lie in [0, 1], prune in [0, 1)")
        if blend < 0.0 or grab < 0.0 or scale <= 0.0:
            raise BotOptionError("bot 'hider': blend and grab must be >= 0, scale > 0")
        self.depth, self.model = depth, model
        self.epsilon = 1.0 if model == "random" else epsilon
        self.prune = prune
        self.w_dist, self.w_belief, self.w_escape = w_dist, w_belief, w_escape
        self.w_area, self.scale, self.grab = w_area, scale, grab
        self.paranoid, self.blend, self.mix, self.live = paranoid, blend, mix, live
        self.setup, self.extend, self.cover = setup, extend, cover
        self._covered: dict[tuple[int, ...], bool] = {}
        self.lc, self.w_surv = lc, w_surv
        self._lc: tuple[float, ...] = ()
        self._area: dict[tuple[int, ...], int] = {}
        self.nodes = 0
        self._memo: dict[tuple[int, ...], float] = {}
        self._chase: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
        self._tb: _Tables | None = None
        self._rules: Ruleset | None = None

    def describe(self) -> str:
        return f"hider(depth={self.depth}, model={self.model}, epsilon={self.epsilon})"

    # ------------------------------------------------------------------ root

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        if not isinstance(view, MrXView):
            raise BotOptionError("bot 'hider' plays Mister X only")
        if len(legal) == 1:
            return legal[0]
        rules = view.rules
        if self._rules is not rules:
            self._rules, self._tb = rules, _tables(rules.board)
            self._chase.clear()
            self._covered.clear()
            self._area.clear()
            if self.lc:
                from bots.mcts.lc import load_weights
                self._lc = load_weights(rules.name)
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
                if (self.cover and k + slots in rules.reveal_moves and not move.is_double
                        and self._coverable(to, dets)):
                    values[move] *= 1.0 - self.cover
                if self.blend and exact:
                    values[move] *= _random_detectives(rules, k + slots, to, dets,
                                                       0) ** self.blend
            else:
                escapes = [n for n in tb.neighbours[to] if n not in dets]
                values[move] = self._estimate(k + slots, to, dets, mask, escapes)
        if (self.mix and searchable and len(dets) <= 2 and k + 1 not in rules.reveal_moves
                and any(tb.dist[m.destination][d] == 1 for m in legal for d in dets)):
            mixed = self._guess(view, legal, k, dets, depth)
            if mixed is not None:
                self.report(nodes=self.nodes, depth=self.depth)
                return mixed
        self.report(nodes=self.nodes, depth=self.depth)
        return self._pick(legal, values)

    def _guess(self, view: MrXView, legal: Sequence[Move], k: int, dets: tuple[int, ...],
               depth: int) -> Move | None:
        """A hidden move where a detective could step onto one of his destinations is a
        guessing game: the detectives pick their replies without seeing which move he
        made. Rows are his moves, columns the sets of his destinations that one joint
        reply of the detectives steps onto; a covered destination scores 0, an uncovered
        one its searched value given that the detectives' replies (under the model) miss
        him. His move is drawn from the game's equilibrium mixture, so that no way of
        guessing catches him more often than the equilibrium allows (a pure choice is
        what a sampling detective learns to cover). ``None`` for double moves."""
        rules, tb = self._rules, self._tb
        assert rules is not None and tb is not None
        if any(m.is_double for m in legal):
            return None
        targets = {m.destination for m in legal}
        replies: list[tuple[int, ...]] = []
        self._replies(dets, 0, (), replies)
        covers = sorted({frozenset(targets.intersection(r)) for r in replies}, key=sorted)
        if len(covers) <= 1:
            return None
        matrix = []
        for move in legal:
            after = after_mrx_move(rules, view.possible, move, k, dets)
            mask = sum(1 << s for s in after)
            to = move.destination
            value = self._missed(k + 1, to, dets, mask, 0, depth, 1.0)
            matrix.append([0.0 if to in c else value for c in covers])
        weights = _maximin(matrix)
        u = self.rng.random()
        for move, w in zip(legal, weights, strict=True):
            u -= w
            if u < 0.0:
                return move
        return legal[-1]

    def _missed(self, k: int, m: int, dets: tuple[int, ...], mask: int, seat: int,
                depth: int, prob: float) -> float:
        """:meth:`_detectives` given that no detective steps onto ``m`` this round (the
        model's replies renormalised over the misses)."""
        if seat >= len(dets):
            return self._mrx(k, m, dets, mask, depth - 1, prob)
        assert self._tb is not None
        here = dets[seat]
        options = [n for n in self._tb.neighbours[here] if n not in dets]
        if not options:
            return self._missed(k, m, dets, mask, seat + 1, depth, prob)
        total = weight = 0.0
        for n, p in self._policy(here, options, dets, mask):
            if n == m:
                continue
            moved = (*dets[:seat], n, *dets[seat + 1:])
            weight += p
            total += p * self._missed(k, m, moved, mask & ~(1 << n), seat + 1, depth, prob * p)
        return total / weight if weight > 0.0 else 0.0

    def _coverable(self, m: int, dets: tuple[int, ...]) -> bool:
        """Whether the detectives, seeing Mister X on ``m``, have a joint reply after which
        every move he has is onto a station next to a detective (so his next, hidden, move
        is a guess they can win)."""
        key = (m, *dets)
        hit = self._covered.get(key)
        if hit is not None:
            return hit
        assert self._tb is not None
        masks = self._tb.masks
        replies: list[tuple[int, ...]] = []
        self._replies(dets, 0, (), replies)
        hit = False
        for reply in replies:
            if m in reply:
                continue  # a catch: the search scores it
            reach = 0
            for d in reply:
                reach |= masks[d] | (1 << d)
            if not masks[m] & ~reach:
                hit = True
                break
        self._covered[key] = hit
        return hit

    def _replies(self, dets: tuple[int, ...], seat: int, done: tuple[int, ...],
                 out: list[tuple[int, ...]]) -> None:
        """Every joint reply of the detectives (seat order; a boxed-in one stays put)."""
        if seat >= len(dets):
            out.append(done)
            return
        assert self._tb is not None
        now = (*done, *dets[seat:])
        options = [n for n in self._tb.neighbours[dets[seat]] if n not in now]
        for n in options or [dets[seat]]:
            self._replies(dets, seat + 1, (*done, n), out)

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
        if depth <= 0 and self.extend and k in rules.reveal_moves and prob >= self.prune:
            depth = 1  # just seen: search the guessing round that follows the reveal
        elif depth <= 0 or prob < self.prune:
            return self._estimate(k, m, dets, mask, moves)
        key = (k, m, mask, depth, *dets)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        self.nodes += 1
        reveal = k + 1 in rules.reveal_moves
        if not reveal:
            spread = 0
            for s in _bits(mask):
                spread |= self._tb.masks[s]
            for d in dets:
                spread &= ~(1 << d)
        best = 0.0
        for n in moves:
            after = (1 << n) if reveal else spread
            value = self._detectives(k + 1, n, dets, after, 0, depth, prob)
            if reveal and self.cover and self._coverable(n, dets):
                value *= 1.0 - self.cover
            if value > best:
                best = value
                if best >= 1.0:
                    break
        self._memo[key] = best
        return best

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
        if mask.bit_count() <= self.paranoid:
            # The detectives (almost) know where he is: assume their worst move for him.
            worst = 1.0
            for n in options:
                if n == m:
                    return 0.0
                moved = (*dets[:seat], n, *dets[seat + 1:])
                worst = min(worst, self._detectives(k, m, moved, mask & ~(1 << n), seat + 1,
                                                    depth, prob))
            return worst
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
        assert self._tb is not None
        eps = self.epsilon
        probs = dict.fromkeys(options, eps / len(options))
        targets = _bits(mask)
        grabs = [o for o in options if mask >> o & 1]
        if grabs and eps < 1.0 and self.grab > 0.0:
            # Sampling detectives step onto a possible station as soon as one of their
            # sampled positions is there: about ``grab`` samples per decision.
            p_grab = (1.0 - eps) * min(1.0, self.grab * len(grabs) / len(targets))
            for o in grabs:
                probs[o] += p_grab / len(grabs)
            eps += p_grab
        if eps < 1.0 and targets and self.model == "mass":
            dist = self._tb.dist
            sums = [sum(dist[o][t] for t in targets) for o in options]
            low = min(sums)
            best = [o for o, x in zip(options, sums, strict=True) if x == low]
            for o in best:
                probs[o] += (1.0 - eps) / len(best)
        elif eps < 1.0 and targets:
            dist = self._tb.dist
            shares = self._shares(targets, dets, 1.0 - eps)
            for t, share in zip(targets, shares, strict=True):
                row = [dist[o][t] for o in options]
                low = min(row)
                best = [o for o, x in zip(options, row, strict=True) if x == low]
                if self.setup and len(targets) == 1 and len(best) > 1:
                    # He was just seen on t: of the steps towards him, take one next to
                    # as many of his exits as possible (set up to cover his next move).
                    exits = self._tb.masks[t] & ~blocked
                    cover = [(self._tb.masks[o] & exits).bit_count() for o in best]
                    top = max(cover)
                    best = [o for o, c in zip(best, cover, strict=True) if c == top]
                for o in best:
                    probs[o] += share / len(best)
        elif eps < 1.0:
            for o in options:
                probs[o] += (1.0 - eps) / len(options)
        out = [(o, p) for o, p in probs.items() if p > 0.0]
        if len(self._chase) > 200_000:
            self._chase.clear()
        self._chase[key] = out
        return out

    def _shares(self, targets: list[int], dets: tuple[int, ...], total: float) -> list[float]:
        """How the model's detectives split ``total`` over the possible stations they
        steer for: evenly, or (``lc``) as Location Categorization samples them — a
        category (distance to the nearest detective: 1, 2, 3, 4, 5+) in proportion to its
        learned weight, then a station evenly within it."""
        if not self._lc:
            return [total / len(targets)] * len(targets)
        assert self._tb is not None
        dist = self._tb.dist
        cats = [min(max(min(dist[t][d] for d in dets), 1), 5) - 1 for t in targets]
        counts = [0] * 5
        for c in cats:
            counts[c] += 1
        norm = sum(self._lc[c] for c in range(5) if counts[c])
        if norm <= 0.0:
            return [total / len(targets)] * len(targets)
        return [total * self._lc[c] / norm / counts[c] for c in cats]

    def _estimate(self, k: int, m: int, dets: tuple[int, ...], mask: int,
                  moves: list[int]) -> float:
        """Survival estimate in (0, 1) of a position at the horizon, Mister X to move."""
        assert self._tb is not None
        dist = self._tb.dist
        threats = dets
        if self.live and self._tb.bipartite:
            # With Mister X to move, a detective at an odd distance can never step onto
            # him (single steps on a bipartite board): it only blocks.
            threats = tuple(d for d in dets if dist[m][d] % 2 == 0)
        near = min((dist[m][d] for d in threats), default=4)
        escapes = sum(1 for n in moves if min((dist[n][d] for d in threats), default=2) >= 2)
        size: float = max(1, mask.bit_count())
        if self._lc and size > 1 and mask >> m & 1:
            # How unlikely a determinization puts him where he is (uniform: 1 / size).
            targets = _bits(mask)
            size = 1.0 / self._shares(targets, dets, 1.0)[targets.index(m)]
        score = (self.w_dist * min(near - 1, 3) + self.w_belief * math.log2(size)
                 + self.w_escape * escapes)
        if self.w_area:
            score += self.w_area * self._territory(m, dets)
        if (self.w_surv and self._rules is not None and len(dets) <= 2
                and _exact_random_ok(self._rules, len(dets))):
            # Rounds he lasts even against detectives that see him: how cornered he is.
            rounds = _full_info(self._rules, k, m, dets, len(dets)) - k
            score += self.w_surv * min(rounds, 6)
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


# ---------------------------------------------------------------------- matrix games


def _maximin(matrix: list[list[float]]) -> list[float]:
    """The row player's equilibrium mixture of a zero-sum matrix game (rows maximise).

    Shifted to positive payoffs, the column player's LP ``max sum(y) s.t. A y <= 1, y >= 0``
    is solved by the simplex method from the origin (Bland's rule, so it terminates); the
    row player's mixture is the normalised dual solution, read from the slack columns.
    """
    rows, cols = len(matrix), len(matrix[0])
    shift = 1.0 - min(min(r) for r in matrix)
    # Tableau: rows x (cols + rows slacks + rhs); objective row last (reduced costs).
    tab = [[matrix[i][j] + shift for j in range(cols)]
           + [1.0 if s == i else 0.0 for s in range(rows)] + [1.0] for i in range(rows)]
    obj = [-1.0] * cols + [0.0] * rows + [0.0]
    basis = [cols + i for i in range(rows)]
    width = cols + rows
    for _ in range(200):
        enter = next((j for j in range(width) if obj[j] < -1e-12), -1)
        if enter < 0:
            break
        leave, ratio = -1, math.inf
        for i in range(rows):
            a = tab[i][enter]
            if a > 1e-12:
                r = tab[i][-1] / a
                if r < ratio - 1e-12 or (abs(r - ratio) <= 1e-12 and basis[i] < basis[leave]):
                    leave, ratio = i, r
        if leave < 0:  # unbounded cannot happen with positive payoffs
            break
        pivot = tab[leave][enter]
        tab[leave] = [x / pivot for x in tab[leave]]
        for i in range(rows):
            if i != leave and tab[i][enter] != 0.0:
                f = tab[i][enter]
                tab[i] = [x - f * y for x, y in zip(tab[i], tab[leave], strict=True)]
        f = obj[enter]
        obj = [x - f * y for x, y in zip(obj, tab[leave], strict=True)]
        basis[leave] = enter
    duals = [max(0.0, obj[cols + i]) for i in range(rows)]
    total = sum(duals)
    if total <= 0.0:
        return [1.0 / rows] * rows
    return [d / total for d in duals]


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
def _full_info(rules: Ruleset, k: int, m: int, dets: tuple[int, ...], seat: int) -> int:
    """How many log entries Mister X reaches (``max_moves + 1``: he wins) when the
    detectives see him and play to catch him soonest, he to delay it: ``k`` entries made,
    Mister X on ``m``, detective ``seat`` (0-based; ``len(dets)``: Mister X) to move."""
    neighbours = _tables(rules.board).neighbours
    if seat >= len(dets):
        if k >= rules.max_moves:
            return rules.max_moves + 1
        return max((_full_info(rules, k + 1, n, dets, 0) for n in neighbours[m]
                    if n not in dets), default=k)
    options = [n for n in neighbours[dets[seat]] if n not in dets]
    if not options:
        return _full_info(rules, k, m, dets, seat + 1)
    if m in options:
        return k
    return min(_full_info(rules, k, m, (*dets[:seat], n, *dets[seat + 1:]), seat + 1)
               for n in options)


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
