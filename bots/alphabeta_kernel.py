"""Alpha-Beta on the compiled rules kernel: the search of :mod:`bots.alphabeta` in numba.

The same paranoid alpha-beta as the reference search (``profile=reference``): the same
static evaluation and terminal scores (:mod:`bots.eval`), the same move ordering, ``width``
cut and Mister X move filter, over the compact state of :mod:`bots.mcts.kernel`; with the
transposition table off it visits the same nodes in the same order and returns the same
values (``tests/bots/test_alphabeta_kernel.py``). The public possible-location set, which the
evaluation scores, travels along as one byte per station, updated by the steps of
:mod:`game.belief`.

On top, a transposition table: fixed-size arrays indexed by a hash of the compact state and
the possible-location set, holding depth, value, bound type and best move. The stored best
move is tried first and a deep enough stored value cuts the node off. Exact values stay
the reference's; the bounds that failing nodes return may differ, so of two moves of equal
value the search may pick the other one.

Iterative deepening runs here too, whole: one compiled call per move
(:meth:`KernelSearch.search`) orders the root moves, searches every determinization to one
depth after another, re-sorts the root moves after each and stops at the depth limit, at a
forced result or past the deadline; the bot (:class:`bots.alphabeta.AlphaBetaBot`) only
samples the determinizations and maps the chosen row back to a move. The search reads the
clock every 1024 nodes (numba's object mode, a microsecond) and gives up past the deadline.
The table is never emptied: a per-move generation number is mixed into every hash, so the
entries of earlier moves no longer match.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import njit, objmode

from bots.eval import WIN, Weights
from bots.mcts import kernel as _kernel
from bots.mcts.compact import compact_view, to_move
from bots.mcts.kernel import (
    DOUBLE,
    OUT_CAUGHT,
    OUT_CORNERED,
    OUT_NONE,
    SECRET,
    ST_K,
    ST_LOG,
    ST_OUT,
    ST_POS,
    ST_TO_MOVE,
    Tables,
    apply_move,
    copy_row,
    max_bound_from,
    search_moves,
    state_size,
    tables_for,
    tk_index,
)
from bots.numba_cache import forget_stale, guard_cache
from game import Move, MrXView, Ruleset, View

# The search compiles in the rules kernel's functions (numba loads a cache on the first call,
# so this runs before any): its cache must not outlive a change of the kernel.
forget_stale(__file__, [_kernel.__file__ or ""])

MAX_PLY = 66  # plies of buffers: bots.alphabeta.MAX_DEPTH plus the root, with a spare
TT_BITS = 18  # default table: 2**18 entries, 10 MiB
_CLOCK_MASK = 1023  # read the clock when the node count is a multiple of 1024
_INSERTION_MAX = 24  # longer move lists are merge sorted (_argsort_stable)

# Workspace.counters
C_NODES, C_LIMIT, C_ABORT, C_HITS, C_GEN, C_ROOT = 0, 1, 2, 3, 4, 5
# Workspace.config
CF_FILTER, CF_WIDTH, CF_TT = 0, 1, 2
# Transposition table bound types
EXACT, LOWER, UPPER = 0, 1, 2

_MATE = WIN / 2  # scores beyond this come from a finished game (terminal_score)
_FORCED = 50_000  # a mean root value beyond this is a forced result: deepening stops
_NO_MOVE = -1
_DECIDED = -2  # _probe: the table decides the node
_MUL = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


class Workspace(NamedTuple):
    """The preallocated buffers of one search (``P = MAX_PLY`` levels, ``M`` moves, ``T``
    table entries). Few arrays: every array of a tuple handed to a compiled function costs
    reference counting."""

    states: Any  # int32[P, S]: the compact state at each ply
    moves: Any  # int32[P, M, 4]: moves generated at each ply (ply 0: the root moves)
    keys: Any  # int64[P, M]: their ordering keys
    order: Any  # int32[P, M]: indices into moves, in search order
    belief: Any  # uint8[P, n+1]: the possible-location set at each ply
    count: Any  # int64[P]: its size
    bhash: Any  # uint64[P]: its hash (xor of zobrist)
    zobrist: Any  # uint64[n+1]: one random key per station
    tmp: Any  # uint8[n+1]: between the legs of a double move
    tt_key: Any  # uint64[T]: full hash of the stored node (0: empty)
    tt_value: Any  # float64[T]: value, ply-relative for finished-game scores
    tt_info: Any  # int64[T, 3]: T_* (depth, bound type, packed best move)
    counters: Any  # int64[6]: C_* (nodes, node limit, aborted, table cut-offs, move number,
    #   root moves)
    config: Any  # int64[3]: CF_* (filter, width, table on)
    weights: Any  # float64[4]: Weights (distance, spread, possible, tickets)
    deadline: Any  # float64[1]: time.perf_counter() deadline (inf: none)
    frame_f: Any  # float64[P, 4]: the search stack, F_* (window now and on entry)
    frame_i: Any  # int64[P, 5]: I_* (plies left, moves, next move, best move, table slot)
    frame_h: Any  # uint64[P]: the node's table hash
    root_f: Any  # float64[3, M]: R_* per root move (indexed as moves[0])


# Workspace.root_f rows: summed values of the last finished iteration, of the running one,
# and the sort keys (in root order)
R_TOTAL, R_RUN, R_KEY = 0, 1, 2


# Workspace.frame_f and frame_i columns, tt_info columns
F_ALPHA, F_BETA, F_ALPHA0, F_BETA0 = 0, 1, 2, 3
I_DEPTH, I_MOVES, I_NEXT, I_BEST, I_SLOT = 0, 1, 2, 3, 4
T_DEPTH, T_FLAG, T_MOVE = 0, 1, 2


# The helpers below are inlined into the search loop (``inline="always"``): a call between
# compiled functions increments and decrements the reference count of every array it is
# passed (Tables' eleven included). Inlined, the nodes per second rose by about a half on
# grid5 and a tenth on classic.


# --------------------------------------------------------------------------- scores


@njit(cache=True, inline="always")
def _terminal(out: int, ply: int) -> float:
    """bots.eval.terminal_score: a caught or cornered Mister X loses, quicker wins score
    higher."""
    if out == OUT_CAUGHT or out == OUT_CORNERED:  # noqa: SIM109 (plain compares for numba)
        return -WIN + ply
    return WIN - ply


@njit(cache=True, inline="always")
def _evaluate(dist: Any, st: Any, possible: int, w: Any) -> float:
    """bots.eval.evaluate on a compact state, term for term in the same order (so the
    floats agree)."""
    here = st[ST_POS]
    k = st[ST_K]
    low = 1 << 30
    total = 0
    for seat in range(1, k + 1):
        gap = min(int(dist[here, st[ST_POS + seat]]), 6)
        low = min(low, gap)
        total += gap
    own = st[tk_index(st, 0, SECRET)] + 2 * st[tk_index(st, 0, DOUBLE)]
    return float(w[0] * low + w[1] * total / k + w[2] * math.log2(max(1, possible))
                 + w[3] * own)


# --------------------------------------------------------------------------- belief


@njit(cache=True, inline="always")
def _step(adj: Any, deg: Any, sec: Any, sec_deg: Any, reveal: Any, zobrist: Any, src: Any,
          dst: Any, st: Any, ticket: int, station: int, slot: int) -> tuple[int, Any]:
    """game.belief.after_mrx_move for one log slot: the revealed station, or every station
    one ``ticket`` edge from ``src`` minus the detectives. Returns (size, hash). (Tables'
    arrays one by one: a tuple argument costs reference counting on every call)."""
    dst[:] = 0
    if reveal[slot]:
        dst[station] = 1
        return 1, zobrist[station]
    for s in range(1, dst.shape[0]):
        if src[s]:
            if ticket == SECRET:
                for j in range(sec_deg[s]):
                    dst[sec[s, j]] = 1
            else:
                for j in range(deg[ticket, s]):
                    dst[adj[ticket, s, j]] = 1
    for seat in range(1, st[ST_K] + 1):
        dst[st[ST_POS + seat]] = 0
    size = 0
    h = np.uint64(0)
    for s in range(1, dst.shape[0]):
        if dst[s]:
            size += 1
            h ^= zobrist[s]
    return size, h


#: np.int64, for the moves' int32 fields passed to ``apply_move``: 64-bit like every other
#: caller's (Python ints), so numba compiles one ``apply_move`` (about 10 s), not two.
_wide: Any = np.int64


@njit(cache=True, inline="always")
def _child(tb: Tables, states: Any, moves: Any, belief: Any, count: Any,
           bhash: Any, zobrist: Any, tmp: Any, ply: int, index: int, leaf: bool) -> None:
    """Fill ply ``ply + 1`` with the state after move ``index`` of ply ``ply`` and its
    possible-location set (game.belief); at a leaf after a detective's move only the size
    of the set is needed, and a finished game needs none."""
    parent = states[ply]
    child = states[ply + 1]
    copy_row(child, parent)
    mv = moves[ply, index]
    apply_move(tb, child, _wide(mv[0]), _wide(mv[1]), _wide(mv[2]), _wide(mv[3]))
    if child[ST_OUT] != OUT_NONE:
        return
    src = belief[ply]
    dst = belief[ply + 1]
    if parent[ST_TO_MOVE] == 0:
        log = parent[ST_LOG]
        adj, deg, sec, sec_deg, reveal = tb.adj, tb.deg, tb.sec, tb.sec_deg, tb.reveal
        size, h = _step(adj, deg, sec, sec_deg, reveal, zobrist, src, dst, child, mv[0],
                        mv[1], log + 1)
        if mv[2] >= 0:
            copy_row(tmp, dst)
            size, h = _step(adj, deg, sec, sec_deg, reveal, zobrist, tmp, dst, child, mv[2],
                            mv[3], log + 2)
        count[ply + 1] = size
        bhash[ply + 1] = h
        return
    # A detective who did not catch Mister X: he is not on its new station.
    there = mv[1]
    count[ply + 1] = count[ply] - src[there]
    if leaf:
        return
    copy_row(dst, src)
    h = bhash[ply]
    if src[there]:
        dst[there] = 0
        h ^= zobrist[there]
    bhash[ply + 1] = h


# --------------------------------------------------------------------------- move ordering


@njit(cache=True)
def _argsort_stable(keys: Any, n: int) -> Any:
    """The indices 0..n-1 stably sorted by ``keys[:n]``, as ``np.argsort(keys[:n],
    kind="mergesort")``: a bottom-up merge sort, written out because numba's own stable
    argsort takes seconds to compile for each type of key."""
    a = np.arange(n)
    b = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j < hi and (i >= mid or keys[a[j]] < keys[a[i]]):
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True, inline="always")
def _stable_sort(keys: Any, order: Any, n: int) -> None:
    """``order[:n]``: indices 0..n-1 sorted by ``keys``, ties in generation order (as
    Python's sorted)."""
    if n > _INSERTION_MAX:
        perm = _argsort_stable(keys, n)
        for i in range(n):
            order[i] = perm[i]
        return
    for i in range(n):
        order[i] = i
    for i in range(1, n):
        o = order[i]
        key = keys[o]
        j = i
        while j > 0 and keys[order[j - 1]] > key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = o


@njit(cache=True, inline="always")
def _pack(mv: Any) -> int:
    """One int64 for a move row (the table's best move)."""
    return int((((np.int64(mv[0]) + 1) * 65536 + mv[1]) * 8 + mv[2] + 1) * 65536 + mv[3])


@njit(cache=True, inline="always")
def _ordered(tb: Tables, st: Any, moves: Any, keys: Any, order: Any, filtering: bool,
             width: int, tt_move: int) -> int:
    """Generate and order the moves of ``st``; returns how many to search. As
    AlphaBetaBot._ordered: Mister X farthest from the nearest detective first (then single
    before double, then by ticket; filtered, at most ``width``); a detective closest to
    Mister X first (then by ticket). The table's best move, if among them, goes first."""
    n: int = search_moves(tb, st, moves, filtering)  # (an untyped decorator: Any to mypy)
    dist = tb.dist
    here = st[ST_POS]
    mrx = st[ST_TO_MOVE] == 0
    if mrx:
        for i in range(n):
            double = moves[i, 2] >= 0
            dest = moves[i, 3] if double else moves[i, 1]
            near = 1 << 20
            for seat in range(1, st[ST_K] + 1):
                near = min(near, int(dist[dest, st[ST_POS + seat]]))
            keys[i] = (-near * 2 + (1 if double else 0)) * 8 + moves[i, 0]
    else:
        for i in range(n):
            keys[i] = int(dist[here, moves[i, 1]]) * 8 + moves[i, 0]
    _stable_sort(keys, order, n)
    if mrx and 0 < width < n:
        n = width
    if tt_move != _NO_MOVE:
        for i in range(n):
            o = order[i]
            if _pack(moves[o]) == tt_move:
                for j in range(i, 0, -1):
                    order[j] = order[j - 1]
                order[0] = o
                break
    return n


# --------------------------------------------------------------------------- table


@njit(cache=True, inline="always")
def _hash(st: Any, belief_hash: Any) -> Any:
    """64-bit hash of a compact state and its possible-location set (never 0)."""
    h = belief_hash
    for i in range(st.shape[0]):
        h = (h ^ np.uint64(st[i])) * _MUL
    h ^= h >> _S30
    h *= _MIX1
    h ^= h >> _S27
    h *= _MIX2
    h ^= h >> _S31
    return h | np.uint64(1)


@njit(cache=True, inline="always")
def _to_table(value: float, ply: int) -> float:
    """A finished-game score relative to this node (it counts plies from the root)."""
    if value > _MATE:
        return value + ply
    if value < -_MATE:
        return value - ply
    return value


@njit(cache=True, inline="always")
def _from_table(value: float, ply: int) -> float:
    if value > _MATE:
        return value - ply
    if value < -_MATE:
        return value + ply
    return value


@njit(cache=True, inline="always")
def _store(tt_key: Any, tt_value: Any, tt_info: Any, slot: int, h: Any, depth: int,
           ply: int, value: float, alpha: float, beta: float, best: int) -> None:
    flag = EXACT
    if value <= alpha:
        flag = UPPER
    elif value >= beta:
        flag = LOWER
    tt_key[slot] = h
    tt_value[slot] = _to_table(value, ply)
    tt_info[slot, T_DEPTH] = depth
    tt_info[slot, T_FLAG] = flag
    tt_info[slot, T_MOVE] = best


# --------------------------------------------------------------------------- search


@njit(cache=True)
def _now() -> float:
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True, inline="always")
def _probe(tt_key: Any, tt_value: Any, tt_info: Any, counters: Any, ff: Any, h: Any,
           slot: Any, left: int, ply: int) -> tuple[float, int]:
    """Look the node at ``ply`` (hash ``h``, table ``slot``) up in the transposition table:
    ``(value, _DECIDED)`` when a stored bound decides it, else ``(0.0, the stored best move
    or _NO_MOVE)``."""
    if tt_key[slot] != h:
        return 0.0, _NO_MOVE
    if tt_info[slot, T_DEPTH] >= left:
        stored = _from_table(tt_value[slot], ply)
        flag = tt_info[slot, T_FLAG]
        if flag == EXACT or (flag == LOWER and stored >= ff[ply, F_BETA]) \
                or (flag == UPPER and stored <= ff[ply, F_ALPHA]):
            counters[C_HITS] += 1
            return stored, _DECIDED
    return 0.0, tt_info[slot, T_MOVE]


