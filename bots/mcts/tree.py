"""Compiled MCTS: one UCT tree in flat arrays, shared by every determinization.

Information-set style: each iteration samples Mister X's station (for a detective root),
then descends the single tree choosing only among the children legal in that sample, using
availability counts in the UCB term. One new node per iteration, then an ε-greedy playout
in :mod:`bots.mcts.kernel`, then backpropagation:

* a node reached by Mister X's move scores 1 when Mister X wins;
* a node reached by a detective's move scores 1 when the detective at the root (or, for a
  Mister X root, any detective) catches him, ``1 - r`` when another detective does
  (Coalition Reduction), 0 when Mister X wins.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from bots.mcts import kernel as _kernel
from bots.mcts.kernel import (
    OUT_CAUGHT,
    OUT_STUCK,
    OUT_SURVIVED,
    RP_MAX,
    ST_CATCHER,
    ST_K,
    ST_OUT,
    ST_POS,
    ST_TO_MOVE,
    Tables,
    copy_row,
    max_bound_from,
    playout_from,
    search_moves,
    step,
)
from bots.numba_cache import forget_stale, guard_cache

# The tree compiles in the rules kernel's functions (numba loads a cache on the first call, so
# this runs before any): its cache must not outlive a change of the kernel.
forget_stale(__file__, [_kernel.__file__ or ""])

# Integer parameters (``Params.ints``) and float parameters (``Params.floats``).
IP_ROOT_SEAT, IP_FILTER, IP_LC, IP_DETERMINIZE = 0, 1, 2, 3
FP_C, FP_R, FP_EPSILON = 0, 1, 2
N_CATEGORIES = 5


class Tree(NamedTuple):
    """Node arrays; node 0 is the root. ``size[0]`` is the number of nodes in use."""

    move: Any  # int32[cap, 4]
    key: Any  # int64[cap]
    first: Any  # int32[cap]: first child or -1
    sibling: Any  # int32[cap]: next sibling or -1
    mover: Any  # int32[cap]: seat whose move leads to the node
    visits: Any  # float64[cap]
    wins: Any  # float64[cap]
    avail: Any  # float64[cap]: times the node's move was legal when its parent was visited
    size: Any  # int64[1]


def new_tree(capacity: int) -> Tree:
    """An empty tree (just the root) with room for ``capacity`` nodes."""
    cap = max(2, capacity)
    tree = Tree(np.zeros((cap, 4), np.int32), np.zeros(cap, np.int64),
                np.full(cap, -1, np.int32), np.full(cap, -1, np.int32),
                np.full(cap, -1, np.int32), np.zeros(cap), np.zeros(cap), np.zeros(cap),
                np.ones(1, np.int64))
    return tree


@njit(cache=True, inline="always")
def _key(moves: Any, i: int) -> int:
    return int(((moves[i, 0] * 4096 + moves[i, 1]) * 8 + moves[i, 2] + 1) * 4096 + moves[i, 3])


@njit(cache=True)
def categories(tb: Tables, st: Any, possible: Any) -> Any:
    """Location category of each possible station: distance to the nearest detective,
    1, 2, 3, 4, 5+ mapped to 0..4."""
    out = np.zeros(possible.shape[0], np.int32)
    for i in range(possible.shape[0]):
        best = 1 << 20
        for seat in range(1, st[ST_K] + 1):
            d = int(tb.dist[possible[i], st[ST_POS + seat]])
            if d < best:
                best = d
        out[i] = min(max(best, 1), N_CATEGORIES) - 1
    return out


@njit(cache=True)
def _category_counts(cats: Any) -> Any:
    """How many possible stations fall in each location category."""
    counts = np.zeros(N_CATEGORIES, np.int64)
    for i in range(cats.shape[0]):
        counts[cats[i]] += 1
    return counts


@njit(cache=True, inline="always")
def _lc_category(counts: Any, weights: Any) -> int:
    """A location category among those present, drawn in proportion to its weight (-1 when
    the present ones have no weight)."""
    total = 0.0
    for c in range(N_CATEGORIES):
        if counts[c] > 0:
            total += weights[c]
    if total <= 0.0:
        return -1
    u = np.random.random() * total
    chosen = N_CATEGORIES - 1
    for c in range(N_CATEGORIES):
        if counts[c] > 0:
            u -= weights[c]
            if u < 0.0:
                chosen = c
                break
    while counts[chosen] == 0:
        chosen -= 1
    return chosen


@njit(cache=True, inline="always")
def _nth_of_category(possible: Any, cats: Any, category: int, pick: int) -> int:
    """The ``pick``-th station (from 0, in order) of ``possible`` in ``category``."""
    for i in range(possible.shape[0]):
        if cats[i] == category:
            if pick == 0:
                return int(possible[i])
            pick -= 1
    return int(possible[0])


@njit(cache=True, inline="always")
def _sample(possible: Any, cats: Any, counts: Any, weights: Any, use_lc: bool) -> int:
    """A determinization: uniform, or Location Categorization (a category among those
    present in proportion to its weight, then a station uniformly within it)."""
    chosen = _lc_category(counts, weights) if use_lc else -1
    if chosen < 0:
        return int(possible[np.random.randint(possible.shape[0])])
    return _nth_of_category(possible, cats, chosen, np.random.randint(counts[chosen]))


@njit(cache=True, inline="always")
def _reward(mover: int, mrx_won: bool, catcher: int, root_seat: int, r: float) -> float:
    if mover == 0:
        return 1.0 if mrx_won else 0.0
    if mrx_won:
        return 0.0
    if root_seat == 0 or catcher <= 0 or catcher == root_seat:
        return 1.0
    return 1.0 - r


@njit(cache=True, inline="always")
def _add_child(tree: Tree, parent: int, moves: Any, i: int, key: int, mover: int) -> int:
    node = tree.size[0]
    tree.size[0] += 1
    copy_row(tree.move[node], moves[i])
    tree.key[node] = key
    tree.first[node] = -1
    tree.sibling[node] = tree.first[parent]
    tree.first[parent] = node
    tree.mover[node] = mover
    tree.visits[node] = 0.0
    tree.wins[node] = 0.0
    tree.avail[node] = 0.0
    return int(node)


@njit(cache=True, inline="always")
def _match_children(tree: Tree, node: int, moves: Any, n: int, keys: Any, kids: Any) -> int:
    """Fill ``kids[i]`` with the child for legal move ``i`` (-1 if none); count untried."""
    for i in range(n):
        keys[i] = _key(moves, i)
        kids[i] = -1
    child = tree.first[node]
    while child >= 0:
        for i in range(n):
            if keys[i] == tree.key[child]:
                kids[i] = child
                break
        child = tree.sibling[child]
    untried = 0
    for i in range(n):
        if kids[i] < 0:
            untried += 1
    return untried


@njit(cache=True, inline="always")
def _ucb_pick(tree: Tree, kids: Any, n: int, c: float) -> int:
    best = 0
    best_value = -1e300
    for i in range(n):
        ch = kids[i]
        value = (tree.wins[ch] / tree.visits[ch]
                 + c * math.sqrt(math.log(tree.avail[ch]) / tree.visits[ch]))
        if value > best_value:
            best_value = value
            best = i
    return best


@njit(cache=True, inline="always")
def _nth_untried(kids: Any, n: int, untried: int) -> int:
    pick = np.random.randint(untried)
    for i in range(n):
        if kids[i] < 0:
            if pick == 0:
                return int(i)
            pick -= 1
    return 0


@njit(cache=True)
def run_iterations(tb: Tables, tree: Tree, root: Any, possible: Any, weights: Any,
                   ints: Any, floats: Any, iterations: int, seed: int) -> None:
    """Run ``iterations`` MCTS iterations from ``root`` into ``tree`` (seeded)."""
    np.random.seed(seed)
    size = max_bound_from(tb)
    moves = np.zeros((size, 4), np.int32)
    keys = np.zeros(size, np.int64)
    kids = np.zeros(size, np.int32)
    path = np.zeros((tb.rp[RP_MAX] + 2) * (root[ST_K] + 1) + 8, np.int32)
    cats = categories(tb, root, possible)
    counts = _category_counts(cats)
    st = root.copy()
    filtering = ints[IP_FILTER] == 1
    c, r, epsilon = floats[FP_C], floats[FP_R], floats[FP_EPSILON]
    cap = tree.key.shape[0]
    for _ in range(iterations):
        copy_row(st, root)
        if ints[IP_DETERMINIZE] == 1:
            st[ST_POS] = _sample(possible, cats, counts, weights, ints[IP_LC] == 1)
        node = 0
        depth = 0
        n = search_moves(tb, st, moves, filtering)
        while n > 0:
            untried = _match_children(tree, node, moves, n, keys, kids)
            for i in range(n):
                if kids[i] >= 0:
                    tree.avail[kids[i]] += 1.0
            expanded = untried > 0
            if expanded:
                if tree.size[0] >= cap:
                    break
                i = _nth_untried(kids, n, untried)
                node = _add_child(tree, node, moves, i, keys[i], st[ST_TO_MOVE])
                tree.avail[node] += 1.0
            else:
                i = _ucb_pick(tree, kids, n, c)
                node = kids[i]
            n = step(tb, st, moves, i, filtering)
            depth += 1
            path[depth] = node
            if expanded:
                break
        playout_from(tb, st, moves, n, epsilon, filtering)
        mrx_won = st[ST_OUT] == OUT_SURVIVED or st[ST_OUT] == OUT_STUCK
        catcher = st[ST_CATCHER] if st[ST_OUT] == OUT_CAUGHT else 0
        tree.visits[0] += 1.0
        for d in range(1, depth + 1):
            nd = path[d]
            tree.visits[nd] += 1.0
            tree.wins[nd] += _reward(tree.mover[nd], mrx_won, catcher, ints[IP_ROOT_SEAT], r)


@njit(cache=True)
def root_children(tree: Tree) -> Any:
    """Rows ``(t1, d1, t2, d2, visits, wins)`` for the root's children (float64)."""
    count = 0
    child = tree.first[0]
    while child >= 0:
        count += 1
        child = tree.sibling[child]
    out = np.zeros((count, 6))
    child = tree.first[0]
    row = 0
    while child >= 0:
        for j in range(4):
            out[row, j] = tree.move[child, j]
        out[row, 4] = tree.visits[child]
        out[row, 5] = tree.wins[child]
        row += 1
        child = tree.sibling[child]
    return out


# A cache entry that does not load recompiles; an import under another name skips the cache.
guard_cache(globals())

__all__ = ["ST_TO_MOVE", "Tree", "categories", "new_tree", "root_children", "run_iterations"]
