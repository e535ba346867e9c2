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
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, TypeVar

from db.errors import DatabaseError, RecordError, ReplayError
from db.replay import check_record, replay_game
from game import Outcome, Termination, Winner, YardError, parse_seat, seat_name
from game.board import board_digest
from game.rules import Ruleset, load_ruleset, ruleset_from_dict
from protocol.decoding import Check, Length, Parsed, Range, decode_value
from protocol.errors import ProtocolError
from protocol.messages import EFFORT_KEYS, EFFORT_LIMIT, OnTimeout
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
MAX_SPEC = 400
MAX_DETAIL = 100_000
MAX_START = 10_000
MAX_EVENT = 100_000
"""Most characters in one logged event's text (a move as a bot sent it)."""
MAX_LINE = 16 * 1024 * 1024

_T = TypeVar("_T")


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


# ---------------------------------------------------------------- the format, as types
# Each line is decoded by the protocol's typed decoder into these (keys they lack are
# ignored, so a newer writer may add some); the decoder's errors name the field.

_Seat = Annotated[int, Parsed(parse_seat, "'mrx', 'd1', 'd2'...")]
_Seconds = Annotated[float, Range(min=0)]
_EffortCount = Annotated[int, Range(0, EFFORT_LIMIT - 1)]
_GameId = Annotated[str, Length(1, MAX_GAME_ID)]
_PlayerSpec = Annotated[str, Length(1, MAX_SPEC)]


def _is_event(event: dict[str, Any]) -> bool:
    dt = event.get("dt")
    return (isinstance(dt, int) and not isinstance(dt, bool)
            and isinstance(event.get("kind"), str) and len(json.dumps(event)) <= MAX_EVENT)


@dataclass(slots=True)
class _Player:
    seat: _Seat
    bot: Annotated[str, Length(1, MAX_BOT_NAME)]
    version: Annotated[str, Length(max=MAX_BOT_VERSION)]
    instance: Annotated[str, Length(max=MAX_INSTANCE)] | None = None


@dataclass(slots=True)
class _Move:
    seat: _Seat
    time: _Seconds
    move: Annotated[str, Length(max=MAX_MOVE)] | None = None
    fault: Annotated[str, Length(max=MAX_FAULT)] | None = None
    detail: Annotated[str, Length(max=MAX_DETAIL)] | None = None
    playouts: _EffortCount | None = None
    nodes: _EffortCount | None = None
    depth: _EffortCount | None = None
    #: Absent when the turn follows on from the one before (null is refused).
    index: Annotated[int | None, Check(lambda v: v is not None, "an integer")] = None


@dataclass(slots=True)
class _Log:
    holders: list[Annotated[list[int], Length(min=1)]]
    move_s: Annotated[int | float, Range(min=0)]  # kept as the server had it: 10 or 10.0
    bank_s: Annotated[int | float, Range(min=0)]
    on_timeout: OnTimeout
    max_illegal: Annotated[int, Range(min=1)]
    grace_s: Annotated[int | float, Range(min=0)]
    events: list[Annotated[str, Length(max=MAX_EVENT)] | Annotated[dict[str, Any], Check(
        _is_event, f"an object with an integer dt and a string kind (at most {MAX_EVENT} "
        "characters)")]]
    #: The game's seat seed (server.match.MatchSpec.seat_seed); absent in older logs.
    seat_seed: Annotated[int, Range(min=0)] | None = None


@dataclass(slots=True)
class _Result:
    termination: Termination
    winner: Winner | None = None
    seat: Annotated[int, Range(min=0)] | None = None


@dataclass(slots=True)
class _Board:
    sha256: str


@dataclass(slots=True)
class _Tournament:
    id: _GameId
    created_at: datetime
    spec: dict[str, Any]


@dataclass(slots=True)
class _Entry:
    index: int
    pair_index: int
    pair_key: Annotated[str, Length(max=MAX_SPEC)]
    mrx: _PlayerSpec
    detectives: _PlayerSpec
    seed: int | None

    def scheduled(self) -> ScheduledGame:
        return ScheduledGame(self.index, self.pair_index, self.mrx, self.detectives,
                             self.seed, pair_key=self.pair_key)


@dataclass(slots=True, kw_only=True)
class _Body:
    """What game lines and stored records share."""

    game_id: _GameId
    ruleset: dict[str, Any]
    seed: int | None
    mrx_seed: int | None = None
    start: Annotated[str, Length(max=MAX_START)]
    players: list[_Player]
    mrx_path: Annotated[list[int], Length(min=1)]
    result: _Result
    started_at: datetime
    finished_at: datetime
    log: _Log | None = None


@dataclass(slots=True, kw_only=True)
class _GameLine(_Body):
    board: _Board
    first_turn: int = 0
    moves: list[_Move]
    tournament: _Tournament | None = None
    schedule: _Entry | None = None


@dataclass(slots=True, kw_only=True)
class _Stored(_Body):
    transcripts: dict[str, Any] | None = None


@dataclass(slots=True)
class _TournamentLine:
    id: _GameId
    created_at: datetime
    spec: dict[str, Any]
    schedule: list[_Entry]
    state: dict[str, Any] | None = None


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
        if data.get("format") != RECORD_FORMAT:
            raise RecordError(f"not a yard game record (format {data.get('format')!r:.40}, "
                              f"expected {RECORD_FORMAT!r})")
        _check_version(data, "record", RECORD_VERSION)
        return _read(_decode(_GameLine, data))
    except RecordError as exc:
        if isinstance(named, str) and named:
            raise RecordError(f"game {named:.{MAX_GAME_ID}}: {exc}") from None
        raise