@njit(cache=True, inline="always")
def _improve(moves: Any, order: Any, ff: Any, fi: Any, ply: int, i: int, value: float,
             maximise: bool) -> None:
    """Raise the node's alpha (Mister X to move) or lower its beta to ``value`` of its
    ``i``-th move, keeping that move as the best one, if it is better."""
    if maximise:
        if value > ff[ply, F_ALPHA]:
            ff[ply, F_ALPHA] = value
            fi[ply, I_BEST] = _pack(moves[ply, order[ply, i]])
    elif value < ff[ply, F_BETA]:
        ff[ply, F_BETA] = value
        fi[ply, I_BEST] = _pack(moves[ply, order[ply, i]])


@njit(cache=True, inline="always")
def _complete(tt_key: Any, tt_value: Any, tt_info: Any, ff: Any, fi: Any, fh: Any, ply: int,
              maximise: bool, use_tt: bool) -> float:
    """The value of the node at ``ply``, all moves searched or cut off (stored in the
    table when it is on)."""
    value: float = ff[ply, F_ALPHA] if maximise else ff[ply, F_BETA]
    if use_tt:
        _store(tt_key, tt_value, tt_info, fi[ply, I_SLOT], fh[ply], fi[ply, I_DEPTH], ply,
               value, ff[ply, F_ALPHA0], ff[ply, F_BETA0], fi[ply, I_BEST])
    return value


