"""Where can Mister X be? The exact possible-location set from public information only.

Set algebra on plain values (a ruleset, station sets, moves, detective stations); the set
is updated move by move:

* Mister X's move with ticket *t* (each log slot of a double move separately): every
  station one *t*-edge from a possible station (a secret ticket follows any edge, ferry
  included where the ruleset has it), minus the detectives' stations. On a reveal slot the
  set becomes the revealed station.
* A detective's move that does not catch him removes the detective's new station; one
  that catches him leaves only that station.

It never excludes Mister X's true position. :meth:`game.State.possible_locations` applies
these steps along a game (memoised per state); bots, replays and audits use them directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from game.board import Board, Transport
from game.moves import Move, Ticket
from game.rules import Ruleset


def initial_belief(rules: Ruleset, detective_stations: Iterable[int]) -> frozenset[int]:
    """Before Mister X's first move: his start cards (or every cell), minus the detectives."""
    board = rules.board
    starts = board.stations if rules.random_starts else board.mrx_starts
    return frozenset(starts) - frozenset(detective_stations)


def step(rules: Ruleset, possible: frozenset[int], ticket: Ticket,
         detective_stations: Iterable[int]) -> frozenset[int]:
    """Possible stations after one hidden log entry with ``ticket``."""
    table = _reach(rules.board)[ticket]
    reached: set[int] = set().union(*[table[s] for s in possible])
    reached.difference_update(detective_stations)
    return frozenset(reached)


@cache
def _reach(board: Board) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per ticket (taxi, bus, underground, secret), the stations one move away from each
    station; a secret ticket follows any transport, the ferry included."""
    adj = board.adjacency
    secret = tuple(tuple(sorted({d for t in Transport for d in adj[t][s]}))
                   for s in range(board.n_stations + 1))
    return (adj[Transport.TAXI], adj[Transport.BUS], adj[Transport.UNDERGROUND], secret)


def after_mrx_move(rules: Ruleset, possible: frozenset[int], move: Move, log_length: int,
                   detective_stations: tuple[int, ...]) -> frozenset[int]:
    """Possible stations after Mister X plays ``move`` with ``log_length`` entries before it.

    On a reveal slot the true destination is public, so it is taken from ``move`` itself.
    """
    legs: list[tuple[Ticket, int]] = [(move.ticket, move.to)]
    if move.ticket2 is not None and move.to2 is not None:
        legs.append((move.ticket2, move.to2))
    for offset, (ticket, station) in enumerate(legs, start=1):
        if log_length + offset in rules.reveal_moves:
            possible = frozenset((station,))
        else:
            possible = step(rules, possible, ticket, detective_stations)
    return possible


def after_shown_entries(rules: Ruleset, possible: frozenset[int],
                        entries: Iterable[tuple[Ticket, int | None]],
                        detective_stations: Iterable[int]) -> frozenset[int]:
    """Possible stations after Mister X's travel-log ``entries`` as detectives see them
    (:func:`after_mrx_move` from public information only): a shown station is a reveal and
    becomes the set, a hidden one steps with its ticket."""
    for ticket, station in entries:
        if station is not None:
            possible = frozenset((station,))
        else:
            possible = step(rules, possible, ticket, detective_stations)
    return possible


def after_detective_move(possible: frozenset[int], move: Move,
                         caught: bool) -> frozenset[int]:
    """Possible stations after a detective plays ``move``: only its destination if it
    ``caught`` Mister X, otherwise ``possible`` without that destination."""
    if caught:
        return frozenset((move.to,))
    return possible - {move.to} if move.to in possible else possible