def _check_version(data: dict[str, Any], what: str, newest: int) -> None:
    """:class:`RecordError` unless ``data["version"]`` is a version up to ``newest``."""
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"{what} version {version!r:.40} is not a positive integer")
    if version > newest:
        raise RecordError(f"{what} version {version} is newer than this yard reads "
                          f"({newest}); upgrade yard")


def _decode(tp: type[_T], data: dict[str, Any]) -> _T:
    try:
        return decode_value(tp, data, strict=False)
    except ProtocolError as exc:
        raise RecordError(str(exc)) from None


def _read(line: _GameLine) -> PortableGame:
    rules = _rules(line.ruleset, line.board.sha256)
    record = _game_record(line, _turns(line), ruleset=rules.name,
                          moves=len(line.mrx_path) - 1)
    try:
        check_record(replay_game(record))
    except ReplayError as exc:
        text = str(exc)
        prefix = f"game {line.game_id}"
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip(":, ")
        raise RecordError(text) from None
    record.log = _match_log(line.log, record.seats)
    if line.tournament is None:
        if line.schedule is not None:
            raise RecordError("a schedule entry needs its tournament")
        return PortableGame(record)
    tournament = TournamentInfo(line.tournament.id, line.tournament.spec,
                                line.tournament.created_at)
    record.tournament_id = tournament.tournament_id
    entry = None if line.schedule is None else line.schedule.scheduled()
    return PortableGame(record, tournament, entry)


def _game_record(line: _Body, turns: list[TurnRecord], **tables: Any) -> GameRecord:
    """The record of a decoded line (without its log), with what the tables hold
    (``tables``: ``ruleset``, ``moves``, ...)."""
    seats = [SeatRecord(p.seat, p.bot, p.version, p.instance) for p in line.players]
    if len({s.seat for s in seats}) != len(seats):
        raise RecordError("players name a seat twice")
    result = line.result
    return GameRecord(
        game_id=line.game_id, ruleset_definition=line.ruleset, seed=line.seed,
        start_position=line.start, seats=seats,
        outcome=Outcome(result.winner, result.termination, result.seat), turns=turns,
        mrx_path=line.mrx_path, started_at=line.started_at, finished_at=line.finished_at,
        mrx_seed=line.mrx_seed, **tables)


def _rules(definition: dict[str, Any], digest: str) -> Ruleset:
    try:
        rules = ruleset_from_dict(dict(definition), "ruleset")
    except YardError as exc:
        raise RecordError(str(exc)) from None
    if board_digest(rules.board) != digest:
        where = "embedded map" if isinstance(definition.get("board"), dict) \
            else f"board {rules.board.name!r} of this yard"
        raise RecordError(f"the {where} differs from the board the game was played on "
                          f"(sha256 {board_digest(rules.board)[:12]}..., record "
                          f"{digest[:12]}...)")
    return rules


def _turns(line: _GameLine) -> list[TurnRecord]:
    turns = []
    for i, m in enumerate(line.moves):
        if m.move is None and m.fault is None:
            raise RecordError(f"moves[{i}]: a turn without a move must name its fault")
        index = line.first_turn + i if m.index is None else m.index
        turns.append(TurnRecord(index, m.seat, m.move, m.time, m.fault, m.detail,
                                m.playouts, m.nodes, m.depth))
    if len({t.index for t in turns}) != len(turns):
        raise RecordError("two moves have the same index")
    return turns


def _match_log(log: _Log | None, seats: list[SeatRecord]) -> MatchLog | None:
    """The optional ``log``, whose shape the decoder checked: its holders must be the
    players' seats (``server.transcript.regenerate`` re-runs it and says which event does
    not fit the game)."""
    if log is None:
        return None
    if sorted(s for h in log.holders for s in h) != sorted(s.seat for s in seats):
        raise RecordError("log.holders must hold every seat of the players once")
    return MatchLog(log.holders, log.move_s, log.bank_s, log.on_timeout.value,
                    log.max_illegal, log.grace_s, log.events, log.seat_seed)


def tournament_from_portable(data: Any) -> PortableTournament:
    """Read and check one tournament line (the parsed JSON object; see
    :func:`tournament_to_portable`). Raises :class:`RecordError` saying what is wrong."""
    if not isinstance(data, dict) or data.get("format") != TOURNAMENT_FORMAT:
        raise RecordError(f"not a yard tournament line (format "
                          f"{data.get('format') if isinstance(data, dict) else None!r:.40})")
    _check_version(data, "tournament line", TOURNAMENT_VERSION)
    named = data.get("id")
    try:
        line = _decode(_TournamentLine, data)
        if len({e.index for e in line.schedule}) != len(line.schedule):
            raise RecordError("schedule names an index twice")
    except RecordError as exc:
        if isinstance(named, str) and named:
            raise RecordError(f"tournament {named:.{MAX_GAME_ID}}: {exc}") from None
        raise
    info = TournamentInfo(line.id, line.spec, line.created_at, state=line.state or {})
    return PortableTournament(info, [e.scheduled() for e in line.schedule])


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
        _check_version(data, "record", RECORD_VERSION)
        line = _decode(_Stored, data)
        record = _game_record(line, turns, ruleset=ruleset, moves=moves,
                              tournament_id=tournament_id, schedule_id=schedule_id,
                              transcripts=line.transcripts or {})
        record.log = _match_log(line.log, record.seats)
        return record
    except RecordError as exc:
        raise DatabaseError(f"stored record of game {named!r:.{MAX_GAME_ID + 2}} is "
                            f"malformed: {exc}") from None


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