@njit(cache=True)
def _search(tb: Tables, ws: Workspace, depth: int, alpha: float, beta: float,
            top: int) -> float:
    """AlphaBetaBot._search at ``ws.states[top]``: fail-hard alpha-beta, Mister X
    maximising, on an explicit stack of frames (numba's cache mishandles recursion). Sets
    ``counters[C_ABORT]`` (the value is then meaningless) when the budget is spent."""
    states, moves, keys, order = ws.states, ws.moves, ws.keys, ws.order
    belief, count, bhash, zobrist, tmp = ws.belief, ws.count, ws.bhash, ws.zobrist, ws.tmp
    tt_key, tt_value, tt_info = ws.tt_key, ws.tt_value, ws.tt_info
    counters, ff, fi, fh = ws.counters, ws.frame_f, ws.frame_i, ws.frame_h
    weights, dist = ws.weights, tb.dist
    filtering, width = ws.config[CF_FILTER] == 1, ws.config[CF_WIDTH]
    use_tt = ws.config[CF_TT] == 1
    deadline = ws.deadline[0]
    timed = deadline < np.inf
    mask = np.uint64(tt_key.shape[0] - 1)
    # This move's salt: entries stored during earlier moves hash differently, never match.
    salt = np.uint64(counters[C_GEN]) * _MUL
    ply = top
    ff[ply, F_ALPHA] = alpha
    ff[ply, F_BETA] = beta
    fi[ply, I_DEPTH] = depth
    while True:
        # Enter the node at ply (its window and depth set).
        counters[C_NODES] += 1
        nodes = counters[C_NODES]
        if nodes > counters[C_LIMIT] or \
                (timed and (nodes & _CLOCK_MASK) == 0 and _now() > deadline):
            counters[C_ABORT] = 1
            return 0.0
        st = states[ply]
        left = fi[ply, I_DEPTH]
        out = st[ST_OUT]
        done = True
        value = 0.0
        if out != OUT_NONE:
            value = _terminal(out, ply)
        elif left <= 0:
            value = _evaluate(dist, st, count[ply], weights)
        else:
            tt_move = _NO_MOVE
            if use_tt:
                h = _hash(st, bhash[ply] ^ salt)
                slot = np.int64(h & mask)
                fh[ply] = h
                fi[ply, I_SLOT] = slot
                value, tt_move = _probe(tt_key, tt_value, tt_info, counters, ff, h, slot,
                                        left, ply)
            if tt_move != _DECIDED:
                done = False
                fi[ply, I_MOVES] = _ordered(tb, st, moves[ply], keys[ply], order[ply],
                                            filtering, width, tt_move)
                fi[ply, I_NEXT] = 0
                fi[ply, I_BEST] = tt_move
                ff[ply, F_ALPHA0] = ff[ply, F_ALPHA]
                ff[ply, F_BETA0] = ff[ply, F_BETA]
        # Back a decided value up the stack while it completes nodes.
        while done:
            if ply == top:
                return value
            ply -= 1
            i = fi[ply, I_NEXT]
            maximise = states[ply, ST_TO_MOVE] == 0
            _improve(moves, order, ff, fi, ply, i, value, maximise)
            fi[ply, I_NEXT] = i + 1
            done = ff[ply, F_ALPHA] >= ff[ply, F_BETA] or i + 1 >= fi[ply, I_MOVES]
            if done:
                value = _complete(tt_key, tt_value, tt_info, ff, fi, fh, ply, maximise, use_tt)
        # Descend into the node's next move.
        _child(tb, states, moves, belief, count, bhash, zobrist, tmp, ply,
               order[ply, fi[ply, I_NEXT]], fi[ply, I_DEPTH] <= 1)
        ff[ply + 1, F_ALPHA] = ff[ply, F_ALPHA]
        ff[ply + 1, F_BETA] = ff[ply, F_BETA]
        fi[ply + 1, I_DEPTH] = fi[ply, I_DEPTH] - 1
        ply += 1


