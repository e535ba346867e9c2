"""Replaying a stored game move by move: the states (:func:`replay_game`, for viewers and
checks) and the text of ``yard replay`` from one perspective (:func:`replay_lines`).

States are rebuilt with the engine: the record's start position
(:func:`game.position.from_text`) plus every stored move, so the possible-location count
comes from the engine's own belief (:meth:`game.State.possible_locations`), the same one
bots and the server use.

Perspectives: ``detectives`` sees what the detectives saw (Mister X's stations are ``?``
except on reveal moves; his start, the game seed, his path and the details of his faults
are withheld); ``mrx`` sees the truth and ends with Mister X's path; ``all`` adds the time
each turn used.
``!`` marks a reveal move (Mister X surfaces); faults are shown in brackets. Each turn
line ends with the pieces' stations after it, and each Mister X move is followed by his
travel log as the perspective sees it.

:func:`snapshot` gives the JSON-ready state after any step from one perspective (the
protocol's view objects), so a viewer can step through a game:

>>> from game import new_game
>>> from db.build import record_from_moves
>>> start = new_game("grid5", seed=2)
>>> record = record_from_moves("g", start, [(0, start.legal_moves()[0])], {0: "a", 1: "b"})
>>> replay_lines(record, Perspective.DETECTIVES)[4].split()[:2]
['mrx', 'taxi:?']
>>> replay = replay_game(record)
>>> [snapshot(s, Perspective.DETECTIVES)["log"] for s in replay.states()][1]
[{'ticket': 'taxi', 'station': None}]
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from db.errors import ReplayError
from game import (
    MRX,
    Move,
    Outcome,
    Ruleset,
    State,
    Termination,
    YardError,
    from_text,
    load_ruleset,
    seat_name,
)
from game.rules import ruleset_from_dict
from game.views import mrx_view
from records import GameRecord, TurnRecord


class Perspective(Enum):
    """Whose eyes a replay is printed with."""

    MRX = "mrx"
    DETECTIVES = "detectives"
    ALL = "all"


HIDDEN = "?"
RULE_ENDINGS = frozenset({Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                          Termination.DETECTIVES_STUCK})
"""Terminations the engine decides; the others are forfeits and aborts."""


@dataclass(frozen=True)
class Step:
    """One refereed turn and the engine states around it (a fault without a move changes
    nothing: ``before is after``)."""

    turn: TurnRecord
    before: State
    after: State


@dataclass(frozen=True)
class Replay:
    """A game rebuilt by the engine: the start state and one :class:`Step` per turn."""

    record: GameRecord
    start: State
    steps: tuple[Step, ...]

    @property
    def final(self) -> State:
        """The state after the last turn."""
        return self.steps[-1].after if self.steps else self.start

    def states(self) -> list[State]:
        """The start state, then the state after each turn (one per turn)."""
        return [self.start, *(step.after for step in self.steps)]


def replay_game(record: GameRecord) -> Replay:
    """Rebuild every state of ``record`` with the engine: its ruleset definition, its start
    position, then each turn's move by the seat whose turn it is.

    Raises :class:`ReplayError` naming the turn when a move is unparsable, illegal, or
    made by a seat that was not to move. :func:`check_record` also checks the result.
    """
    state = start = _start_state(record)
    steps = []
    for turn in record.turns:
        after = state if turn.move is None else _apply(record, turn, state)
        steps.append(Step(turn, state, after))
        state = after
    return Replay(record, start, tuple(steps))


def _apply(record: GameRecord, turn: TurnRecord, state: State) -> State:
    where = f"game {record.game_id}, turn {turn.index} ({seat_name(turn.seat)})"
    if state.outcome is None and turn.seat != state.to_move:
        raise ReplayError(f"{where}: it is {seat_name(state.to_move)}'s turn")
    try:
        return state.apply(Move.parse(turn.move or ""))
    except YardError as exc:
        raise ReplayError(f"{where}: {exc}") from None


def check_record(replay: Replay) -> None:
    """Raise :class:`ReplayError` unless the record agrees with its replay: one seat per
    piece, Mister X's path and move count as replayed, and the result the engine's when
    the engine ended the game (else a forfeit or abort, not a rule ending)."""
    record, final = replay.record, replay.final
    name = f"game {record.game_id}"
    seats = sorted(s.seat for s in record.seats)
    if seats != list(range(final.n_detectives + 1)):
        raise ReplayError(f"{name}: seats {seats} do not match the "
                          f"{final.n_detectives} detectives of the start position")
    path = [replay.start.mrx_station, *(station for _, station in final.log)]
    if list(record.mrx_path) != path:
        raise ReplayError(f"{name}: Mister X's path {record.mrx_path} is not the replayed "
                          f"path {path}")
    if record.moves != final.move_number:
        raise ReplayError(f"{name}: {record.moves} moves recorded, {final.move_number} "
                          "replayed")
    outcome = record.outcome
    if final.outcome is not None and outcome != final.outcome:
        raise ReplayError(f"{name}: result {outcome.to_dict()} but the moves end in "
                          f"{final.outcome.to_dict()}")
    if final.outcome is None and outcome.termination in RULE_ENDINGS:
        raise ReplayError(f"{name}: result {outcome.termination.value} but the game is not "
                          "over after its moves")
    if (outcome.winner is None) != (outcome.termination is Termination.ABORTED):
        raise ReplayError(f"{name}: only an aborted game has no winner")


def snapshot(state: State, perspective: Perspective) -> dict[str, Any]:
    """The JSON-ready state from one perspective: the protocol's view object of the
    detectives (``detectives``: Mister X's hidden stations are ``null``, no ``mrx`` key)
    or of Mister X (``mrx``), or for ``all`` the truth (Mister X's view, ``seat`` null)."""
    if perspective is Perspective.DETECTIVES:
        return state.view(None).to_dict()
    data = mrx_view(state).to_dict()
    if perspective is Perspective.ALL:
        data["seat"] = None
    return data


def replay_lines(record: GameRecord, perspective: Perspective) -> list[str]:
    """The replay as text lines: header, one line per turn (with the stations after it)
    and Mister X's log after each of his moves, result."""
    replay = replay_game(record)
    lines = _header(record, replay.start, perspective)
    for turn, before, after in ((s.turn, s.before, s.after) for s in replay.steps):
        mrx_moved = turn.seat == MRX and turn.move is not None
        if mrx_moved:
            lines.append(f"round {after.move_number}" if after.move_number
                         == before.move_number + 1 else
                         f"round {before.move_number + 1}-{after.move_number}")
        lines.append(_turn_line(turn, before, after, perspective))
        if mrx_moved:
            lines.append("    log: " + _log_text(after, perspective))
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


def _stations(state: State, perspective: Perspective) -> str:
    mrx = HIDDEN if perspective is Perspective.DETECTIVES else str(state.mrx_station)
    return " ".join([f"mrx={mrx}", *(f"d{i}={s}" for i, s in
                                      enumerate(state.detective_stations, start=1))])


def _log_text(state: State, perspective: Perspective) -> str:
    entries = []
    for slot, (ticket, station) in enumerate(state.log, start=1):
        shown = perspective is not Perspective.DETECTIVES or state.is_reveal(slot)
        mark = "!" if state.is_reveal(slot) else ""
        entries.append(f"{ticket.name.lower()}:{station if shown else HIDDEN}{mark}")
    return " ".join(entries)


def _header(record: GameRecord, start: State, perspective: Perspective) -> list[str]:
    players = " ".join(f"{seat_name(s.seat)}={s.bot_name}" for s in
                       sorted(record.seats, key=lambda s: s.seat))
    # The seed is withheld from detectives: it determines Mister X's start station.
    seed = "" if perspective is Perspective.DETECTIVES else f"  seed {record.seed}"
    return [f"game {record.game_id}  ruleset {record.ruleset}{seed}  as {perspective.value}",
            f"players: {players}",
            f"start: {_stations(start, perspective)}  "
            f"possible {len(start.possible_locations())}"]


def _turn_line(turn: TurnRecord, before: State, after: State,
               perspective: Perspective) -> str:
    if turn.move is None:
        move_text = "-"
    elif turn.seat == 0:
        move_text = _mrx_move(Move.parse(turn.move), before, perspective)
    else:
        move_text = turn.move
    possible = len(after.possible_locations())
    line = (f"  {seat_name(turn.seat):<4} {move_text:<24} possible {possible:>3}  "
            f"{_stations(after, perspective)}")
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
    reason = _forfeit_reason(record, perspective)
    if reason:
        lines.append(f"reason: {reason}")
    if perspective is not Perspective.DETECTIVES:
        lines.append("Mister X's path: " + " ".join(map(str, record.mrx_path)))
    return lines


def _forfeit_reason(record: GameRecord, perspective: Perspective) -> str:
    """What the seat that gave up said (``bot_error``, and ``illegal_move`` as the SDK
    reports it: the last turn's detail), where the perspective may see it."""
    outcome = record.outcome
    if outcome.termination not in (Termination.BOT_ERROR, Termination.ILLEGAL_MOVE) or \
            not record.turns:
        return ""
    final = record.turns[-1]
    if final.fault != outcome.termination.value or not _detail(final, perspective):
        return ""
    detail = final.detail or ""
    return detail.removeprefix(f"{final.fault}: ")


def _outcome_text(outcome: Outcome) -> str:
    if outcome.winner is None:
        text = "no winner"
    else:
        text = "Mister X wins" if outcome.winner.value == "mrx" else "detectives win"
    reason = outcome.termination.value
    if outcome.seat is not None:
        reason += f" by {seat_name(outcome.seat)}"
    return f"{text} ({reason})"
