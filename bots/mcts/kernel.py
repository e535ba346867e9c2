"""The compiled playout kernel: Scotland Yard rules on a compact integer state (numba).

This is the compiled twin of :mod:`game.state` for search. It must agree with the engine
move for move (``tests/bots/test_kernel.py`` plays thousands of random games through both).

Compact state: one flat ``int32`` array (see the ``ST_*`` offsets): seat to move, log
length, outcome code, catching seat, number of detectives, then the stations of seats
``0..k``, then ``5`` ticket counts per seat. A move is four ints ``(ticket, to, ticket2,
to2)`` with ``ticket2 = -1`` for a single move.

Board and ruleset data travel in a :class:`Tables` tuple of padded arrays built once per
ruleset by :func:`tables_for`.

Search loops use :func:`step` (play a move and get the next mover's moves in one call,
generating each list once) and :func:`playout_from`; :func:`apply_move` and
:func:`search_moves` are the same rules one operation at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np
from numba import njit

from bots.numba_cache import guard_cache
from game.board import Transport
from game.rules import Ruleset

ST_TO_MOVE, ST_LOG, ST_OUT, ST_CATCHER, ST_K, ST_POS = 0, 1, 2, 3, 4, 5

OUT_NONE, OUT_CAUGHT, OUT_SURVIVED, OUT_CORNERED, OUT_STUCK = 0, 1, 2, 3, 4
SECRET, DOUBLE = 3, 4

# Rule parameters (``Tables.rp``).
RP_MRX_TK, RP_DET_TK, RP_TO_MRX, RP_DOUBLE, RP_MAX, RP_FIRST_REVEAL = 0, 1, 2, 3, 4, 5


class Tables(NamedTuple):
    """Padded board tables plus rule parameters for one ruleset."""

    adj: Any  # int32[3, n+1, D]: land neighbours by ticket 0..2
    deg: Any  # int32[3, n+1]
    sec: Any  # int32[n+1, S]: every neighbour (ferry included): secret-ticket moves
    sec_deg: Any  # int32[n+1]
    free: Any  # int32[n+1, F]: ticketless detectives: land neighbours
    free_t: Any  # int32[n+1, F]: ...shown with the cheapest ticket
    free_deg: Any  # int32[n+1]
    taxi_only: Any  # bool[n+1]: no bus or underground edge here
    dist: Any  # int16[n+1, n+1]: land shortest paths
    rp: Any  # int32[6]: RP_* rule parameters
    reveal: Any  # bool[max_moves + 3]: reveal[slot]


def _padded(rows: list[list[int]]) -> tuple[Any, Any]:
    width = max(1, max(len(r) for r in rows))
    table = np.zeros((len(rows), width), dtype=np.int32)
    deg = np.zeros(len(rows), dtype=np.int32)
    for i, row in enumerate(rows):
        table[i, :len(row)] = row
        deg[i] = len(row)
    return table, deg


@cache
def tables_for(rules: Ruleset) -> Tables:
    """The compact tables of ``rules`` (cached per ruleset object)."""
    board = rules.board
    adj = board.adjacency
    stations = range(board.n_stations + 1)
    land = [[list(adj[t][s]) for s in stations] for t in (0, 1, 2)]
    width = max(1, max(len(r) for rows in land for r in rows))
    adj_arr = np.zeros((3, len(stations), width), dtype=np.int32)
    deg = np.zeros((3, len(stations)), dtype=np.int32)
    for t in range(3):
        for s in stations:
            adj_arr[t, s, :len(land[t][s])] = land[t][s]
            deg[t, s] = len(land[t][s])
    sec, sec_deg = _padded([sorted({d for t in Transport for d in adj[t][s]}) for s in stations])
    free_rows = [sorted({d for t in (0, 1, 2) for d in adj[t][s]}) for s in stations]
    free, free_deg = _padded(free_rows)
    free_t, _ = _padded([[min(t for t in (0, 1, 2) if d in adj[t][s]) for d in row]
                         for s, row in zip(stations, free_rows, strict=True)])
    taxi_only = np.array([not adj[1][s] and not adj[2][s] for s in stations], dtype=np.bool_)
    rp = np.array([rules.mrx_tickets is not None, rules.detective_tickets is not None,
                   rules.tickets_to_mrx, rules.double_moves, rules.max_moves,
                   # No reveal at all: every slot comes before "the first reveal".
                   min(rules.reveal_moves, default=rules.max_moves + 1)], dtype=np.int32)
    reveal = np.zeros(rules.max_moves + 3, dtype=np.bool_)
    for slot in rules.reveal_moves:
        reveal[slot] = True
    return Tables(adj_arr, deg, sec, sec_deg, free, free_t, free_deg, taxi_only,
                  np.ascontiguousarray(board.distances()), rp, reveal)


def state_size(k: int) -> int:
    """Length of the compact state array with ``k`` detectives."""
    return ST_POS + (k + 1) * 6


_F = TypeVar("_F", bound=Callable[..., Any])


def _no_refcounts(fn: _F) -> _F:
    """``njit(cache=True)`` without reference counting (see "Speed" below)."""
    return cast(_F, njit(cache=True, _nrt=False)(fn))  # type: ignore[call-overload]


# --------------------------------------------------------------------------- state access


@njit(cache=True, inline="always")
def tk_index(st: Any, seat: int, ticket: int) -> int:
    """Index of a ticket count in the compact state."""
    return int(ST_POS + st[ST_K] + 1 + seat * 5 + ticket)


# Speed. Each call between compiled functions, and each copy of an argument that numba's
# inlining makes, increments and decrements (atomically) the reference count of every array
# involved, eleven for ``Tables``: about a third of the search time. So the rules live in
# private helpers inlined (``inline="always"``) into the public entry points, which are
# compiled without reference counting (``_nrt=False``, an option of numba's ``jit``): they
# allocate nothing, and their callers own every array they touch. ``random_playouts``, which
# allocates, and ``max_bound_from`` keep the default. ``playout_from`` calls ``step`` rather
# than inlining it: about 20 % slower, but a third of the cold compile time.


@njit(cache=True, inline="always")
def copy_row(dst: Any, src: Any) -> None:
    """``dst[:] = src`` for two 1-D arrays of one length, as a loop: numba's slice
    assignment also compiles a shape-mismatch error message, seconds of cold compile."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, inline="always")