@njit(cache=True)
def _root_values(tb: Tables, ws: Workspace, n: int, depth: int, values: Any) -> bool:
    """AlphaBetaBot._root_values at ``ws.states[0]`` over the root moves ``ws.moves[0]`` in
    the order ``ws.order[0, :n]``, adding each value to ``values`` (indexed as the moves):
    exact values of every move at a detective's root, alpha-beta values with the best one
    exact at Mister X's. False if the budget ran out first."""
    mrx = ws.states[0, ST_TO_MOVE] == 0
    alpha = -np.inf
    for j in range(n):
        i = ws.order[0, j]
        _child(tb, ws.states, ws.moves, ws.belief, ws.count, ws.bhash,
               ws.zobrist, ws.tmp, 0, i, depth <= 1)
        if mrx:
            value = _search(tb, ws, depth - 1, alpha, np.inf, 1)
            alpha = max(alpha, value)
        else:
            value = _search(tb, ws, depth - 1, -np.inf, np.inf, 1)
        if ws.counters[C_ABORT]:
            return False
        values[i] += value
    return True


@njit(cache=True)
def _set_belief(ws: Workspace, possible: Any) -> None:
    """The root's possible-location set (``possible``: its stations) with size and hash."""
    ws.belief[0] = 0
    h = np.uint64(0)
    for s in possible:
        ws.belief[0, s] = 1
        h ^= ws.zobrist[s]
    ws.count[0] = possible.shape[0]
    ws.bhash[0] = h


