"""Self-contained game records: one JSON object per game that replays without the database
and without any ruleset or map file (``yard export --what records``, ``yard import``,
``yard replay --json``). The format is documented in ``docs/records.md``.

A record holds the full ruleset definition (custom maps embedded; built-in boards by name
with a content hash), the seed, the start position, every turn (seat, move, time used as
the server measured it, fault, search effort the bot reported), Mister X's true path, the
result, the players and, for tournament games, the tournament and its schedule entry.
Reading a record (:func:`from_portable`) checks it completely: the ruleset and board, then
every move replayed by the engine, Mister X's path and the result
(:func:`db.replay.check_record`).

An export also holds one *tournament line* per tournament (:func:`tournament_to_portable`,
read by :func:`tournament_from_portable`): its whole schedule and runner state, so an
import restores the games still to play and an SPRT's recorded decision.

The database stores this record too (:func:`to_stored`, read back by :func:`from_stored`):
without ``first_turn``, ``moves``, ``tournament`` and ``schedule``, which its tables hold
(``turns``, ``games.tournament_id``, ``games.schedule_id``), and with ``transcripts`` when a
record carries some (a forfeit's reason). Rows stored by older yards are read by
:mod:`db.legacy`. No SQLAlchemy here: the database side is :mod:`db.store`.

>>> from game import new_game
>>> from db.build import record_from_moves
>>> start = new_game("grid5", seed=4)
>>> rec = record_from_moves("g1", start, [(0, start.legal_moves()[0])], {0: "a", 1: "b"})
>>> data = to_portable(rec)
>>> data["format"], data["version"], data["moves"][0]["seat"], data["board"]["name"]
('yard-game-record', 1, 'mrx', 'grid5x5')
>>> from_portable(json.loads(json.dumps(data))).record.turns == rec.turns
True
>>> stored = to_stored(rec)
>>> sorted(set(data) - set(stored))
['first_turn', 'moves', 'schedule', 'tournament']
>>> from_stored(stored, rec.turns, ruleset=rec.ruleset, moves=rec.moves) == rec
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from db.errors import DatabaseError, RecordError, ReplayError
from db.replay import check_record, replay_game
from game import Outcome, YardError, parse_seat, seat_name
from game.board import board_digest
from game.rules import Ruleset, load_ruleset, ruleset_from_dict
from protocol.messages import EFFORT_KEYS, EFFORT_LIMIT
from records import (
    GameRecord,
    MatchLog,
    ScheduledGame,
    SeatRecord,
    TournamentInfo,
    TurnRecord,
)

RECORD_FORMAT = "yard-game-record"
RECORD_VERSION = 1
TOURNAMENT_FORMAT = "yard-tournament"
TOURNAMENT_VERSION = 1
TIME_DIGITS = 4
"""Times are stored rounded to 0.1 ms."""

MAX_GAME_ID = 64
MAX_BOT_NAME = 200
MAX_BOT_VERSION = 100
MAX_MOVE = 40
MAX_FAULT = 40
MAX_INSTANCE = 64
MAX_START = 10_000
MAX_LINE = 16 * 1024 * 1024


@dataclass
class PortableGame:
    """A game read from a record: the :class:`GameRecord` (without transcripts), and the
    tournament and schedule entry it belonged to (``None`` outside a tournament; a game
    that was aborted has a tournament but no entry). The entry's ``schedule_id`` is
    ``None``: schedule ids belong to one database."""

    record: GameRecord
    tournament: TournamentInfo | None = None
    entry: ScheduledGame | None = None


@dataclass
class PortableTournament:
    """A tournament read from a tournament line of an export: ``info`` (id, spec, creation
    time and runner ``state``; its counts are 0) and its whole ``schedule``, played and
    unplayed entries (``seed`` ``None`` where the export withheld it; ``schedule_id``
    ``None``)."""

    info: TournamentInfo
    schedule: list[ScheduledGame]


# ---------------------------------------------------------------- writing


def to_portable(record: GameRecord, tournament: TournamentInfo | None = None,
                entry: ScheduledGame | None = None) -> dict[str, Any]:
    """The self-contained record of a stored game (JSON-ready).

    Raises :class:`RecordError` if the game's ruleset cannot be rebuilt (a game stored by
    an older yard on a custom map, whose map was not kept).
    """
    first = record.turns[0].index if record.turns else 0
    data = {
        **_head(record), "first_turn": first,
        "moves": [_move(t, first + i) for i, t in enumerate(record.turns)],
        **_tail(record),
        "tournament": None if tournament is None else {
            "id": tournament.tournament_id, "created_at": tournament.created_at.isoformat(),
            "spec": _exported_spec(tournament)},
        "schedule": None if entry is None else _entry_dict(entry, entry.seed),
    }
    if record.log is not None:  # the server's match log: every message can be rebuilt
        data["log"] = record.log.to_dict()
    return data


def tournament_to_portable(tournament: TournamentInfo, entries: Sequence[ScheduledGame],
                           unplayed: Collection[int | None]) -> dict[str, Any]:
    """The tournament line of an export (JSON-ready): the tournament (id, creation time,
    spec as :func:`to_portable` carries it, the runner's ``state``: an SPRT's recorded
    test and whether it is finished) and its whole schedule, so an import restores the
    games still to play. ``unplayed``: the schedule ids of the entries without a stored
    game. A tournament with secret deals that is not finished withholds their seeds (as it
    withholds the key): they would tell its future deals."""
    spec = tournament.spec
    secret_deals = spec.get("secret") is not None or ("seed" in spec and spec["seed"] is None)
    withhold = secret_deals and not tournament.finished
    return {
        "format": TOURNAMENT_FORMAT, "version": TOURNAMENT_VERSION,
        "id": tournament.tournament_id, "created_at": tournament.created_at.isoformat(),
        "spec": _exported_spec(tournament), "state": tournament.state,
        "schedule": [_entry_dict(e, None if withhold and e.schedule_id in unplayed
                                 else e.seed) for e in entries],
    }


def tournament_line(tournament: TournamentInfo, entries: Sequence[ScheduledGame],
                    unplayed: Collection[int | None]) -> str:
    """:func:`tournament_to_portable` as one line of JSON Lines (no newline at the end)."""
    return json.dumps(tournament_to_portable(tournament, entries, unplayed),
                      separators=(",", ":"))


def _entry_dict(entry: ScheduledGame, seed: int | None) -> dict[str, Any]:
    return {"index": entry.index, "pair_index": entry.pair_index, "pair_key": entry.pair_key,
            "mrx": entry.mrx, "detectives": entry.detectives, "seed": seed}


def _exported_spec(tournament: TournamentInfo) -> dict[str, Any]:
    """The tournament's spec as records carry it: its deal ``secret`` only once the
    tournament is finished (until then it would let anyone holding the file predict the
    games still to be played)."""
    if tournament.finished:
        return tournament.spec
    return {k: v for k, v in tournament.spec.items() if k != "secret"}


def to_stored(record: GameRecord) -> dict[str, Any]:
    """The record as the database stores it: :func:`to_portable` without what the tables
    hold (``first_turn``, ``moves``, ``tournament``, ``schedule``), with the record's
    ``transcripts`` when it has some. A game whose ruleset does not build is stored with
    its definition as it is and ``board`` ``null`` (it is kept; only its export fails)."""
    try:
        head = _head(record)
    except RecordError:
        head = _head(record, strict=False)
    data = {**head, **_tail(record)}
    if record.log is not None:
        data["log"] = record.log.to_dict()
    if record.transcripts:
        data["transcripts"] = record.transcripts
    return data


def _head(record: GameRecord, strict: bool = True) -> dict[str, Any]:
    rules = _record_rules(record) if strict else None
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION,
        "game_id": record.game_id,
        "ruleset": record.ruleset_definition if rules is None else rules.definition(),
        "board": None if rules is None else {"name": rules.board.name,
                                             "sha256": board_digest(rules.board)},
        "seed": record.seed,
        **({} if record.mrx_seed is None else {"mrx_seed": record.mrx_seed}),
        "start": record.start_position,
        "players": [_player(s) for s in sorted(record.seats, key=lambda s: s.seat)],
    }


def _tail(record: GameRecord) -> dict[str, Any]:
    return {"mrx_path": list(record.mrx_path), "result": record.outcome.to_dict(),
            "started_at": record.started_at.isoformat(),
            "finished_at": record.finished_at.isoformat()}


def to_line(record: GameRecord, tournament: TournamentInfo | None = None,
            entry: ScheduledGame | None = None) -> str:
    """The record as one line of JSON Lines (no newline at the end)."""
    return json.dumps(to_portable(record, tournament, entry), separators=(",", ":"))


def _record_rules(record: GameRecord) -> Ruleset:
    try:
        if record.ruleset_definition:
            return ruleset_from_dict(record.ruleset_definition, "ruleset")
        return load_ruleset(record.ruleset)
    except YardError as exc:
        raise RecordError(f"game {record.game_id}: cannot rebuild its ruleset, so it cannot "
                          f"be exported: {exc}") from None


def _move(turn: TurnRecord, expected_index: int) -> dict[str, Any]:
    data: dict[str, Any] = {"seat": seat_name(turn.seat), "move": turn.move,
                            "time": round(turn.time_used, TIME_DIGITS)}
    if turn.fault is not None:
        data["fault"] = turn.fault
    if turn.detail is not None:
        data["detail"] = turn.detail
    for key in EFFORT_KEYS:
        if (value := getattr(turn, key)) is not None:
            data[key] = value
    if turn.index != expected_index:
        data["index"] = turn.index
    return data


def _player(seat: SeatRecord) -> dict[str, Any]:
    data: dict[str, Any] = {"seat": seat_name(seat.seat), "bot": seat.bot_name,
                            "version": seat.bot_version}
    if seat.instance is not None:
        data["instance"] = seat.instance
    return data


# ---------------------------------------------------------------- reading


def from_portable(data: Any) -> PortableGame:
    """Read and check one record (the parsed JSON object).

    Raises :class:`RecordError` saying what is wrong: a missing or mistyped field, an
    unknown format or a newer version, a ruleset or board that does not build or differs
    from the one the game was played on, a move that is illegal or made out of turn, or a
    path or result that the moves do not give. Keys this version does not know are ignored.
    """
    if not isinstance(data, dict):
        raise RecordError("a record must be a JSON object")
    named = data.get("game_id")
    try:
        return _checked(data)
    except RecordError as exc:
        if isinstance(named, str) and named:
            raise RecordError(f"game {named:.{MAX_GAME_ID}}: {exc}") from None
        raise


def _checked(data: dict[str, Any]) -> PortableGame:
    if data.get("format") != RECORD_FORMAT:
        raise RecordError(f"not a yard game record (format {data.get('format')!r:.40}, "
                          f"expected {RECORD_FORMAT!r})")
    _check_version(data, "record", RECORD_VERSION)
    game_id = _str(data, "game_id", MAX_GAME_ID)
    if not game_id:
        raise RecordError("game_id must not be empty")
    return _read(data, game_id)


def _check_version(data: dict[str, Any], what: str, newest: int) -> None:
    """:class:`RecordError` unless ``data["version"]`` is a version up to ``newest``."""
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"{what} version {version!r:.40} is not a positive integer")
    if version > newest:
        raise RecordError(f"{what} version {version} is newer than this yard reads "
                          f"({newest}); upgrade yard")


def _read(data: dict[str, Any], game_id: str) -> PortableGame:
    rules = _rules(data)
    record = GameRecord(
        game_id=game_id, ruleset=rules.name, ruleset_definition=_dict(data, "ruleset"),
        seed=_opt_int(data, "seed"), start_position=_str(data, "start", MAX_START),
        seats=_seats(data), outcome=_outcome(data), turns=_turns(data),
        mrx_path=_int_list(data, "mrx_path"), started_at=_time(data, "started_at"),
        finished_at=_time(data, "finished_at"), moves=0, mrx_seed=_mrx_seed(data))
    record.moves = len(record.mrx_path) - 1
    try:
        check_record(replay_game(record))
    except ReplayError as exc:
        text = str(exc)
        prefix = f"game {game_id}"
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip(":, ")
        raise RecordError(text) from None
    record.log = _match_log(data, record.seats)
    tournament, entry = _tournament(data)
    record.tournament_id = tournament.tournament_id if tournament else None
    return PortableGame(record, tournament, entry)


def _rules(data: dict[str, Any]) -> Ruleset:
    definition = _dict(data, "ruleset")
    board = _dict(data, "board")
    try:
        rules = ruleset_from_dict(dict(definition), "ruleset")
    except YardError as exc:
        raise RecordError(str(exc)) from None
    digest = board.get("sha256")
    if not isinstance(digest, str):
        raise RecordError("board.sha256 must be a string")
    if board_digest(rules.board) != digest:
        where = "embedded map" if isinstance(definition.get("board"), dict) \
            else f"board {rules.board.name!r} of this yard"
        raise RecordError(f"the {where} differs from the board the game was played on "
                          f"(sha256 {board_digest(rules.board)[:12]}..., record "
                          f"{digest[:12]}...)")
    return rules


def _seats(data: dict[str, Any]) -> list[SeatRecord]:
    seats = []
    for i, raw in enumerate(_list(data, "players")):
        where = f"players[{i}]"
        if not isinstance(raw, dict):
            raise RecordError(f"{where} must be an object")
        seat = _seat(raw.get("seat"), where)
        name = _str(raw, "bot", MAX_BOT_NAME, where)
        if not name:
            raise RecordError(f"{where}.bot must not be empty")
        seats.append(SeatRecord(seat, name, _str(raw, "version", MAX_BOT_VERSION, where),
                                _opt_str(raw, "instance", MAX_INSTANCE, where)))
    if len({s.seat for s in seats}) != len(seats):
        raise RecordError("players name a seat twice")
    return seats


def _turns(data: dict[str, Any]) -> list[TurnRecord]:
    first = data.get("first_turn", 0)
    if not isinstance(first, int) or isinstance(first, bool):
        raise RecordError("first_turn must be an integer")
    turns = []
    for i, raw in enumerate(_list(data, "moves")):
        where = f"moves[{i}]"
        if not isinstance(raw, dict):
            raise RecordError(f"{where} must be an object")
        move = _opt_str(raw, "move", MAX_MOVE, where)
        fault = _opt_str(raw, "fault", MAX_FAULT, where)
        if move is None and fault is None:
            raise RecordError(f"{where}: a turn without a move must name its fault")
        time_used = raw.get("time")
        if not isinstance(time_used, int | float) or isinstance(time_used, bool) \
                or not math.isfinite(time_used) or time_used < 0:
            raise RecordError(f"{where}.time must be a number of seconds >= 0")
        index = raw.get("index", first + i)
        if not isinstance(index, int) or isinstance(index, bool):
            raise RecordError(f"{where}.index must be an integer")
        effort = {key: _effort(raw, key, where) for key in EFFORT_KEYS}
        turns.append(TurnRecord(index, _seat(raw.get("seat"), where), move,
                                float(time_used), fault,
                                _opt_str(raw, "detail", 100_000, where), **effort))
    if len({t.index for t in turns}) != len(turns):
        raise RecordError("two moves have the same index")
    return turns


MAX_EVENT = 100_000
"""Most characters in one logged event's text (a move as a bot sent it)."""