def _blocked(st: Any, station: int, skip: int) -> bool:
    """True if a detective other than seat ``skip`` stands on ``station``."""
    for seat in range(1, st[ST_K] + 1):  # noqa: SIM110 (numba: no generators)
        if seat != skip and st[ST_POS + seat] == station:
            return True
    return False


@njit(cache=True, inline="always")
def _add(out: Any, n: int, t1: int, d1: int, t2: int, d2: int) -> int:
    out[n, 0] = t1
    out[n, 1] = d1
    out[n, 2] = t2
    out[n, 3] = d2
    return n + 1


# --------------------------------------------------------------------------- move generation


@njit(cache=True, inline="always")
def _mrx_legs(tb: Tables, st: Any, out: Any, n: int, here: int, first: int,
              t_first: int) -> int:
    """Append single moves from ``here`` (as second legs after ``t_first``/``first`` if
    ``first > 0``). Ticket counts are those left after the first leg."""
    has_tk = tb.rp[RP_MRX_TK] == 1
    for t in range(SECRET + 1):  # the land tickets, then secret ones (ticket games only)
        if t == SECRET and not has_tk:
            break
        if has_tk:
            left = st[tk_index(st, 0, t)] - (1 if first > 0 and t == t_first else 0)
            if left <= 0:
                continue
        for j in range(tb.sec_deg[here] if t == SECRET else tb.deg[t, here]):
            d = tb.sec[here, j] if t == SECRET else tb.adj[t, here, j]
            if not _blocked(st, d, 0):
                n = _add(out, n, t_first, first, t, d) if first > 0 else _add(out, n, t, d, -1, 0)
    return n


@njit(cache=True, inline="always")
def _threatened(tb: Tables, st: Any) -> bool:
    """True if some detective could reach Mister X's station next turn."""
    here = st[ST_POS]
    for seat in range(1, st[ST_K] + 1):  # noqa: SIM110 (numba: no generators)
        if tb.dist[st[ST_POS + seat], here] <= 1:
            return True
    return False


