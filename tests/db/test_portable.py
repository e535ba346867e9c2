"""The portable record format without a server: every kind of line round-trips (a
Hypothesis property over valid records), and every malformed field is refused with a
message that names it (and, from a file, its line)."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from db.build import record_from_moves
from db.errors import DatabaseError, RecordError
from db.portable import (
    EFFORT_LIMIT,
    PortableGame,
    PortableTournament,
    from_portable,
    from_stored,
    read_lines,
    to_line,
    to_stored,
    tournament_from_portable,
    tournament_line,
    tournament_to_portable,
)
from game import Outcome, Termination, new_game
from records import GameRecord, MatchLog, ScheduledGame, TournamentInfo, TurnRecord


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()
"""A value for :func:`changed`: remove the key."""
WHEN = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def sample_record() -> tuple[GameRecord, TournamentInfo, ScheduledGame]:
    """A grid5 game of four turns with every optional part: a fault, effort, an instance,
    a match log, a tournament and its schedule entry."""
    start = new_game("grid5", seed=5)
    state, moves = start, []
    for _ in range(4):
        move = state.legal_moves()[0]
        moves.append((state.to_move, move))
        state = state.apply(move)
    record = record_from_moves("g1", start, moves, {0: "a", 1: "b"}, seed=5,
                               outcome=Outcome.forfeit(1, Termination.TIMEOUT),
                               started_at=WHEN, finished_at=WHEN)
    record.turns[1] = replace(record.turns[1], time_used=0.25, playouts=5, detail="slow")
    record.turns.append(TurnRecord(4, 1, None, 1.5, "timeout"))
    record.seats[1].instance = "b-1"
    record.log = MatchLog([[0], [1, 2]], 10, 0.0, "forfeit", 3, 1.0,
                          ["10 taxi:4", {"dt": 5, "kind": "tick"}])
    record.tournament_id = "t1"
    return record, TournamentInfo("t1", {"rules": "grid5"}, WHEN), \
        ScheduledGame(0, 0, "a", "b", 4)


def game_line() -> dict[str, Any]:
    record, tournament, entry = sample_record()
    data: dict[str, Any] = json.loads(to_line(record, tournament, entry))
    return data


def changed(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``data`` with the key or list index at dotted ``path`` set to
    ``value`` (removed for :data:`DELETE`)."""
    out = copy.deepcopy(data)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = out
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return out


def test_the_sample_round_trips() -> None:
    record, tournament, entry = sample_record()
    game = from_portable(game_line())
    assert game == PortableGame(record, tournament, entry)
    stored = json.loads(json.dumps(to_stored(record)))
    assert from_stored(stored, record.turns, ruleset="grid5", moves=record.moves,
                       tournament_id="t1") == record