def _match_log(data: dict[str, Any], seats: list[SeatRecord]) -> MatchLog | None:
    """The optional ``log``, checked for shape (``server.transcript.regenerate`` re-runs
    it and says which event does not fit the game)."""
    raw = data.get("log")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RecordError("log must be an object or null")
    holders = raw.get("holders")
    if not isinstance(holders, list) or not all(
            isinstance(h, list) and h and all(_is_int(s) for s in h) for h in holders):
        raise RecordError("log.holders must be lists of seat numbers")
    if sorted(s for h in holders for s in h) != sorted(s.seat for s in seats):
        raise RecordError("log.holders must hold every seat of the players once")
    numbers: dict[str, Any] = {}
    for key in ("move_s", "bank_s", "grace_s"):
        value = raw.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool) \
                or not math.isfinite(value) or value < 0:
            raise RecordError(f"log.{key} must be a number of seconds >= 0")
        numbers[key] = value  # as the server had it (10 or 10.0: game_start shows it)
    on_timeout = raw.get("on_timeout")
    if on_timeout not in ("forfeit", "random"):
        raise RecordError("log.on_timeout must be 'forfeit' or 'random'")
    max_illegal = raw.get("max_illegal")
    if not isinstance(max_illegal, int) or isinstance(max_illegal, bool) or max_illegal < 1:
        raise RecordError("log.max_illegal must be an integer >= 1")
    events = raw.get("events")
    if not isinstance(events, list):
        raise RecordError("log.events must be a list")
    for i, event in enumerate(events):
        text = event if isinstance(event, str) else json.dumps(event)
        if not isinstance(event, str | dict) or len(text) > MAX_EVENT:
            raise RecordError(f"log.events[{i}] must be a string or an object (at most "
                              f"{MAX_EVENT} characters)")
        if isinstance(event, dict) and not (_is_int(event.get("dt"))
                                            and isinstance(event.get("kind"), str)):
            raise RecordError(f"log.events[{i}] needs an integer dt and a kind")
    seat_seed = raw.get("seat_seed")
    if seat_seed is not None and not (_is_int(seat_seed) and seat_seed >= 0):
        raise RecordError("log.seat_seed must be an integer >= 0 (or absent)")
    return MatchLog([list(h) for h in holders], numbers["move_s"], numbers["bank_s"],
                    on_timeout, max_illegal, numbers["grace_s"], list(events), seat_seed)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _outcome(data: dict[str, Any]) -> Outcome:
    raw = _dict(data, "result")
    try:
        outcome = Outcome.from_dict(raw)
    except (KeyError, TypeError, ValueError):
        raise RecordError(f"result {raw!r:.200} is not {{winner, termination, seat}}") \
            from None
    if outcome.seat is not None and (not isinstance(outcome.seat, int)
                                     or isinstance(outcome.seat, bool) or outcome.seat < 0):
        raise RecordError("result.seat must be a seat number or null")
    return outcome