@njit(cache=True)
def _resort(order: Any, values: Any, keys: Any, n: int, maximise: bool) -> None:
    """``order[:n]`` stably sorted by ``values`` (highest first if ``maximise``), as
    Python's ``sorted(order, key=..., reverse=maximise)``."""
    for j in range(n):
        keys[j] = -values[order[j]] if maximise else values[order[j]]
    perm = _argsort_stable(keys, n)
    was = order[:n].copy()
    for j in range(n):
        order[j] = was[perm[j]]


@njit(cache=True)
def _deepen(tb: Tables, ws: Workspace, roots: Any, possible: Any, max_depth: int) -> int:
    """AlphaBetaBot.choose's iterative deepening over the determinizations ``roots``
    (compact states that share the possible-location set ``possible``): generate and order
    the root moves of ``roots[0]`` (``ws.moves[0]``, order in ``ws.order[0]``), then for each
    depth sum every root's values per move, re-sort the moves by the sums and stop after
    ``max_depth`` or at a forced result. Returns the last depth finished; its sums stay in
    ``ws.root_f[R_TOTAL]`` and its order in ``ws.order[0]`` (an unfinished iteration, cut
    off by the budget, changes neither)."""
    _set_belief(ws, possible)
    copy_row(ws.states[0], roots[0])
    order = ws.order[0]
    n = _ordered(tb, ws.states[0], ws.moves[0], ws.keys[0], order, ws.config[CF_FILTER] == 1,
                 0, _NO_MOVE)
    ws.counters[C_ROOT] = n
    total, run, keys = ws.root_f[R_TOTAL], ws.root_f[R_RUN], ws.root_f[R_KEY]
    maximise = roots[0, ST_TO_MOVE] == 0
    count = roots.shape[0]
    reached = 0
    for depth in range(1, max_depth + 1):
        run[:n] = 0.0
        for r in range(count):
            copy_row(ws.states[0], roots[r])
            if not _root_values(tb, ws, n, depth, run):
                return reached
        _resort(order, run, keys, n, maximise)
        for j in range(n):
            total[j] = run[j]
        reached = depth
        if abs(total[order[0]]) / count > _FORCED:
            break  # a forced result: deeper search cannot change it
    return reached