@njit(cache=True, inline="always")
def _mrx_moves(tb: Tables, st: Any, out: Any, doubles: bool) -> int:
    # One loop for single moves (i = -1) and for the second legs after each single move i,
    # so that the inlined code holds one copy of _mrx_legs.
    more = doubles and tb.rp[RP_MRX_TK] == 1 and tb.rp[RP_DOUBLE] == 1 \
        and st[tk_index(st, 0, DOUBLE)] > 0 and st[ST_LOG] + 2 <= tb.rp[RP_MAX]
    n = 0
    singles = 0
    i = -1
    while True:
        if i < 0:
            n = _mrx_legs(tb, st, out, n, st[ST_POS], 0, 0)
            singles = n
            if not more:
                return n
        else:
            n = _mrx_legs(tb, st, out, n, out[i, 1], out[i, 1], out[i, 0])
        i += 1
        if i >= singles:
            return n


@njit(cache=True, inline="always")
def _detective_moves(tb: Tables, st: Any, seat: int, out: Any) -> int:
    here = st[ST_POS + seat]
    n = 0
    if tb.rp[RP_DET_TK] == 0:
        for j in range(tb.free_deg[here]):
            d = tb.free[here, j]
            if not _blocked(st, d, seat):
                n = _add(out, n, tb.free_t[here, j], d, -1, 0)
        return n
    for t in range(3):
        if st[tk_index(st, seat, t)] <= 0:
            continue
        for j in range(tb.deg[t, here]):
            d = tb.adj[t, here, j]
            if not _blocked(st, d, seat):
                n = _add(out, n, t, d, -1, 0)
    return n


@njit(cache=True, inline="always")
def _can_move_free(tb: Tables, st: Any, seat: int, here: int) -> bool:
    """True if detective ``seat`` (tickets not counted) has an unblocked move from ``here``."""
    for j in range(tb.free_deg[here]):  # noqa: SIM110 (numba: no generators)
        if not _blocked(st, tb.free[here, j], seat):
            return True
    return False


@njit(cache=True, inline="always")
def _can_move_by_ticket(tb: Tables, st: Any, seat: int, here: int, counted: bool) -> bool:
    """True if ``seat`` has an unblocked taxi, bus or underground move from ``here`` (with a
    ticket for it when tickets are ``counted``)."""
    for t in range(3):
        if not counted or st[tk_index(st, seat, t)] > 0:
            for j in range(tb.deg[t, here]):
                if not _blocked(st, tb.adj[t, here, j], seat):
                    return True
    return False


@njit(cache=True, inline="always")
def _can_move_secret(tb: Tables, st: Any, here: int) -> bool:
    """True if Mister X has an unblocked secret (ferry) move from ``here``."""
    for j in range(tb.sec_deg[here]):  # noqa: SIM110 (numba: no generators)
        if not _blocked(st, tb.sec[here, j], 0):
            return True
    return False


@njit(cache=True, inline="always")
def _can_move(tb: Tables, st: Any, seat: int) -> bool:
    """True if ``seat`` has a legal move (for Mister X: a single one), as
    ``_mrx_moves(doubles=False) > 0`` or ``_detective_moves > 0``, stopping at the first."""
    here = st[ST_POS + seat]
    if seat != 0 and tb.rp[RP_DET_TK] == 0:
        return _can_move_free(tb, st, seat, here)
    counted = seat != 0 or tb.rp[RP_MRX_TK] == 1
    if _can_move_by_ticket(tb, st, seat, here, counted):
        return True
    if seat == 0 and counted and st[tk_index(st, 0, SECRET)] > 0:
        return _can_move_secret(tb, st, here)
    return False


# --------------------------------------------------------------------------- move filtering


@njit(cache=True, inline="always")
def _secret_ok(tb: Tables, slot: int, a: int, b: int) -> bool:
    """Filter: no secret ticket before the first reveal, on a reveal, or from a taxi-only
    station unless the move takes the ferry (``b`` not reachable over land)."""
    if slot <= tb.rp[RP_FIRST_REVEAL] or tb.reveal[slot]:
        return False
    return not (tb.taxi_only[a] and tb.dist[a, b] == 1)


@njit(cache=True, inline="always")
def _filter(tb: Tables, st: Any, out: Any, n: int) -> int:
    """Keep the moves that pass :func:`_secret_ok` (in order); returns how many."""
    here = st[ST_POS]
    slot = st[ST_LOG] + 1
    kept = 0
    for i in range(n):
        ok = out[i, 0] != SECRET or _secret_ok(tb, slot, here, out[i, 1])
        if ok and out[i, 2] == SECRET:
            ok = _secret_ok(tb, slot + 1, out[i, 1], out[i, 3])
        if ok:
            if kept != i:
                for j in range(4):
                    out[kept, j] = out[i, j]
            kept += 1
    return kept