def _tournament(data: dict[str, Any]) -> tuple[TournamentInfo | None, ScheduledGame | None]:
    raw = data.get("tournament")
    entry_raw = data.get("schedule")
    if raw is None:
        if entry_raw is not None:
            raise RecordError("a schedule entry needs its tournament")
        return None, None
    if not isinstance(raw, dict):
        raise RecordError("tournament must be an object or null")
    tid = _str(raw, "id", MAX_GAME_ID, "tournament")
    if not tid:
        raise RecordError("tournament.id must not be empty")
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        raise RecordError("tournament.spec must be an object")
    info = TournamentInfo(tid, spec, _time(raw, "created_at", "tournament"))
    if entry_raw is None:
        return info, None
    if not isinstance(entry_raw, dict):
        raise RecordError("schedule must be an object or null")
    return info, _entry(entry_raw, "schedule")


def _entry(raw: Any, where: str) -> ScheduledGame:
    """A schedule entry ``{"index", "pair_index", "pair_key", "mrx", "detectives",
    "seed"}``."""
    if not isinstance(raw, dict):
        raise RecordError(f"{where} must be an object")
    ints = {}
    for key in ("index", "pair_index"):
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise RecordError(f"{where}.{key} must be an integer")
        ints[key] = value
    entry = ScheduledGame(ints["index"], ints["pair_index"], _str(raw, "mrx", 400, where),
                          _str(raw, "detectives", 400, where), _opt_int(raw, "seed", where),
                          pair_key=_str(raw, "pair_key", 400, where))
    if not entry.mrx or not entry.detectives:
        raise RecordError(f"{where}.mrx and {where}.detectives must not be empty")
    return entry