BAD_GAME_FIELDS: list[tuple[str, Any, str]] = [
    ("format", "other", "not a yard game record (format 'other'"),
    ("version", 2, "record version 2 is newer than this yard reads (1)"),
    ("version", "1", "record version '1' is not a positive integer"),
    ("version", True, "record version True is not a positive integer"),
    ("ruleset", [], "ruleset: expected an object, got an array"),
    ("ruleset.max_moves", "many", "ruleset: missing or invalid field"),
    ("board", DELETE, "missing field 'board'"),
    ("board", "grid5x5", "board: expected an object, got a string"),
    ("board.sha256", 1, "board.sha256: expected a string, got an integer"),
    ("board.sha256", "0" * 64, "board 'grid5x5' of this yard differs from the board"),
    ("seed", DELETE, "missing field 'seed'"),
    ("seed", 1.5, "seed: expected an integer, got a number"),
    ("mrx_seed", "7", "mrx_seed: expected an integer, got a string"),
    ("start", "x" * 10_001, "start: must have at most 10000 characters"),
    ("players", {}, "players: expected an array, got an object"),
    ("players.0", 1, "players[0]: expected an object, got an integer"),
    ("players.0.seat", "x1", "players[0].seat: must be 'mrx', 'd1', 'd2'..., not 'x1'"),
    ("players.0.seat", None, "players[0].seat: expected a string, got null"),
    ("players.0.bot", "", "players[0].bot: must not be empty"),
    ("players.0.bot", "b" * 201, "players[0].bot: must have at most 200 characters"),
    ("players.0.version", DELETE, "players[0]: missing field 'version'"),
    ("players.0.version", "v" * 101, "players[0].version: must have at most 100"),
    ("players.1.instance", 5, "players[1].instance: expected a string, got an integer"),
    ("players.1.instance", "i" * 65, "players[1].instance: must have at most 64"),
    ("players.1.seat", "mrx", "players name a seat twice"),
    ("players", [], "seats [] do not match the 2 detectives"),
    ("result", "won", "result: expected an object, got a string"),
    ("result.termination", DELETE, "result: missing field 'termination'"),
    ("result.termination", "won", "result.termination: 'won' is not one of caught"),
    ("result.winner", "both", "result.winner: 'both' is not one of mrx, detectives"),
    ("result.seat", -1, "result.seat: must be >= 0, not -1"),
    ("result.seat", "d1", "result.seat: expected an integer, got a string"),
    ("first_turn", None, "first_turn: expected an integer, got null"),
    ("moves", DELETE, "missing field 'moves'"),
    ("moves", {}, "moves: expected an array, got an object"),
    ("moves.0", [], "moves[0]: expected an object, got an array"),
    ("moves.0.seat", "d1", "turn 0 (d1): it is mrx's turn"),
    ("moves.0.move", "x" * 41, "moves[0].move: must have at most 40 characters"),
    ("moves.0.move", None, "moves[0]: a turn without a move must name its fault"),
    ("moves.0.move", "taxi:99", "turn 0 (mrx): move taxi:99"),
    ("moves.0.fault", 3, "moves[0].fault: expected a string, got an integer"),
    ("moves.0.fault", "f" * 41, "moves[0].fault: must have at most 40 characters"),
    ("moves.0.detail", "d" * 100_001, "moves[0].detail: must have at most 100000"),
    ("moves.0.time", DELETE, "moves[0]: missing field 'time'"),
    ("moves.0.time", -0.5, "moves[0].time: must be >= 0, not -0.5"),
    ("moves.0.time", True, "moves[0].time: expected a number, got a boolean"),
    ("moves.0.time", float("nan"), "moves[0].time: must be a finite number, not nan"),
    ("moves.0.time", float("inf"), "moves[0].time: must be a finite number, not inf"),
    ("moves.0.index", None, "moves[0].index: must be an integer"),
    ("moves.0.index", "0", "moves[0].index: expected an integer, got a string"),
    ("moves.1.index", 0, "two moves have the same index"),
    ("moves.0.playouts", -5, "moves[0].playouts: must be in 0..9223372036854775807"),
    ("moves.0.nodes", EFFORT_LIMIT, "moves[0].nodes: must be in 0..9223372036854775807"),
    ("moves.0.depth", 1.0, "moves[0].depth: expected an integer, got a number"),
    ("mrx_path", [], "mrx_path: must not be empty"),
    ("mrx_path", "1 2", "mrx_path: expected an array, got a string"),
    ("mrx_path.0", True, "mrx_path[0]: expected an integer, got a boolean"),
    ("mrx_path.1", 25, "Mister X's path"),
    ("started_at", "yesterday", "started_at: 'yesterday' is not an ISO 8601 time"),
    ("finished_at", 5, "finished_at: expected a string, got an integer"),
    ("finished_at", "2026-03-01T12:00:00." + "0" * 60, "finished_at: '2026-03-01T12:00:00.0"),
    ("finished_at", DELETE, "missing field 'finished_at'"),
    ("log", [], "log: expected an object, got an array"),
    ("log.holders", {}, "log.holders: expected an array, got an object"),
    ("log.holders", [0, [1, 2]], "log.holders[0]: expected an array, got an integer"),
    ("log.holders", [[0], []], "log.holders[1]: must not be empty"),
    ("log.holders", [[0], ["1", 2]], "log.holders[1][0]: expected an integer, got a string"),
    ("log.holders", [[0], [1]], "log.holders must hold every seat of the players once"),
    ("log.holders", [[0, 1], [1, 2]], "log.holders must hold every seat of the players once"),
    ("log.move_s", -1, "log.move_s: must be >= 0, not -1"),
    ("log.bank_s", "1", "log.bank_s: expected an integer or a number, got a string"),
    ("log.grace_s", float("inf"), "log.grace_s: must be a finite number, not inf"),
    ("log.grace_s", DELETE, "log: missing field 'grace_s'"),
    ("log.on_timeout", "pause", "log.on_timeout: 'pause' is not one of forfeit, random"),
    ("log.max_illegal", 0, "log.max_illegal: must be >= 1, not 0"),
    ("log.max_illegal", True, "log.max_illegal: expected an integer, got a boolean"),
    ("log.events", {}, "log.events: expected an array, got an object"),
    ("log.events.0", 5, "log.events[0]: expected a string or an object, got an integer"),
    ("log.events.0", "e" * 100_001, "log.events[0]: must have at most 100000 characters"),
    ("log.events.1", {"kind": "tick"}, "log.events[1]: must be an object with an integer dt"),
    ("log.events.1", {"dt": 1.5, "kind": "tick"}, "log.events[1]: must be an object with"),
    ("log.events.1", {"dt": 1, "kind": None}, "log.events[1]: must be an object with"),
    ("log.events.1", {"dt": 1, "kind": "x", "pad": "p" * 100_000},
     "log.events[1]: must be an object with an integer dt and a string kind (at most 100000"),
    ("tournament", [], "tournament: expected an object, got an array"),
    ("tournament", None, "a schedule entry needs its tournament"),
    ("tournament.id", "", "tournament.id: must not be empty"),
    ("tournament.id", DELETE, "tournament: missing field 'id'"),
    ("tournament.spec", None, "tournament.spec: expected an object, got null"),
    ("tournament.created_at", "2026-13-01", "tournament.created_at: '2026-13-01' is not an"),
    ("schedule", "0", "schedule: expected an object, got a string"),
    ("schedule.index", "0", "schedule.index: expected an integer, got a string"),
    ("schedule.pair_index", None, "schedule.pair_index: expected an integer, got null"),
    ("schedule.pair_key", DELETE, "schedule: missing field 'pair_key'"),
    ("schedule.pair_key", "k" * 401, "schedule.pair_key: must have at most 400"),
    ("schedule.mrx", "", "schedule.mrx: must not be empty"),
    ("schedule.detectives", "d" * 401, "schedule.detectives: must have at most 400"),
    ("schedule.seed", DELETE, "schedule: missing field 'seed'"),
    ("schedule.seed", "4", "schedule.seed: expected an integer, got a string"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD_GAME_FIELDS,
                         ids=[f"{p}={v!r:.12}" for p, v, _ in BAD_GAME_FIELDS])
def test_a_malformed_game_line_is_refused_naming_the_field(path: str, value: Any,
                                                           message: str) -> None:
    with pytest.raises(RecordError) as info:
        from_portable(changed(game_line(), path, value))
    assert str(info.value).startswith("game g1: ")
    assert message in str(info.value)


@pytest.mark.parametrize(("data", "message"), [
    ([], "a record must be a JSON object"),
    ({**game_line(), "game_id": ""}, "game_id: must not be empty"),
    ({**game_line(), "game_id": 7}, "game_id: expected a string, got an integer"),
    ({**game_line(), "game_id": "x" * 65},
     f"game {'x' * 64}: game_id: must have at most 64 characters, not 65"),
    ({k: v for k, v in game_line().items() if k != "game_id"}, "missing field 'game_id'"),
])
def test_a_game_line_without_a_usable_id_is_refused_without_one(data: Any, message: str
                                                                ) -> None:
    with pytest.raises(RecordError) as info:
        from_portable(data)
    assert str(info.value) == message


@pytest.mark.parametrize(("path", "value"), [
    ("future", {"x": 1}), ("moves.0.future", 1), ("log.future", 1), ("players.0.future", 1),
    ("board.future", 1), ("schedule.future", 1), ("tournament.future", 1),
    ("result.future", 1), ("players.1.instance", None), ("mrx_seed", None), ("log", None),
    ("moves.0.playouts", None), ("moves.0.detail", None), ("moves.0.index", 0),
    ("transcripts", 5), ("log.move_s", 10.0), ("first_turn", DELETE),
])
def test_unknown_keys_nulls_and_defaults_are_accepted(path: str, value: Any) -> None:
    assert from_portable(changed(game_line(), path, value)).record.game_id == "g1"


def test_a_log_keeps_its_numbers_as_the_server_had_them() -> None:
    log = from_portable(game_line()).record.log
    assert log is not None and isinstance(log.move_s, int) and isinstance(log.bank_s, float)


def tournament_data() -> dict[str, Any]:
    info = TournamentInfo("t1", {"rules": "grid5", "seed": 3}, WHEN, state={"sprt": {}})
    entries = [ScheduledGame(0, 0, "a", "b", 3), ScheduledGame(1, 0, "b", "a", 3)]
    data: dict[str, Any] = json.loads(tournament_line(info, entries, {None}))
    return data


def test_a_tournament_line_round_trips() -> None:
    tournament = tournament_from_portable(tournament_data())
    assert tournament == PortableTournament(
        TournamentInfo("t1", {"rules": "grid5", "seed": 3}, WHEN, state={"sprt": {}}),
        [ScheduledGame(0, 0, "a", "b", 3), ScheduledGame(1, 0, "b", "a", 3)])
    assert tournament_from_portable(changed(tournament_data(), "state", None)).info.state \
        == {}


@pytest.mark.parametrize(("path", "value", "message"), [
    ("format", "yard-game-record", "not a yard tournament line (format 'yard-game-record')"),
    ("version", 2, "tournament line version 2 is newer than this yard reads (1)"),
    ("version", 0, "tournament line version 0 is not a positive integer"),
    ("id", "", "id: must not be empty"),
    ("id", DELETE, "missing field 'id'"),
    ("spec", [], "tournament t1: spec: expected an object, got an array"),
    ("state", 5, "tournament t1: state: expected an object, got an integer"),
    ("created_at", "soon", "tournament t1: created_at: 'soon' is not an ISO 8601 time"),
    ("schedule", None, "tournament t1: schedule: expected an array, got null"),
    ("schedule.1", 1, "tournament t1: schedule[1]: expected an object, got an integer"),
    ("schedule.1.index", 0, "tournament t1: schedule names an index twice"),
    ("schedule.1.mrx", "", "tournament t1: schedule[1].mrx: must not be empty"),
    ("schedule.0.seed", DELETE, "tournament t1: schedule[0]: missing field 'seed'"),
])
def test_a_malformed_tournament_line_is_refused_naming_the_field(path: str, value: Any,
                                                                 message: str) -> None:
    with pytest.raises(RecordError) as info:
        tournament_from_portable(changed(tournament_data(), path, value))
    assert str(info.value) == message or str(info.value).startswith(message)


def stored_data() -> dict[str, Any]:
    record, _, _ = sample_record()
    record.transcripts = {"d1": [{"type": "ping"}]}
    data: dict[str, Any] = json.loads(json.dumps(to_stored(record)))
    return data


def test_a_stored_record_with_an_unbuildable_ruleset_reads_back() -> None:
    record, _, _ = sample_record()
    record.ruleset_definition = {**record.ruleset_definition, "board": "lost-map"}
    stored = json.loads(json.dumps(to_stored(record)))
    assert stored["board"] is None
    back = from_stored(stored, record.turns, ruleset="grid5", moves=record.moves,
                       tournament_id="t1")
    assert back == record


@pytest.mark.parametrize(("path", "value", "message"), [
    ("format", "x", "not a yard game record"),
    ("version", 0, "record version 0 is not a positive integer"),
    ("version", 5, "record version 5 is newer"),
    ("transcripts", 5, "transcripts: expected an object, got an integer"),
    ("players.0.seat", "x", "players[0].seat: must be 'mrx', 'd1', 'd2'..., not 'x'"),
    ("players.1.seat", "mrx", "players name a seat twice"),
    ("log.holders", [[0]], "log.holders must hold every seat of the players once"),
    ("started_at", DELETE, "missing field 'started_at'"),
])
def test_a_malformed_stored_record_is_a_database_error(path: str, value: Any, message: str
                                                       ) -> None:
    with pytest.raises(DatabaseError) as info:
        from_stored(changed(stored_data(), path, value), [], ruleset="grid5", moves=0)
    assert str(info.value).startswith("stored record of game 'g1' is malformed: ")
    assert message in str(info.value)


def test_read_lines_says_which_line_is_bad() -> None:
    good = json.dumps(game_line())
    bad = json.dumps(changed(game_line(), "moves.2.time", "slow"))
    lines = [good, "", "{not json", bad, json.dumps(tournament_data()), "[1]"]
    read = list(read_lines(lines))
    assert [n for n, _ in read] == [1, 3, 4, 5, 6]
    assert isinstance(read[0][1], PortableGame)
    assert isinstance(read[3][1], PortableTournament)
    assert str(read[1][1]).startswith("not valid JSON")
    assert str(read[2][1]) == "game g1: moves[2].time: expected a number, got a string"
    assert str(read[4][1]) == "a record must be a JSON object"


# ---------------------------------------------------------------- the property

names = st.text(min_size=1, max_size=12)
efforts = st.none() | st.integers(0, EFFORT_LIMIT - 1)
times = st.datetimes(timezones=st.none() | st.just(UTC))


@st.composite
def records(draw: st.DrawFn) -> tuple[GameRecord, TournamentInfo | None,
                                      ScheduledGame | None]:
    """A valid record: a random legal game with faults, effort, gaps in the turn indices,
    seats with instances, and optionally a match log, a split deal and a tournament."""
    rules = draw(st.sampled_from(["grid5", "classic"]))
    seed = draw(st.integers(0, 2**32))
    rng = random.Random(draw(st.integers(0, 2**32)))
    state = start = new_game(rules, seed)
    turns, index = [], draw(st.integers(0, 3))
    for _ in range(draw(st.integers(0, 12))):
        if state.outcome is not None:
            break
        seat = state.to_move
        fault = draw(st.none() | st.sampled_from(["timeout", "illegal_move"]))
        move = None if fault == "timeout" else rng.choice(state.legal_moves())
        turns.append(TurnRecord(
            index, seat, None if move is None else str(move),
            draw(st.integers(0, 10**8)) / 10**4, fault,
            draw(st.none() | st.text(max_size=30)), draw(efforts), draw(efforts),
            draw(efforts)))
        index += draw(st.sampled_from([1, 1, 1, 2, 5]))
        state = state if move is None else state.apply(move)
    record = record_from_moves(draw(st.text(min_size=1, max_size=64)), start, [], {0: "x"},
                               seed=draw(st.none() | st.integers(0, 2**63)),
                               started_at=draw(times), finished_at=draw(times))
    record.turns, record.moves = turns, state.move_number
    record.mrx_path = [start.mrx_station, *(station for _, station in state.log)]
    record.outcome = state.outcome or draw(st.sampled_from([
        Outcome(None, Termination.ABORTED),
        Outcome.forfeit(state.to_move, Termination.TIMEOUT)]))
    record.mrx_seed = draw(st.none() | st.integers(0, 2**32))
    for seat_record in record.seats:
        seat_record.bot_name, seat_record.bot_version = draw(names), draw(st.text(max_size=10))
        seat_record.instance = draw(st.none() | st.text(max_size=10))
    if draw(st.booleans()):
        seats, split = len(record.seats), draw(st.integers(1, len(record.seats)))
        holders = [list(range(split))] + ([list(range(split, seats))] if split < seats else [])
        record.log = MatchLog(
            holders, draw(st.integers(0, 60) | st.floats(0, 60)),
            draw(st.floats(0, 600)), draw(st.sampled_from(["forfeit", "random"])),
            draw(st.integers(1, 5)), draw(st.integers(0, 30) | st.floats(0, 30)),
            draw(st.lists(st.text(max_size=20) | st.fixed_dictionaries(
                {"dt": st.integers(0, 10**9), "kind": st.sampled_from(["tick", "detach"])}),
                max_size=4)))
    if not draw(st.booleans()):
        return record, None, None
    tournament = TournamentInfo(draw(names), {"rules": rules, "n": draw(st.integers())},
                                draw(times))
    record.tournament_id = tournament.tournament_id
    entry = draw(st.none() | st.builds(
        ScheduledGame, st.integers(0, 99), st.integers(0, 49), names, names,
        st.none() | st.integers(0, 2**32), st.none(), st.text(max_size=20)))
    return record, tournament, entry


@settings(max_examples=60)
@given(records())
def test_every_valid_record_round_trips(
        drawn: tuple[GameRecord, TournamentInfo | None, ScheduledGame | None]) -> None:
    record, tournament, entry = drawn
    line = to_line(record, tournament, entry)
    assert from_portable(json.loads(line)) == PortableGame(record, tournament, entry)
    assert list(read_lines([line])) == [(1, PortableGame(record, tournament, entry))]
    stored = json.loads(json.dumps(to_stored(record)))
    assert from_stored(stored, record.turns, ruleset=record.ruleset, moves=record.moves,
                       tournament_id=record.tournament_id) == record
    if tournament is not None:
        entries = [] if entry is None else [entry]
        data = json.loads(json.dumps(tournament_to_portable(tournament, entries, ())))
        assert tournament_from_portable(data) == PortableTournament(tournament, entries)