@njit(cache=True, inline="always")
def _mrx_search_moves(tb: Tables, st: Any, out: Any, filtering: bool) -> int:
    """Mister X's search moves: all of them, or filtered (falling back to all)."""
    doubles = _threatened(tb, st) if filtering else True
    while True:  # at most twice: filtered, then (nothing kept) all moves
        n = _mrx_moves(tb, st, out, doubles)
        if not filtering:
            return n
        kept = _filter(tb, st, out, n)
        if kept > 0:
            return kept
        filtering = False
        doubles = True


@njit(cache=True, inline="always")
def _search_moves(tb: Tables, st: Any, out: Any, filtering: bool) -> int:
    if st[ST_OUT] != OUT_NONE:
        return 0
    if st[ST_TO_MOVE] != 0:
        return _detective_moves(tb, st, st[ST_TO_MOVE], out)
    return _mrx_search_moves(tb, st, out, filtering)


@_no_refcounts
def search_moves(tb: Tables, st: Any, out: Any, filtering: bool) -> int:
    """Moves a search considers: legal moves, filtered for Mister X if ``filtering``."""
    return _search_moves(tb, st, out, filtering)


# --------------------------------------------------------------------------- applying moves


@_no_refcounts
def apply_move(tb: Tables, st: Any, t1: int, d1: int, t2: int, d2: int) -> None:
    """Apply a legal move in place, then pass the turn as :meth:`game.State.apply` does."""
    if _move_effects(tb, st, t1, d1, t2, d2):
        _advance(tb, st, st[ST_TO_MOVE] + 1)


@njit(cache=True, inline="always")
def _move_effects(tb: Tables, st: Any, t1: int, d1: int, t2: int, d2: int) -> bool:
    """Move the piece and pay the tickets; False if a detective caught Mister X."""
    seat = st[ST_TO_MOVE]
    if seat == 0:
        st[ST_LOG] += 1 if t2 < 0 else 2
        st[ST_POS] = d1 if t2 < 0 else d2
        if tb.rp[RP_MRX_TK] == 1:
            st[tk_index(st, 0, t1)] -= 1
            if t2 >= 0:
                st[tk_index(st, 0, t2)] -= 1
                st[tk_index(st, 0, DOUBLE)] -= 1
        return True
    st[ST_POS + seat] = d1
    if tb.rp[RP_DET_TK] == 1:
        st[tk_index(st, seat, t1)] -= 1
        if tb.rp[RP_TO_MRX] == 1 and tb.rp[RP_MRX_TK] == 1:
            st[tk_index(st, 0, t1)] += 1
    if d1 == st[ST_POS]:
        st[ST_OUT] = OUT_CAUGHT
        st[ST_CATCHER] = seat
        return False
    return True


@njit(cache=True, inline="always")
def _advance(tb: Tables, st: Any, first: int) -> None:
    """The first detective from seat ``first`` on that can move; past the last one the
    round ends (:func:`new_round`), as in :meth:`game.State._advance`."""
    for seat in range(first, st[ST_K] + 1):
        if _can_move(tb, st, seat):
            st[ST_TO_MOVE] = seat
            return
    _new_round(tb, st)


@njit(cache=True, inline="always")
def _round_ends(tb: Tables, st: Any) -> bool:
    """The rule endings checked before Mister X moves: full log (survived), then no detective
    able to move (stuck). Sets the outcome and returns True if one applies."""
    if st[ST_LOG] >= tb.rp[RP_MAX]:
        st[ST_OUT] = OUT_SURVIVED
        return True
    for seat in range(1, st[ST_K] + 1):
        if _can_move(tb, st, seat):
            return False
    st[ST_OUT] = OUT_STUCK  # Mister X wins when no detective can move.
    return True


# A round's end (once per round) calls these two rather than inlining them into
# apply_move and new_round (step, the playouts' path, inlines its own): two more inlined
# copies of _can_move in apply_move cost seconds of cold compile.
@_no_refcounts
def _can_move_called(tb: Tables, st: Any, seat: int) -> bool:
    return _can_move(tb, st, seat)


@_no_refcounts
def _round_ends_called(tb: Tables, st: Any) -> bool:
    return _round_ends(tb, st)


@_no_refcounts
def new_round(tb: Tables, st: Any) -> None:
    """Mister X to move, or the rule ending that prevents it: full log (survived), no
    detective able to move (stuck), Mister X unable to move (cornered), in that order."""
    _new_round(tb, st)


