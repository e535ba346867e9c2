"""Evaluation helpers shared by the search bots: a static score and Mister X's move filter.

Scores are from Mister X's side (higher is better for him); detectives minimise them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from game import Move, State, Ticket, Winner

WIN = 100_000.0


@dataclass(frozen=True)
class Weights:
    """Weights of the static evaluation."""

    distance: float = 10.0  # per step to the nearest detective (capped at 6)
    spread: float = 1.0  # per step of the mean distance to all detectives (capped at 6)
    possible: float = 4.0  # per bit of the possible-location set
    tickets: float = 3.0  # per secret ticket, twice that per double ticket


def terminal_score(state: State, ply: int) -> float:
    """Win/loss score of a finished state; quicker wins score higher."""
    assert state.outcome is not None
    if state.outcome.winner is Winner.MRX:
        return WIN - ply
    return -WIN + ply


def evaluate(state: State, weights: Weights) -> float:
    """Static score of an unfinished state from shortest-path distances, the size of the
    possible-location set and Mister X's special tickets."""
    dist = state.board.distances()
    row = dist[state.positions[0]]
    gaps = [min(int(row[d]), 6) for d in state.detective_stations]
    own = state.tickets[0]
    return (weights.distance * min(gaps) + weights.spread * sum(gaps) / len(gaps)
            + weights.possible * math.log2(max(1, len(state.possible_locations())))
            + weights.tickets * (own[Ticket.SECRET] + 2 * own[Ticket.DOUBLE]))


def threatened(state: State) -> bool:
    """True if a detective could reach Mister X's station next turn."""
    row = state.board.distances()[state.positions[0]]
    return any(int(row[d]) <= 1 for d in state.detective_stations)


def _secret_ok(state: State, slot: int, here: int, there: int) -> bool:
    rules = state.rules
    if slot <= min(rules.reveal_moves, default=rules.max_moves + 1) or \
            slot in rules.reveal_moves:
        return False
    adj = rules.board.adjacency
    taxi_only = not adj[1][here] and not adj[2][here]
    return not (taxi_only and state.board.distance(here, there) == 1)


def filter_mrx_moves(state: State, moves: Sequence[Move]) -> list[Move]:
    """Mister X's sensible moves (the same rules as the MCTS kernel's filter): no secret
    ticket before the first reveal, on a reveal or from a taxi-only station unless taking
    the ferry; double moves only when threatened. Falls back to all moves."""
    slot = len(state.log) + 1
    here = state.positions[0]
    doubles = threatened(state)
    kept = [m for m in moves
            if (doubles or not m.is_double)
            and (m.ticket != Ticket.SECRET or _secret_ok(state, slot, here, m.to))
            and (m.ticket2 != Ticket.SECRET or m.to2 is None
                 or _secret_ok(state, slot + 1, m.to, m.to2))]
    return kept or list(moves)
