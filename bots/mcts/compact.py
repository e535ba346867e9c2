"""Conversions between engine values and the kernel's compact state and move arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bots.mcts.kernel import ST_K, ST_LOG, ST_POS, ST_TO_MOVE, state_size
from game import Move, State, Ticket, View

MoveKey = tuple[int, int, int, int]


def compact(positions: Sequence[int], tickets: Sequence[Sequence[int]], log_len: int,
            to_move: int) -> Any:
    """A compact kernel state (``int32`` array) for an ongoing game."""
    k = len(positions) - 1
    st = np.zeros(state_size(k), dtype=np.int32)
    st[ST_TO_MOVE] = to_move
    st[ST_LOG] = log_len
    st[ST_K] = k
    st[ST_POS:ST_POS + k + 1] = positions
    st[ST_POS + k + 1:] = np.asarray(tickets, dtype=np.int32).reshape(-1)
    return st


def compact_state(state: State) -> Any:
    """The compact form of an engine state (which must not be over)."""
    return compact(state.positions, state.tickets, len(state.log), state.to_move)


def compact_view(view: View, mrx_station: int) -> Any:
    """The compact form of a view, with Mister X assumed on ``mrx_station``."""
    return compact((mrx_station, *view.detectives), view.tickets, len(view.log), view.to_move)


def move_key(move: Move) -> MoveKey:
    """The kernel's four-int form of an engine move."""
    if move.ticket2 is None or move.to2 is None:
        return (int(move.ticket), move.to, -1, 0)
    return (int(move.ticket), move.to, int(move.ticket2), move.to2)


def to_move(row: Sequence[int]) -> Move:
    """An engine move from a kernel move row."""
    t1, d1, t2, d2 = (int(x) for x in row[:4])
    if t2 < 0:
        return Move(Ticket(t1), d1)
    return Move(Ticket(t1), d1, Ticket(t2), d2)
