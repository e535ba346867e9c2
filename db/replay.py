"""Replaying a stored game move by move from one perspective (``yard replay``).

States are rebuilt with the engine: the record's start position
(:func:`game.position.from_text`) plus every stored move, so the possible-location count
comes from the engine's own belief (:meth:`game.State.possible_locations`), the same one
bots and the server use.

Perspectives: ``detectives`` sees what the detectives saw (Mister X's stations are ``?``
except on reveal moves; his start, the game seed, his path and the details of his faults
are withheld); ``mrx`` sees the truth and ends with Mister X's path; ``all`` adds the time
each turn used.
``!`` marks a reveal move (Mister X surfaces); faults are shown in brackets.

>>> from game import new_game
>>> from db.build import record_from_moves
>>> start = new_game("grid5", seed=2)
>>> record = record_from_moves("g", start, [(0, start.legal_moves()[0])], {0: "a", 1: "b"})
>>> replay_lines(record, Perspective.DETECTIVES)[4].split()[:2]
['mrx', 'taxi:?']
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum

from db.errors import ReplayError
from db.records import GameRecord, TurnRecord
from game import Move, Outcome, Ruleset, State, YardError, from_text, load_ruleset, seat_name
from game.rules import ruleset_from_dict


class Perspective(Enum):
    """Whose eyes a replay is printed with."""

    MRX = "mrx"
    DETECTIVES = "detectives"
    ALL = "all"


HIDDEN = "?"


def replay_lines(record: GameRecord, perspective: Perspective) -> list[str]:
    """The replay as text lines: header, one line per turn, result."""
    state = _start_state(record)
    lines = _header(record, state, perspective)
    for turn, before, after in _replayed(record, state):
        if turn.seat == 0 and turn.move is not None:
            lines.append(f"round {after.move_number}" if after.move_number
                         == before.move_number + 1 else
                         f"round {before.move_number + 1}-{after.move_number}")
        lines.append(_turn_line(turn, before, after, perspective))
        state = after
    lines.extend(_footer(record, perspective))
    return lines


def _start_state(record: GameRecord) -> State:
    try:
        rules = _rules(record)
        return from_text(record.start_position, rules)
    except YardError as exc:
        raise ReplayError(f"game {record.game_id}: cannot rebuild the start: {exc}") from None


def _rules(record: GameRecord) -> Ruleset:
    if record.ruleset_definition:
        return ruleset_from_dict(record.ruleset_definition, f"game {record.game_id} ruleset")
    return load_ruleset(record.ruleset)


def _replayed(record: GameRecord, start: State) -> Iterator[tuple[TurnRecord, State, State]]:
    """Each turn with the state before and after it (a fault without a move changes
    nothing)."""
    state = start
    for turn in record.turns:
        if turn.move is None:
            yield turn, state, state
            continue
        try:
            after = state.apply(Move.parse(turn.move))
        except YardError as exc:
            raise ReplayError(f"game {record.game_id}, turn {turn.index} "
                              f"({seat_name(turn.seat)}): {exc}") from None
        yield turn, state, after
        state = after


def _header(record: GameRecord, start: State, perspective: Perspective) -> list[str]:
    players = " ".join(f"{seat_name(s.seat)}={s.bot_name}" for s in
                       sorted(record.seats, key=lambda s: s.seat))
    mrx = HIDDEN if perspective is Perspective.DETECTIVES else str(start.mrx_station)
    pieces = " ".join(f"d{i}={s}" for i, s in enumerate(start.detective_stations, start=1))
    # The seed is withheld from detectives: it determines Mister X's start station.
    seed = "" if perspective is Perspective.DETECTIVES else f"  seed {record.seed}"
    return [f"game {record.game_id}  ruleset {record.ruleset}{seed}  as {perspective.value}",
            f"players: {players}",
            f"start: mrx={mrx} {pieces}  possible {len(start.possible_locations())}"]


def _turn_line(turn: TurnRecord, before: State, after: State,
               perspective: Perspective) -> str:
    if turn.move is None:
        move_text = "-"
    elif turn.seat == 0:
        move_text = _mrx_move(Move.parse(turn.move), before, perspective)
    else:
        move_text = turn.move
    possible = len(after.possible_locations())
    line = f"  {seat_name(turn.seat):<4} {move_text:<24} possible {possible:>3}"
    if turn.fault:
        line += f"  [{turn.fault}{_detail(turn, perspective)}]"
    if perspective is Perspective.ALL:
        line += f"  ({turn.time_used:.3f}s)"
    return line


def _detail(turn: TurnRecord, perspective: Perspective) -> str:
    """A fault's detail text; never Mister X's to detectives (it may name a station)."""
    if not turn.detail or (turn.seat == 0 and perspective is Perspective.DETECTIVES):
        return ""
    return f": {turn.detail}"


def _mrx_move(move: Move, before: State, perspective: Perspective) -> str:
    """Mister X's move with each leg's station shown only where the perspective may see
    it (detectives: on reveal moves only)."""
    legs = [(move.ticket, move.to)]
    if move.ticket2 is not None and move.to2 is not None:
        legs.append((move.ticket2, move.to2))
    parts = []
    for slot, (ticket, station) in enumerate(legs, start=before.move_number + 1):
        shown = perspective is not Perspective.DETECTIVES or before.is_reveal(slot)
        mark = "!" if before.is_reveal(slot) else ""
        parts.append(f"{ticket.name.lower()}:{station if shown else HIDDEN}{mark}")
    return "+".join(parts)


def _footer(record: GameRecord, perspective: Perspective) -> list[str]:
    lines = [f"result: {_outcome_text(record.outcome)} after {record.moves} moves"]
    if perspective is not Perspective.DETECTIVES:
        lines.append("Mister X's path: " + " ".join(map(str, record.mrx_path)))
    return lines


def _outcome_text(outcome: Outcome) -> str:
    if outcome.winner is None:
        text = "no winner"
    else:
        text = "Mister X wins" if outcome.winner.value == "mrx" else "detectives win"
    reason = outcome.termination.value
    if outcome.seat is not None:
        reason += f" by {seat_name(outcome.seat)}"
    return f"{text} ({reason})"