def tournament_from_portable(data: Any) -> PortableTournament:
    """Read and check one tournament line (the parsed JSON object; see
    :func:`tournament_to_portable`). Raises :class:`RecordError` saying what is wrong."""
    if not isinstance(data, dict) or data.get("format") != TOURNAMENT_FORMAT:
        raise RecordError(f"not a yard tournament line (format "
                          f"{data.get('format') if isinstance(data, dict) else None!r:.40})")
    _check_version(data, "tournament line", TOURNAMENT_VERSION)
    tid = _str(data, "id", MAX_GAME_ID)
    if not tid:
        raise RecordError("tournament id must not be empty")
    try:
        spec = _dict(data, "spec")
        state = data.get("state") or {}
        if not isinstance(state, dict):
            raise RecordError("state must be an object")
        entries = [_entry(raw, f"schedule[{i}]")
                   for i, raw in enumerate(_list(data, "schedule"))]
        if len({e.index for e in entries}) != len(entries):
            raise RecordError("schedule names an index twice")
        info = TournamentInfo(tid, spec, _time(data, "created_at"), state=state)
    except RecordError as exc:
        raise RecordError(f"tournament {tid}: {exc}") from None
    return PortableTournament(info, entries)


def from_stored(data: Any, turns: list[TurnRecord], *, ruleset: str, moves: int,
                tournament_id: str | None = None, schedule_id: int | None = None
                ) -> GameRecord:
    """The :class:`GameRecord` of a record written by :func:`to_stored`, given what the
    tables hold (its turns, the ``games`` row's ruleset name, move count, tournament and
    schedule entry). The shape is checked, the moves are not replayed (they were checked
    when stored); raises :class:`DatabaseError` on a malformed record."""
    named = data.get("game_id") if isinstance(data, dict) else None
    try:
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise RecordError("not a yard game record")
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) \
                or not 1 <= version <= RECORD_VERSION:
            raise RecordError(f"record version {version!r:.40} is not one this yard reads "
                              f"(1..{RECORD_VERSION}); upgrade yard")
        seats = _seats(data)
        transcripts = data.get("transcripts") or {}
        if not isinstance(transcripts, dict):
            raise RecordError("transcripts must be an object")
        return GameRecord(
            game_id=_str(data, "game_id", MAX_GAME_ID), ruleset=ruleset,
            ruleset_definition=_dict(data, "ruleset"), seed=_opt_int(data, "seed"),
            start_position=_str(data, "start", MAX_START), seats=seats,
            outcome=_outcome(data), turns=turns, mrx_path=_int_list(data, "mrx_path"),
            started_at=_time(data, "started_at"), finished_at=_time(data, "finished_at"),
            moves=moves, tournament_id=tournament_id, schedule_id=schedule_id,
            transcripts=transcripts, log=_match_log(data, seats), mrx_seed=_mrx_seed(data))
    except RecordError as exc:
        raise DatabaseError(f"stored record of game {named!r:.{MAX_GAME_ID + 2}} is "
                            f"malformed: {exc}") from None