# --------------------------------------------------------------------------- Python side


def _workspace(rules: Ruleset, k: int, tt_bits: int) -> Workspace:
    tb = tables_for(rules)
    size, stations = int(max_bound_from(tb)), rules.board.n_stations + 1
    levels = (MAX_PLY, size)
    entries = 1 << tt_bits
    zobrist = np.random.default_rng(27).integers(1, 2**63, stations, dtype=np.uint64)
    return Workspace(
        states=np.zeros((MAX_PLY, state_size(k)), np.int32),
        moves=np.zeros((*levels, 4), np.int32), keys=np.zeros(levels, np.int64),
        order=np.zeros(levels, np.int32), belief=np.zeros((MAX_PLY, stations), np.uint8),
        count=np.zeros(MAX_PLY, np.int64), bhash=np.zeros(MAX_PLY, np.uint64),
        zobrist=zobrist, tmp=np.zeros(stations, np.uint8),
        # Written now (np.full, not np.zeros): page faults here, not in the first search.
        tt_key=np.full(entries, 0, np.uint64),
        tt_value=np.full(entries, 0.0), tt_info=np.full((entries, 3), 0, np.int64),
        counters=np.zeros(6, np.int64), config=np.zeros(3, np.int64),
        weights=np.zeros(4, np.float64), deadline=np.full(1, np.inf),
        frame_f=np.zeros((MAX_PLY, 4)), frame_i=np.zeros((MAX_PLY, 5), np.int64),
        frame_h=np.zeros(MAX_PLY, np.uint64), root_f=np.zeros((3, size)))