@njit(cache=True, inline="always")
def _new_round(tb: Tables, st: Any) -> None:
    if _round_ends_called(tb, st):
        return
    st[ST_TO_MOVE] = 0
    if not _can_move_called(tb, st, 0):
        st[ST_OUT] = OUT_CORNERED


@njit(cache=True, inline="always")
def _step(tb: Tables, st: Any, moves: Any, i: int, filtering: bool) -> int:
    if not _move_effects(tb, st, moves[i, 0], moves[i, 1], moves[i, 2], moves[i, 3]):
        return 0
    for seat in range(st[ST_TO_MOVE] + 1, st[ST_K] + 1):
        n = _detective_moves(tb, st, seat, moves)
        if n > 0:
            st[ST_TO_MOVE] = seat
            return n
    if _round_ends(tb, st):
        return 0
    st[ST_TO_MOVE] = 0
    n = _mrx_search_moves(tb, st, moves, filtering)
    if n == 0:
        st[ST_OUT] = OUT_CORNERED
    return n


@_no_refcounts
def step(tb: Tables, st: Any, moves: Any, i: int, filtering: bool) -> int:
    """Play ``moves[i]`` (a move of :func:`search_moves`) and pass the turn, leaving the next
    mover's :func:`search_moves` in ``moves``; returns their number (0: the game is over).

    The same as :func:`apply_move` then :func:`search_moves`, with each list generated once:
    the list that shows a detective can move is the one he chooses from, and Mister X's
    list is empty exactly when he is cornered (his double moves extend single ones, and
    the filter falls back to every move).
    """
    return _step(tb, st, moves, i, filtering)


# --------------------------------------------------------------------------- playouts


@njit(cache=True, inline="always")
def _greedy_index(tb: Tables, st: Any, moves: Any, n: int) -> int:
    """Mister X: the move ending farthest from the nearest detective; a detective: the move
    ending nearest to (the determinized) Mister X. Ties are broken at random."""
    seat = st[ST_TO_MOVE]
    best = -1
    best_score = -1 << 30
    ties = 0
    for i in range(n):
        dest = moves[i, 1] if moves[i, 2] < 0 else moves[i, 3]
        if seat == 0:
            score = 1 << 20
            for s in range(1, st[ST_K] + 1):
                d = int(tb.dist[dest, st[ST_POS + s]])
                if d < score:
                    score = d
        else:
            score = -int(tb.dist[dest, st[ST_POS]])
        if score > best_score:
            best_score = score
            best = i
            ties = 1
        elif score == best_score:
            ties += 1
            if np.random.randint(ties) == 0:
                best = i
    return best


@_no_refcounts
def playout_from(tb: Tables, st: Any, moves: Any, n: int, epsilon: float,
                 filtering: bool) -> None:
    """:func:`playout` where ``moves[:n]`` already holds the mover's search moves."""
    while n > 0:
        if epsilon >= 1.0 or np.random.random() < epsilon:
            i = np.random.randint(n)
        else:
            i = _greedy_index(tb, st, moves, n)
        n = step(tb, st, moves, i, filtering)


@njit(cache=True)
def random_playouts(tb: Tables, st: Any, count: int, epsilon: float, filtering: bool,
                    seed: int) -> int:
    """Run ``count`` ε-greedy playouts (ε = 1 is uniformly random) from ``st`` (a benchmark
    helper); returns Mister X's wins."""
    np.random.seed(seed)
    moves = np.zeros((max_bound_from(tb), 4), dtype=np.int32)
    wins = 0
    for _ in range(count):
        work = st.copy()
        playout_from(tb, work, moves, search_moves(tb, work, moves, filtering), epsilon,
                     filtering)
        wins += work[ST_OUT] == OUT_SURVIVED or work[ST_OUT] == OUT_STUCK
    return wins


@njit(cache=True)
def max_bound_from(tb: Tables) -> int:
    """An upper bound on the number of legal moves in any position (buffer size)."""
    best = 0
    for s in range(tb.deg.shape[1]):
        total = tb.deg[0, s] + tb.deg[1, s] + tb.deg[2, s]
        best = max(best, total)
    singles = int(best + tb.sec.shape[1])
    return singles + singles * singles + 16


# A cache entry that does not load recompiles; an import under another name skips the cache.
guard_cache(globals())
