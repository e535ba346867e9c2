"""A stored game as the replay page shows it, from one perspective (all, mrx, detectives):
Mister X's hidden stations are left out of what the detectives' perspective gets."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from db.errors import ReplayError
from game import Move, State, YardError, from_text, seat_name
from game.moves import TICKET_NAMES
from game.rules import Ruleset, load_ruleset, ruleset_from_dict
from host.web.boards import board_drawing
from host.web.errors import WebError
from host.web.ratings_cache import json_safe
from records import GameRecord, TurnRecord

PERSPECTIVES = ("all", "mrx", "detectives")


def record_rules(record: GameRecord) -> Ruleset:
    """The ruleset a stored game was played under."""
    try:
        if record.ruleset_definition:
            return ruleset_from_dict(dict(record.ruleset_definition),
                                     f"game {record.game_id} ruleset")
        return load_ruleset(record.ruleset)
    except YardError as exc:
        raise ReplayError(f"game {record.game_id}: cannot load its ruleset: {exc}") from None


def _states(record: GameRecord, rules: Ruleset) -> Iterator[tuple[TurnRecord | None, State]]:
    """The start state, then each turn with the state after it (a fault without a move
    leaves the state as it was)."""
    try:
        state = from_text(record.start_position, rules)
    except YardError as exc:
        raise ReplayError(f"game {record.game_id}: cannot rebuild the start: {exc}") from None
    yield None, state
    for turn in record.turns:
        if turn.move is not None:
            try:
                state = state.apply(Move.parse(turn.move))
            except YardError as exc:
                raise ReplayError(f"game {record.game_id}, turn {turn.index}: {exc}") from None
        yield turn, state


def replay(record: GameRecord, perspective: str = "all") -> dict[str, Any]:
    """Every state of a finished game from one perspective, ready for the replay page.

    ``all`` and ``mrx`` carry the truth (Mister X's station in every frame, his path, the
    seed); ``detectives`` is built from the detectives' views only: Mister X's stations
    appear only on reveal slots, his moves show tickets, his fault details are withheld.
    """
    if perspective not in PERSPECTIVES:
        raise WebError(f"perspective must be one of {', '.join(PERSPECTIVES)}")
    truth = perspective != "detectives"
    rules = record_rules(record)
    frames: list[dict[str, Any]] = []
    final: State | None = None
    before: State | None = None
    for turn, state in _states(record, rules):
        view = state.view(0 if truth else None).to_dict()
        frame = {k: view[k] for k in ("to_move", "move_number", "detectives", "tickets",
                                      "last_reveal", "possible", "outcome")}
        if truth:
            frame["mrx"] = view["mrx"]
        frame["turn"] = None if turn is None or before is None else _turn(turn, before, truth)
        frames.append(frame)
        before = final = state
    assert final is not None
    log = [{**entry, "reveal": slot in rules.reveal_moves}
           for slot, entry in enumerate(final.view(0 if truth else None).to_dict()["log"],
                                        start=1)]
    out: dict[str, Any] = {
        "game_id": record.game_id, "perspective": perspective, "ruleset": record.ruleset,
        "rules": rules.definition(),
        "players": {seat_name(s.seat): s.bot_name for s in sorted(record.seats,
                                                                  key=lambda s: s.seat)},
        "versions": {seat_name(s.seat): s.bot_version for s in record.seats},
        "outcome": record.outcome.to_dict() | {
            "seat": None if record.outcome.seat is None else seat_name(record.outcome.seat)},
        "moves": record.moves, "started_at": record.started_at.isoformat(),
        "finished_at": record.finished_at.isoformat(), "tournament_id": record.tournament_id,
        "board": board_drawing(rules.board), "log": log, "frames": frames,
    }
    if truth:
        out["mrx_path"] = list(record.mrx_path)
        out["seed"] = None if record.seed is None else str(record.seed)
    return json_safe(out)  # type: ignore[no-any-return]


_TURN_FIELDS = {"index", "seat", "move", "time_used", "fault", "detail"}


def _turn(turn: TurnRecord, before: State, truth: bool) -> dict[str, Any]:
    """One turn as shown; Mister X's move is masked for the detectives."""
    hidden = turn.seat == 0 and not truth
    legs: list[dict[str, Any]] = []
    if turn.move is not None:
        move = Move.parse(turn.move)
        pairs = [(move.ticket, move.to)]
        if move.ticket2 is not None and move.to2 is not None:
            pairs.append((move.ticket2, move.to2))
        for slot, (ticket, station) in enumerate(pairs, start=before.move_number + 1):
            reveal = turn.seat == 0 and before.is_reveal(slot)
            shown = not hidden or reveal
            legs.append({"ticket": TICKET_NAMES[ticket], "station": station if shown else None,
                         "reveal": reveal})
    text = None if turn.move is None else "+".join(
        f"{leg['ticket']}:{leg['station'] if leg['station'] is not None else '?'}"
        for leg in legs)
    out: dict[str, Any] = {"index": turn.index, "seat": seat_name(turn.seat), "move": text,
                           "legs": legs, "time_used": turn.time_used, "fault": turn.fault,
                           "detail": None if hidden else turn.detail}
    # Fields later versions add to a turn (server-measured time, search effort...): shown
    # as they are, except that a hidden Mister X turn keeps only plain numbers.
    for name, value in dataclasses.asdict(turn).items():
        if name in _TURN_FIELDS or value is None:
            continue
        if not hidden or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[name] = value
    return out