class Found(NamedTuple):
    """What :meth:`KernelSearch.search` found."""

    move: Move  # the best root move (with no depth finished: the first in move order)
    value: float  # its mean value over the determinizations (nan with no depth finished)
    depth: int  # the deepest iteration finished (0: none)


class KernelSearch:
    """The compiled search for one ruleset and number of detectives: tables and buffers,
    reused from move to move.

    ``tt_bits`` sizes the transposition table (``2**tt_bits`` entries; 0: no table, the
    reference's exact node order).
    """

    def __init__(self, rules: Ruleset, k: int, weights: Weights, filtering: bool,
                 width: int, tt_bits: int = TT_BITS) -> None:
        """Build the board's tables and the kernel's workspace for ``k`` detectives."""
        self.tables = tables_for(rules)
        self.ws = _workspace(rules, k, max(tt_bits, 0))
        self.ws.config[:] = (int(filtering), width, int(tt_bits > 0))
        self.ws.weights[:] = (weights.distance, weights.spread, weights.possible,
                              weights.tickets)
        _now()  # object mode's first call costs a tenth of a second: not in a timed search

    @property
    def nodes(self) -> int:
        """Nodes searched by the last :meth:`search`."""
        return int(self.ws.counters[C_NODES])

    @property
    def table_cuts(self) -> int:
        """Nodes the last :meth:`search` cut off by a stored value."""
        return int(self.ws.counters[C_HITS])

    def root_moves(self) -> list[Move]:
        """The last :meth:`search`'s root moves, in the order of its last finished
        iteration (with none finished: the initial move order)."""
        ws = self.ws
        return [to_move(ws.moves[0, i].tolist()) for i in ws.order[0, :ws.counters[C_ROOT]]]

    def search(self, view: View, stations: Sequence[int], max_depth: int,
               deadline: float = math.inf, node_limit: int = 2**62) -> Found:
        """AlphaBetaBot's iterative deepening for the seat to move in ``view``, with Mister
        X on each of ``stations`` in turn (a :class:`MrXView`: his own station), to
        ``max_depth`` plies at most, within a ``time.perf_counter()`` deadline and a node
        limit. Root moves are the kernel's legal moves (Mister X's filtered if the search
        filters), ordered as AlphaBetaBot._ordered orders them."""
        ws = self.ws
        ws.counters[C_NODES] = ws.counters[C_ABORT] = ws.counters[C_HITS] = 0
        ws.counters[C_LIMIT] = node_limit
        ws.counters[C_GEN] += 1
        ws.deadline[0] = deadline
        if isinstance(view, MrXView):
            stations = [view.mrx]
        roots = np.repeat(compact_view(view, stations[0])[None], len(stations), axis=0)
        roots[:, ST_POS] = stations
        possible = np.fromiter(view.possible, np.int64, len(view.possible))
        depth = _deepen(self.tables, ws, roots, possible, max_depth)
        best = int(ws.order[0, 0])
        value = float(ws.root_f[R_TOTAL, best]) / len(stations) if depth else math.nan
        return Found(to_move(ws.moves[0, best].tolist()), value, depth)


# A cache entry that does not load recompiles; an import under another name skips the cache.
guard_cache(globals())
