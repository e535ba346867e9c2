"""Finished games: storing them (one transaction per batch, checked against their schedule
entries), importing self-contained records, loading a game back, and the per-game reads
that ratings and ``yard games`` use.

``game_records.record`` holds each game's self-contained record (:func:`db.portable.to_stored`);
rows that older yards wrote are read by :mod:`db.legacy`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from operator import attrgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, selectinload

from db.errors import AlreadyPlayedError, DatabaseError, GameNotFoundError, TournamentError
from db.legacy import has_turns, is_old, record_from_old
from db.models import (
    BotRow,
    GameRecordRow,
    GameRow,
    GameSeatRow,
    ScheduledGameRow,
    TurnRow,
)
from db.portable import EFFORT_KEYS, PortableGame, PortableTournament, from_stored, to_stored
from db.store.base import Connection, aware, utc
from db.store.schedule import ensure_entry
from db.store.tournaments import ensure_tournament, import_tournament
from game import Termination, Winner, seat_name
from records import ComputeRow, GameRecord, GameSummary, ResultRow, TurnRecord

log = logging.getLogger(__name__)

_BIGINT = 2**63


class Games(Connection):
    """Storing and reading finished games."""

    def __init__(self, engine: Engine, url_text: str) -> None:
        """Wrap ``engine`` with empty bot and insert-plan caches."""
        super().__init__(engine, url_text)
        #: Bot ids by (name, version) that committed games use (bot rows are never
        #: changed or deleted); cleared when a write fails.
        self._bot_cache: dict[tuple[str, str], int] = {}
        #: Plain-tuple inserts for SQLite (see :meth:`_insert`), by table and columns.
        self._insert_plans: dict[tuple[str, tuple[str, ...]], _InsertPlan] = {}

    def save_game(self, record: GameRecord) -> bool:
        """Store a finished game in one transaction: game, seats, bots, turns and record.

        Idempotent: a game whose ``game_id`` is already stored is left as it is and
        ``False`` is returned. A second game for an already played schedule entry raises
        :class:`AlreadyPlayedError` (exactly once: the entry's row is locked for the check,
        ``SELECT ... FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite, and
        ``games.schedule_id`` is unique as the last guard), so of two cluster workers that
        played the same entry (the first one's lease expired) the first to store wins and
        the other gets that error. An ``aborted`` game is stored without its
        ``schedule_id`` (keeping the tournament link), so its entry stays pending for a
        resume. With ``schedule_id`` set and no ``tournament_id``, the game is linked to
        the entry's tournament (and :meth:`load_game` returns it with that id).
        """
        _check_record(record)
        try:
            with self._caching_bots() as bots, \
                    self._write(f"save game {record.game_id!r}") as session:
                if not self._add_games(session, [record], bots)[0]:
                    return False
        except AlreadyPlayedError:
            raise
        except DatabaseError:
            if self._has_game(record.game_id):
                return False  # a concurrent writer stored the same game first
            if record.schedule_id is not None and \
                    record.outcome.termination is not Termination.ABORTED:
                with self._read("read schedule") as session:
                    self._refuse_played(session, record)  # lost the race at the constraint
            raise
        log.info("game %s stored (%d turns)", record.game_id, len(record.turns))
        return True

    def save_games(self, records: Sequence[GameRecord]) -> list[bool]:
        """Store finished games as :meth:`save_game` does, all in one transaction (one
        commit for a batch): per record, ``False`` if its game id was already stored (or
        came earlier in ``records``). Any error stores none of them (then save them one by
        one to find the bad one)."""
        for record in records:
            _check_record(record)
        if not records:
            return []
        with self._caching_bots() as bots, \
                self._write(f"save {len(records)} games") as session:
            stored = self._add_games(session, records, bots)
        log.info("%d games stored in one transaction", stored.count(True))
        return stored

    @contextmanager
    def _caching_bots(self) -> Iterator[dict[tuple[str, str], int]]:
        """A dict for the bot ids a write uses, cached once the write committed (around
        :meth:`_write`); a failed write drops the whole cache, since a cached id that went
        stale would fail every later write."""
        bots: dict[tuple[str, str], int] = {}
        try:
            yield bots
        except BaseException:
            self._bot_cache.clear()
            raise
        self._bot_cache.update(bots)

    def _add_games(self, session: Session, records: Sequence[GameRecord],
                   bot_ids: dict[tuple[str, str], int]) -> list[bool]:
        """Insert ``records`` (checked) with one executemany per table for the whole batch
        (see :meth:`_insert`): no ORM object per row. Schedule entries are checked (and
        locked) one by one as :meth:`save_game` documents. ``bot_ids`` gets the bot ids the
        games use (to be cached once committed)."""
        ids = {record.game_id for record in records}
        seen = set(session.connection().execute(_STORED_IDS, {"ids": list(ids)}).scalars())
        wanted = {(s.bot_name, s.bot_version) for record in records for s in record.seats}
        cache = self._bot_cache  # another thread's failed write may clear it meanwhile
        bot_ids.update((key, bot_id) for key in wanted
                       if (bot_id := cache.get(key)) is not None)
        bot_ids.update(_bot_ids(session, wanted - bot_ids.keys()))
        played: dict[int, str] = {}  # schedule id -> game id, in this batch
        games: list[dict[str, Any]] = []
        seats: list[dict[str, Any]] = []
        kept: list[GameRecord] = []
        full: list[dict[str, Any]] = []
        stored = []
        for record in records:
            if record.game_id in seen:
                stored.append(False)
                continue
            seen.add(record.game_id)
            tournament_id = self._check_schedule(session, record)
            if record.outcome.termination is Termination.ABORTED:
                # An aborted game (server shutdown, Ctrl-C) was not played: it is kept for
                # the record but leaves its schedule entry pending for a resume.
                record = replace(record, schedule_id=None, tournament_id=tournament_id)
            elif record.schedule_id is not None:
                first = played.setdefault(record.schedule_id, record.game_id)
                if first != record.game_id:
                    raise AlreadyPlayedError(
                        f"game {record.game_id} not stored: its schedule entry (id "
                        f"{record.schedule_id}) was already played as game {first}")
            games.append(_game_values(record, tournament_id))
            seats.extend(_seat_values(record, bot_ids))
            kept.append(record)
            full.append({"game_id": record.game_id, "record": to_stored(record)})
            stored.append(True)
        if games:
            self._insert(session, _table(GameRow), games)
            self._insert(session, _table(GameSeatRow), seats)
            _add_turns(session, *kept)
            self._insert(session, _table(GameRecordRow), full)
        return stored

    def _insert(self, session: Session, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Insert ``rows`` (dicts with the same keys) into ``table`` in one executemany.

        SQLite's driver gets plain tuples made by each column's own SQLAlchemy bind
        processor (dates and JSON become exactly the text a Core insert stores) with a
        prepared statement: no statement compilation and per-row parameter handling, which
        cost more than the insert itself for one game. Other databases get a Core insert.
        """
        if not rows:
            return
        connection = session.connection()
        dialect = connection.dialect
        if dialect.name != "sqlite":
            connection.execute(sa.insert(table), rows)
            return
        key = (table.name, tuple(rows[0]))
        plan = self._insert_plans.get(key)
        if plan is None:
            plan = self._insert_plans[key] = _insert_plan(table, key[1], dialect)
        sql, convert = plan
        connection.exec_driver_sql(sql, [
            tuple(row[name] if fix is None else fix(row[name]) for name, fix in convert)
            for row in rows])

    def import_games(self, games: Sequence[PortableGame],
                     tournaments: Sequence[PortableTournament] = ()) -> list[bool]:
        """Store games read from self-contained records, all in one transaction (if any
        fails, none is stored); returns, per game, whether it was stored (``False``: a game
        with that id is already in the database, or earlier in ``games``). The
        ``tournaments`` of an export's tournament lines are stored first, in the same
        transaction, with their whole schedules (:func:`~db.store.tournaments.import_tournament`).

        A game's tournament is created when this database does not have it (with the
        record's spec and creation time), and its schedule entry likewise, matched by
        tournament and index; an entry that exists with other players or seed, or that
        another game already played, is a :class:`TournamentError`.
        """
        stored = []
        with self._write("import games") as session:
            for tournament in tournaments:
                import_tournament(session, tournament.info, tournament.schedule)
            for game in games:
                record = game.record
                _check_record(record)
                if session.get(GameRow, record.game_id) is not None:
                    stored.append(False)
                    continue
                tournament_id = None
                if game.tournament is not None:
                    tournament_id = ensure_tournament(session, game.tournament)
                schedule_id = None
                if game.entry is not None and tournament_id is not None and \
                        record.outcome.termination is not Termination.ABORTED:
                    schedule_id = ensure_entry(session, tournament_id, game.entry,
                                               record.game_id)
                record = replace(record, tournament_id=tournament_id, schedule_id=schedule_id)
                session.add(_game_row(record, tournament_id))
                session.flush()
                _add_seats(session, record)
                _add_turns(session, record)
                session.add(GameRecordRow(game_id=record.game_id,
                                          record=to_stored(record)))
                session.flush()
                stored.append(True)
        log.info("imported %d games (%d already stored)", stored.count(True),
                 stored.count(False))
        return stored

    def _has_game(self, game_id: str) -> bool:
        with self._read("read games") as session:
            return session.get(GameRow, game_id) is not None

    def _check_schedule(self, session: Session, record: GameRecord) -> str | None:
        if record.schedule_id is None:
            return record.tournament_id
        # Lock the entry's row until commit: concurrent storers of the same entry wait
        # here, then see the game the first one stored (PostgreSQL; SQLite writers are
        # serialised by BEGIN IMMEDIATE). Both statements are built once and run on the
        # connection, not through the ORM: this runs for every game a tournament stores.
        connection = session.connection()
        entry = connection.execute(_ENTRY, {"id": record.schedule_id}).first()
        if entry is None:
            raise TournamentError(f"game {record.game_id}: unknown schedule id "
                                  f"{record.schedule_id}")
        if record.tournament_id not in (None, entry.tournament_id):
            raise TournamentError(f"game {record.game_id}: schedule id {record.schedule_id} "
                                  f"belongs to tournament {entry.tournament_id}, not "
                                  f"{record.tournament_id}")
        if record.outcome.termination is not Termination.ABORTED:
            self._refuse_played(session, record)
        tournament_id: str = entry.tournament_id
        return tournament_id

    @staticmethod
    def _refuse_played(session: Session, record: GameRecord) -> None:
        """:class:`AlreadyPlayedError` if the record's schedule entry has a stored game."""
        row = session.connection().execute(_PLAYED, {"id": record.schedule_id}).first()
        if row is not None and row.id != record.game_id:
            raise AlreadyPlayedError(
                f"game {record.game_id} not stored: schedule entry {row.game_index} of "
                f"tournament {row.tournament_id} was already played as game {row.id}")

    def load_game(self, game_id: str) -> GameRecord:
        """The full record of a stored game; :class:`GameNotFoundError` if there is none.
        Games stored by older yards are read from their own form (:mod:`db.legacy`)."""
        with self._read(f"load game {game_id!r}") as session:
            row = session.execute(_LOAD.where(GameRow.id == game_id)).first()
            if row is None:
                raise GameNotFoundError(f"no game {game_id!r} in database {self.url}")
            data = row.record
            if is_old(data) and has_turns(data):
                return record_from_old(data)
            turns = [_turn(t) for t in session.scalars(sa.select(TurnRow).where(
                TurnRow.game_id == game_id).order_by(TurnRow.turn_index))]
        if is_old(data):
            return record_from_old(data, turns)
        return from_stored(data, turns, ruleset=row.ruleset, moves=row.moves,
                           tournament_id=row.tournament_id, schedule_id=row.schedule_id)

    def list_games(self, ruleset: str | None = None, tournament_id: str | None = None,
                   limit: int | None = None, *, player: str | None = None,
                   termination: Termination | None = None) -> list[GameSummary]:
        """Stored games, newest first, optionally filtered and limited: ``player`` played
        a side (Mister X, the detectives' team name, or one of the seats), the game ended
        with ``termination``."""
        query = _filtered(sa.select(GameRow), ruleset, tournament_id)
        if player is not None:
            seat = sa.select(GameSeatRow.game_id).join(BotRow).where(
                GameSeatRow.game_id == GameRow.id, BotRow.name == player)
            query = query.where(sa.or_(GameRow.mrx_player == player,
                                       GameRow.detective_player == player, seat.exists()))
        if termination is not None:
            query = query.where(GameRow.termination == termination.value)
        query = query.options(selectinload(GameRow.seats)).order_by(
            GameRow.started_at.desc(), GameRow.id)
        if limit is not None:
            query = query.limit(limit)
        with self._read("list games") as session:
            return [_summary(row) for row in session.scalars(query)]

    def results(self, ruleset: str | None = None,
                tournament_id: str | None = None) -> list[ResultRow]:
        """Per-game results for ratings, oldest first, with each game's schedule pair."""
        query = _filtered(sa.select(GameRow, ScheduledGameRow), ruleset, tournament_id)
        query = query.outerjoin(ScheduledGameRow, GameRow.schedule_id == ScheduledGameRow.id)
        query = query.order_by(GameRow.finished_at, GameRow.id)
        with self._read("read results") as session:
            return [_result(row, entry) for row, entry in session.execute(query).all()]

    def compute(self, tournament_id: str | None = None,
                ruleset: str | None = None) -> list[ComputeRow]:
        """Per bot process (name, instance): the moves it chose itself (not the server's
        random moves on timeout), their server-measured time and the effort reported with
        them; sorted by bot name, then instance."""
        seat = GameSeatRow
        query = _filtered(sa.select(
            BotRow.name, seat.instance, sa.func.count(), sa.func.sum(TurnRow.time_used),
            sa.func.sum(TurnRow.playouts), sa.func.count(TurnRow.playouts),
            sa.func.sum(TurnRow.nodes), sa.func.count(TurnRow.nodes),
            sa.func.sum(TurnRow.depth), sa.func.count(TurnRow.depth),
        ).select_from(TurnRow).join(GameRow, GameRow.id == TurnRow.game_id).join(
            seat, (seat.game_id == TurnRow.game_id) & (seat.seat == TurnRow.seat)).join(
            BotRow, BotRow.id == seat.bot_id), ruleset, tournament_id)
        query = query.where(TurnRow.move.is_not(None), sa.or_(
            TurnRow.fault.is_(None), TurnRow.fault != "random_move_on_timeout"))
        query = query.group_by(BotRow.name, seat.instance)
        with self._read("read compute") as session:
            rows = [ComputeRow(name, instance, int(moves), float(time_s or 0.0),
                               int(playouts or 0), int(n_playouts), int(nodes or 0),
                               int(n_nodes), int(depth or 0), int(n_depth))
                    for name, instance, moves, time_s, playouts, n_playouts, nodes, n_nodes,
                    depth, n_depth in session.execute(query)]
        return sorted(rows, key=lambda r: (r.bot, r.instance or ""))


def _check_record(record: GameRecord) -> None:
    seats = [s.seat for s in record.seats]
    if 0 not in seats or len(set(seats)) != len(seats) or len(seats) < 2:
        raise DatabaseError(f"game {record.game_id}: seats {sorted(seats)} must hold Mister X "
                            "(0) and at least one detective, each once")
    if not record.game_id or len(record.game_id) > 64:
        raise DatabaseError(f"game id {record.game_id!r} must be 1..64 characters")


def _table(model: type[Any]) -> sa.Table:
    """A model's Core table (inserting into it skips the ORM's per-row work)."""
    table: sa.Table = model.__table__
    return table


_STORED_IDS = sa.select(GameRow.id).where(GameRow.id.in_(sa.bindparam("ids", expanding=True)))
"""Which of the game ids ``ids`` are stored (one statement object: built and keyed once)."""

_ENTRY = (sa.select(ScheduledGameRow.tournament_id)
          .where(ScheduledGameRow.id == sa.bindparam("id")).with_for_update())
"""A schedule entry's tournament, its row locked until commit (``FOR UPDATE``; SQLite
writers hold the database from ``BEGIN IMMEDIATE`` instead)."""

_PLAYED = (sa.select(GameRow.id, ScheduledGameRow.game_index, ScheduledGameRow.tournament_id)
           .join(ScheduledGameRow, GameRow.schedule_id == ScheduledGameRow.id)
           .where(GameRow.schedule_id == sa.bindparam("id")))
"""The game stored for a schedule entry, if any, with the entry's index and tournament."""


_InsertPlan = tuple[str, tuple[tuple[str, Any], ...]]
"""An INSERT with ``?`` parameters, and per column its name and bind processor (or
``None``: the value goes to the driver as it is)."""


def _insert_plan(table: sa.Table, columns: tuple[str, ...], dialect: Any) -> _InsertPlan:
    """The SQLite INSERT of ``columns`` into ``table``, with the columns' bind processors
    (what SQLAlchemy applies to each value before the driver gets it)."""
    unknown = [name for name in columns if name not in table.c]
    if unknown:
        raise ValueError(f"table {table.name} has no column {unknown[0]!r}")
    convert = tuple((name, table.c[name].type.dialect_impl(dialect).bind_processor(dialect))
                    for name in columns)
    quote = dialect.identifier_preparer.quote
    sql = (f"INSERT INTO {quote(table.name)} ({', '.join(quote(n) for n in columns)}) "
           f"VALUES ({', '.join('?' for _ in columns)})")
    return sql, convert


def _game_values(record: GameRecord, tournament_id: str | None) -> dict[str, Any]:
    seed = record.seed if record.seed is not None and -_BIGINT <= record.seed < _BIGINT \
        else None  # the exact seed always stays in the JSON record
    return {
        "id": record.game_id, "ruleset": record.ruleset, "seed": seed,
        "start_position": record.start_position,
        "winner": record.outcome.winner.value if record.outcome.winner else None,
        "termination": record.outcome.termination.value, "fault_seat": record.outcome.seat,
        "moves": record.moves, "started_at": utc(record.started_at),
        "finished_at": utc(record.finished_at), "mrx_player": record.mrx_player,
        "detective_player": record.detective_player, "tournament_id": tournament_id,
        "schedule_id": record.schedule_id}


def _game_row(record: GameRecord, tournament_id: str | None) -> GameRow:
    return GameRow(**_game_values(record, tournament_id))


def _bot_ids(session: Session, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Bot ids by (name, version), creating the missing bots."""
    if not wanted:
        return {}
    query = sa.select(BotRow.name, BotRow.version, BotRow.id).where(
        BotRow.name.in_({name for name, _ in wanted}))
    known = {(name, version): bot_id for name, version, bot_id in session.execute(query)
             if (name, version) in wanted}
    for name, version in wanted - set(known):
        known[name, version] = _new_bot_id(session, name, version)
    return known


def _seat_values(record: GameRecord,
                 bot_ids: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    return [{"game_id": record.game_id, "seat": s.seat,
             "bot_id": bot_ids[s.bot_name, s.bot_version], "instance": s.instance}
            for s in record.seats]


def _add_seats(session: Session, record: GameRecord) -> None:
    bot_ids = _bot_ids(session, {(s.bot_name, s.bot_version) for s in record.seats})
    if record.seats:
        session.execute(sa.insert(_table(GameSeatRow)), _seat_values(record, bot_ids))


def _new_bot_id(session: Session, name: str, version: str) -> int:
    """Create a bot row unless a concurrent writer just did (insert-if-absent, select)."""
    dialect = session.get_bind().dialect.name
    if dialect in ("sqlite", "postgresql"):
        # The engine loaded its dialect's module already; importing both at the top would
        # load PostgreSQL's (with every driver's dialect) into each SQLite process.
        insert: Any = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert
        session.execute(insert(BotRow).values(name=name, version=version)
                        .on_conflict_do_nothing())
    query = sa.select(BotRow.id).where(BotRow.name == name, BotRow.version == version)
    bot_id = session.scalar(query)
    if bot_id is None:
        row = BotRow(name=name, version=version)
        session.add(row)
        session.flush()
        bot_id = row.id
    return bot_id


_LOAD = sa.select(GameRecordRow.record, GameRow.ruleset, GameRow.moves, GameRow.tournament_id,
                  GameRow.schedule_id).join(GameRow, GameRow.id == GameRecordRow.game_id)
"""A game's stored record with the columns that its record leaves to the ``games`` row."""

_TURN_COLUMNS = ("game_id", "turn_index", "seat", "move", "time_used", "fault", "detail",
                 *EFFORT_KEYS)
_turn_values = attrgetter("index", "seat", "move", "time_used", "fault", "detail", *EFFORT_KEYS)
"""A :class:`TurnRecord`'s values in the order of :data:`_TURN_COLUMNS` (after the game id)."""
_SQLITE_TURN_INSERT = (f"INSERT INTO {TurnRow.__tablename__} ({', '.join(_TURN_COLUMNS)}) "
                       f"VALUES ({', '.join('?' for _ in _TURN_COLUMNS)})")
"""SQLite's driver gets the turns as plain tuples: they need no conversion (integers, a
float, text or NULL), and SQLAlchemy's per-row parameter handling cost more than the
insert itself (about 80 turns per game, one per move)."""


def _add_turns(session: Session, *records: GameRecord) -> None:
    """Insert the turns of ``records`` with one executemany (no ORM object per turn)."""
    if session.get_bind().dialect.name == "sqlite":
        values = [(record.game_id, *_turn_values(t)) for record in records
                  for t in record.turns]
        if values:
            session.connection().exec_driver_sql(_SQLITE_TURN_INSERT, values)
        return
    rows = [dict(zip(_TURN_COLUMNS, (record.game_id, *_turn_values(t)), strict=True))
            for record in records for t in record.turns]
    if rows:
        session.execute(sa.insert(_table(TurnRow)), rows)


def _turn(row: TurnRow) -> TurnRecord:
    return TurnRecord(row.turn_index, row.seat, row.move, row.time_used, row.fault,
                      row.detail, **{key: getattr(row, key) for key in EFFORT_KEYS})


def _filtered(query: Any, ruleset: str | None, tournament_id: str | None) -> Any:
    if ruleset is not None:
        query = query.where(GameRow.ruleset == ruleset)
    if tournament_id is not None:
        query = query.where(GameRow.tournament_id == tournament_id)
    return query


def _summary(row: GameRow) -> GameSummary:
    players = {seat_name(s.seat): s.bot.name for s in row.seats}
    return GameSummary(row.id, row.ruleset, row.mrx_player, row.detective_player, players,
                       _winner(row.winner), Termination(row.termination), row.moves,
                       aware(row.started_at), aware(row.finished_at), row.tournament_id)


def _result(row: GameRow, entry: ScheduledGameRow | None) -> ResultRow:
    if entry is None:
        return ResultRow(row.id, row.ruleset, row.mrx_player, row.detective_player,
                         _winner(row.winner), Termination(row.termination), row.moves,
                         row.tournament_id, None, None)
    return ResultRow(row.id, row.ruleset, entry.mrx_player, entry.detective_player,
                     _winner(row.winner), Termination(row.termination), row.moves,
                     entry.tournament_id, entry.id, f"{entry.tournament_id}/{entry.pair_key}")


def _winner(value: str | None) -> Winner | None:
    return Winner(value) if value else None

