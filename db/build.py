"""Building a :class:`GameRecord` from a game played with the engine in-process.

The server builds its records itself (with clocks, faults and transcripts); this helper is
for in-process games (arena, tests, tools) that want to store a game the same way.

>>> from game import new_game
>>> start = new_game("grid5", seed=1)
>>> move = start.legal_moves()[0]
>>> rec = record_from_moves("g1", start, [(0, move)], {0: "random", 1: "rush"})
>>> rec.moves, rec.detective_player, rec.mrx_path[-1] == move.destination
(1, 'rush', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from game import Move, Outcome, State, Termination, to_text
from records import GameRecord, SeatRecord, TurnRecord


def record_from_moves(game_id: str, start: State, moves: Sequence[tuple[int, Move]],
                      players: Mapping[int, str], outcome: Outcome | None = None, *,
                      seed: int | None = None, started_at: datetime | None = None,
                      finished_at: datetime | None = None) -> GameRecord:
    """The record of the game ``start`` + ``moves`` (seat, move) in order.

    ``players`` maps a seat to a bot name; a seat missing from it takes the name of the
    nearest lower seat (so ``{0: "a", 1: "b"}`` gives every detective to ``b``). The
    outcome defaults to the engine's outcome of the final state (``aborted`` if none).
    """
    state = start
    turns = []
    for index, (seat, move) in enumerate(moves):
        turns.append(TurnRecord(index, seat, str(move), 0.0))
        state = state.apply(move)
    now = datetime.now(UTC)
    return GameRecord(
        game_id=game_id, ruleset=start.rules.name, ruleset_definition=start.rules.definition(),
        seed=seed, start_position=to_text(start), seats=_seats(players, start.n_detectives),
        outcome=outcome or state.outcome or Outcome(None, Termination.ABORTED), turns=turns,
        mrx_path=[start.mrx_station, *(station for _, station in state.log)],
        started_at=started_at or now, finished_at=finished_at or now,
        moves=state.move_number)


def _seats(players: Mapping[int, str], detectives: int) -> list[SeatRecord]:
    seats = []
    name = players[0]
    for seat in range(detectives + 1):
        name = players.get(seat, name)
        seats.append(SeatRecord(seat, name))
    return seats