# ---------------------------------------------------------------- field helpers


def _field(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise RecordError(f"missing field {_name(key, where)}")
    return data[key]


def _name(key: str, where: str) -> str:
    return f"{where}.{key}" if where else key


def _str(data: dict[str, Any], key: str, limit: int, where: str = "") -> str:
    value = _field(data, key, where)
    if not isinstance(value, str) or len(value) > limit:
        raise RecordError(f"{_name(key, where)} must be a string of at most {limit} "
                          "characters")
    return value


def _opt_str(data: dict[str, Any], key: str, limit: int, where: str = "") -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise RecordError(f"{_name(key, where)} must be a string of at most {limit} "
                          "characters, or null")
    return value


def _opt_int(data: dict[str, Any], key: str, where: str = "") -> int | None:
    value = _field(data, key, where)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise RecordError(f"{_name(key, where)} must be an integer or null")
    return value


def _mrx_seed(data: dict[str, Any]) -> int | None:
    """The optional ``mrx_seed`` (absent in records of games dealt from ``seed`` alone)."""
    return _opt_int(data, "mrx_seed") if "mrx_seed" in data else None


def _dict(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = _field(data, key, "")
    if not isinstance(value, dict):
        raise RecordError(f"{key} must be an object")
    return value


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = _field(data, key, "")
    if not isinstance(value, list):
        raise RecordError(f"{key} must be a list")
    return value


def _int_list(data: dict[str, Any], key: str) -> list[int]:
    value = _list(data, key)
    if not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise RecordError(f"{key} must be a non-empty list of station numbers")
    return value


def _effort(data: dict[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or not 0 <= value < EFFORT_LIMIT):
        raise RecordError(f"{where}.{key} must be an integer in 0..2**63-1, or absent")
    return value


def _seat(value: Any, where: str) -> int:
    try:
        if isinstance(value, str):
            return parse_seat(value)
    except ValueError:
        pass
    raise RecordError(f"{where}.seat must be 'mrx', 'd1', 'd2'..., not {value!r:.40}")


def _time(data: dict[str, Any], key: str, where: str = "") -> datetime:
    value = _str(data, key, 64, where)
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(f"{_name(key, where)} {value!r} is not an ISO 8601 time") from None


# ---------------------------------------------------------------- JSON Lines


def read_lines(lines: Iterable[str]
               ) -> Iterator[tuple[int, PortableGame | PortableTournament | RecordError]]:
    """Each non-blank line of a JSON Lines text with its 1-based number: the game (or the
    tournament of a tournament line) read from it, or the :class:`RecordError` that says
    why it cannot be read."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            yield number, RecordError(f"line is longer than {MAX_LINE} characters")
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            yield number, RecordError(f"not valid JSON: {exc}")
            continue
        try:
            if isinstance(data, dict) and data.get("format") == TOURNAMENT_FORMAT:
                yield number, tournament_from_portable(data)
            else:
                yield number, from_portable(data)
        except RecordError as exc:
            yield number, exc


__all__ = ["EFFORT_KEYS", "EFFORT_LIMIT", "RECORD_FORMAT", "RECORD_VERSION",
           "TOURNAMENT_FORMAT", "TOURNAMENT_VERSION", "PortableGame", "PortableTournament",
           "from_portable", "from_stored", "read_lines", "to_line", "to_portable", "to_stored",
           "tournament_from_portable", "tournament_line", "tournament_to_portable"]
