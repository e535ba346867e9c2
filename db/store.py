"""The storage API: finished games, tournaments and their schedules, over SQLAlchemy 2.

Everything is synchronous (the server calls it through ``asyncio.to_thread``); one engine
per :class:`Database`, one short session per call. Any SQLAlchemy URL works; SQLite is the
default and needs no set-up. The schema is created or migrated on connect
(:mod:`db.migrations`).

>>> db = Database.connect("sqlite://")          # in-memory
>>> tid = db.create_tournament({"rules": "grid5", "bots": ["random", "rush"]})
>>> [e.index for e in db.schedule(tid, [ScheduledGame(0, 0, "random", "rush", 1)])]
[0]
>>> len(db.pending(tid))
1
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, selectinload

from db.codec import record_from_dict, record_to_dict
from db.engine import check_exists, create_engine, parse_url, safe_url
from db.errors import AlreadyPlayedError, DatabaseError, GameNotFoundError, TournamentError
from db.migrations import migrate
from db.models import (
    BotRow,
    GameRecordRow,
    GameRow,
    GameSeatRow,
    ScheduledGameRow,
    TournamentRow,
    TurnRow,
)
from db.portable import PortableGame
from db.records import (
    ComputeRow,
    GameRecord,
    GameSummary,
    ResultRow,
    ScheduledGame,
    SeatRecord,
    TournamentInfo,
    TurnRecord,
)
from game import Outcome, Termination, Winner, new_game, seat_name, to_text

log = logging.getLogger(__name__)


class PlannedGame(Protocol):
    """What :meth:`Database.schedule` reads from each entry (a :class:`ScheduledGame` or
    the tournament scheduler's own entries); ``pair_key`` is read too when present."""

    @property
    def index(self) -> int: ...

    @property
    def pair_index(self) -> int: ...

    @property
    def mrx(self) -> str: ...

    @property
    def detectives(self) -> str: ...

    @property
    def seed(self) -> int | None: ...

_BIGINT = 2**63


#: The lease owner of an entry whose game was aborted in the current cluster run.
ABORTED_LEASE = "aborted"


class Database:
    """A yard database. Create with :meth:`connect`; close with :meth:`close`."""

    def __init__(self, engine: Engine, url_text: str) -> None:
        self._engine = engine
        self._writer = engine.execution_options(yard_write=True)
        self.url = url_text
        #: Bot ids by (name, version) that committed games use (bot rows are never
        #: changed or deleted); cleared when a write fails.
        self._bot_cache: dict[tuple[str, str], int] = {}
        #: Plain-tuple inserts for SQLite (see :meth:`_insert`), by table and columns.
        self._insert_plans: dict[tuple[str, tuple[str, ...]], _InsertPlan] = {}

    @classmethod
    def connect(cls, url: str, *, create: bool = True) -> Database:
        """Open (creating or migrating the schema) the database at SQLAlchemy ``url``.

        With ``create=False`` a SQLite file that does not exist yet is an error instead of
        being created (for read-only commands such as ``yard games``).
        """
        parsed = parse_url(url)
        shown = safe_url(parsed)
        if not create:
            check_exists(parsed)
        try:
            engine = create_engine(parsed)
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
            raise DatabaseError(f"cannot open database {shown}: {exc}") from None
        db = cls(engine, shown)
        with db._errors("open"):
            migrate(db._writer)
        return db

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except sa.exc.SQLAlchemyError as exc:
            reason = getattr(exc, "orig", None) or exc
            raise DatabaseError(f"database {self.url}: cannot {action}: "
                                f"{str(reason).splitlines()[0]}") from None

    @contextmanager
    def _write(self, action: str) -> Iterator[Session]:
        with self._errors(action), Session(self._writer) as session, session.begin():
            yield session

    @contextmanager
    def _read(self, action: str) -> Iterator[Session]:
        with self._errors(action), Session(self._engine) as session, session.begin():
            yield session

    # ------------------------------------------------------------------ games

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
            linked = replace(record, tournament_id=tournament_id)
            full.append({"game_id": record.game_id, "record": record_to_dict(linked)})
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

    def import_games(self, games: Sequence[PortableGame]) -> list[bool]:
        """Store games read from self-contained records, all in one transaction (if any
        fails, none is stored); returns, per game, whether it was stored (``False``: a game
        with that id is already in the database, or earlier in ``games``).

        A game's tournament is created when this database does not have it (with the
        record's spec and creation time), and its schedule entry likewise, matched by
        tournament and index; an entry that exists with other players or seed, or that
        another game already played, is a :class:`TournamentError`.
        """
        stored = []
        with self._write("import games") as session:
            for game in games:
                record = game.record
                _check_record(record)
                if session.get(GameRow, record.game_id) is not None:
                    stored.append(False)
                    continue
                tournament_id = None
                if game.tournament is not None:
                    tournament_id = _ensure_tournament(session, game.tournament)
                schedule_id = None
                if game.entry is not None and tournament_id is not None and \
                        record.outcome.termination is not Termination.ABORTED:
                    schedule_id = _ensure_entry(session, tournament_id, game.entry,
                                                record.game_id)
                record = replace(record, tournament_id=tournament_id, schedule_id=schedule_id)
                session.add(_game_row(record, tournament_id))
                session.flush()
                _add_seats(session, record)
                _add_turns(session, record)
                session.add(GameRecordRow(game_id=record.game_id,
                                          record=record_to_dict(record)))
                session.flush()
                stored.append(True)
        log.info("imported %d games (%d already stored)", stored.count(True),
                 stored.count(False))
        return stored

    def schedule_entry(self, schedule_id: int) -> ScheduledGame | None:
        """The schedule entry with this id, or ``None``."""
        with self._read("read schedule") as session:
            row = session.get(ScheduledGameRow, schedule_id)
            return None if row is None else _entry(row)

    def _has_game(self, game_id: str) -> bool:
        with self._read("read games") as session:
            return session.get(GameRow, game_id) is not None

    @staticmethod
    def _check_schedule(session: Session, record: GameRecord) -> str | None:
        if record.schedule_id is None:
            return record.tournament_id
        # Lock the entry's row until commit: concurrent storers of the same entry wait
        # here, then see the game the first one stored (PostgreSQL; SQLite writers are
        # serialised by BEGIN IMMEDIATE).
        entry = session.scalars(
            sa.select(ScheduledGameRow).where(ScheduledGameRow.id == record.schedule_id)
            .with_for_update()).first()
        if entry is None:
            raise TournamentError(f"game {record.game_id}: unknown schedule id "
                                  f"{record.schedule_id}")
        if record.tournament_id not in (None, entry.tournament_id):
            raise TournamentError(f"game {record.game_id}: schedule id {record.schedule_id} "
                                  f"belongs to tournament {entry.tournament_id}, not "
                                  f"{record.tournament_id}")
        if record.outcome.termination is not Termination.ABORTED:
            Database._refuse_played(session, record)
        return entry.tournament_id

    @staticmethod
    def _refuse_played(session: Session, record: GameRecord) -> None:
        """:class:`AlreadyPlayedError` if the record's schedule entry has a stored game."""
        row = session.execute(
            sa.select(GameRow.id, ScheduledGameRow.game_index, ScheduledGameRow.tournament_id)
            .join(ScheduledGameRow, GameRow.schedule_id == ScheduledGameRow.id)
            .where(GameRow.schedule_id == record.schedule_id)).first()
        if row is not None and row.id != record.game_id:
            raise AlreadyPlayedError(
                f"game {record.game_id} not stored: schedule entry {row.game_index} of "
                f"tournament {row.tournament_id} was already played as game {row.id}")

    def load_game(self, game_id: str) -> GameRecord:
        """The full record of a stored game; :class:`GameNotFoundError` if there is none."""
        with self._read(f"load game {game_id!r}") as session:
            row = session.get(GameRecordRow, game_id)
            if row is None:
                raise GameNotFoundError(f"no game {game_id!r} in database {self.url}")
            data = row.record
            if isinstance(data, dict) and "turns" not in data:  # format 2: from the table
                rows = session.scalars(sa.select(TurnRow).where(
                    TurnRow.game_id == game_id).order_by(TurnRow.turn_index))
                return record_from_dict(data, [_turn(t) for t in rows])
            return record_from_dict(data)

    def list_games(self, ruleset: str | None = None, tournament_id: str | None = None,
                   limit: int | None = None) -> list[GameSummary]:
        """Stored games, newest first, optionally filtered and limited."""
        query = _filtered(sa.select(GameRow), ruleset, tournament_id)
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

    # ------------------------------------------------------------ tournaments

    def create_tournament(self, spec: dict[str, Any], tournament_id: str | None = None) -> str:
        """Store a new tournament with its ``spec`` (JSON-ready: rules, bots, format,
        pairs, seed, move time, self-play...); returns its id."""
        try:
            spec = json.loads(json.dumps(spec))
        except (TypeError, ValueError) as exc:
            raise TournamentError(f"tournament spec is not JSON-ready: {exc}") from None
        tid = tournament_id or uuid.uuid4().hex[:12]
        row = TournamentRow(id=tid, created_at=datetime.now(UTC), spec=spec,
                            rules=_opt_str(spec.get("rules")),
                            format=_opt_str(spec.get("format")))
        with self._write("create tournament") as session:
            if session.get(TournamentRow, tid) is not None:
                raise TournamentError(f"tournament {tid!r} already exists")
            session.add(row)
        return tid

    def get_tournament(self, tournament_id: str) -> TournamentInfo:
        """A stored tournament with its progress; :class:`TournamentError` if unknown."""
        with self._read("read tournament") as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            return self._info(session, row)

    def list_tournaments(self) -> list[TournamentInfo]:
        """All tournaments, newest first."""
        query = sa.select(TournamentRow).order_by(TournamentRow.created_at.desc())
        with self._read("list tournaments") as session:
            return [self._info(session, row) for row in session.scalars(query)]

    @staticmethod
    def _info(session: Session, row: TournamentRow) -> TournamentInfo:
        total = session.scalar(sa.select(sa.func.count()).select_from(ScheduledGameRow)
                               .where(ScheduledGameRow.tournament_id == row.id)) or 0
        played = session.scalar(sa.select(sa.func.count()).select_from(GameRow)
                                .join(ScheduledGameRow, GameRow.schedule_id == ScheduledGameRow.id)
                                .where(ScheduledGameRow.tournament_id == row.id)) or 0
        return TournamentInfo(row.id, dict(row.spec), _aware(row.created_at), total, played,
                              dict(row.state or {}))

    def update_tournament_state(self, tournament_id: str, **values: Any) -> dict[str, Any]:
        """Merge ``values`` (JSON-ready) into a tournament's runner state; returns the new
        state. :class:`TournamentError` if the tournament is unknown."""
        try:
            values = json.loads(json.dumps(values, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise TournamentError(f"tournament state is not JSON-ready: {exc}") from None
        with self._write("update tournament state") as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            row.state = {**(row.state or {}), **values}
            return dict(row.state)

    def schedule(self, tournament_id: str, games: Sequence[PlannedGame]) -> list[ScheduledGame]:
        """Store a tournament's whole schedule at once (before its first game); returns the
        entries with their ``schedule_id``. A tournament is scheduled only once."""
        _check_entries(games)
        with self._write("store schedule") as session:
            if session.get(TournamentRow, tournament_id) is None:
                raise TournamentError(f"no tournament {tournament_id!r}")
            if session.scalar(sa.select(ScheduledGameRow.id).where(
                    ScheduledGameRow.tournament_id == tournament_id).limit(1)) is not None:
                raise TournamentError(f"tournament {tournament_id} already has a schedule")
            rows = [_schedule_row(tournament_id, g) for g in games]
            session.add_all(rows)
            session.flush()
            return [_entry(row) for row in rows]

    def scheduled(self, tournament_id: str) -> list[ScheduledGame]:
        """Every schedule entry of a tournament, by index."""
        return self._entries(tournament_id, pending_only=False)

    def pending(self, tournament_id: str) -> list[ScheduledGame]:
        """Schedule entries without a stored game, by index: what a resume still plays."""
        return self._entries(tournament_id, pending_only=True)

    def _entries(self, tournament_id: str, pending_only: bool) -> list[ScheduledGame]:
        query = sa.select(ScheduledGameRow).where(
            ScheduledGameRow.tournament_id == tournament_id).order_by(ScheduledGameRow.game_index)
        if pending_only:
            played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
            query = query.where(~played.exists())
        with self._read("read schedule") as session:
            if session.get(TournamentRow, tournament_id) is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            return [_entry(row) for row in session.scalars(query)]

    # ------------------------------------------------------------------ leases

    def claim(self, tournament_id: str, owner: str, lease_s: float) -> ScheduledGame | None:
        """Claim the first pending entry nobody holds (or whose lease expired) for
        ``owner`` until ``lease_s`` seconds from now; ``None`` when there is none.

        PostgreSQL locks the row (``SELECT ... FOR UPDATE SKIP LOCKED``), so concurrent
        claimers on any machine get different entries; SQLite serialises writers with
        ``BEGIN IMMEDIATE`` (one machine only). Lease times are UTC from the claimer's
        clock: cluster nodes need synchronised clocks (NTP) to within the lease.
        """
        now = datetime.now(UTC)
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        query = (sa.select(ScheduledGameRow)
                 .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                        sa.or_(ScheduledGameRow.lease_owner.is_(None),
                               ScheduledGameRow.lease_expires < now))
                 .order_by(ScheduledGameRow.game_index).limit(1)
                 .with_for_update(skip_locked=True, of=ScheduledGameRow))
        with self._write("claim a game") as session:
            row = session.scalars(query).first()
            if row is None:
                return None
            row.lease_owner = owner
            row.lease_expires = now + timedelta(seconds=lease_s)
            return _entry(row)

    def renew(self, schedule_id: int, owner: str, lease_s: float) -> bool:
        """Extend ``owner``'s lease on an entry; ``False`` if it no longer holds it."""
        until = datetime.now(UTC) + timedelta(seconds=lease_s)
        with self._write("renew a lease") as session:
            done = session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.id == schedule_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_expires=until))
            return bool(getattr(done, "rowcount", 0))

    def release(self, schedule_id: int, owner: str, *, aborted: bool = False) -> None:
        """Give up ``owner``'s lease on an entry. ``aborted``: its game was aborted, so
        the entry is parked (no worker of this run claims it again) until
        :meth:`unpark` (the next run or resume)."""
        with self._write("release a lease") as session:
            session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.id == schedule_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_owner=ABORTED_LEASE if aborted else None, lease_expires=None))

    def release_owner(self, tournament_id: str, owner: str) -> int:
        """Give up every lease ``owner`` holds in a tournament (a worker known to be dead
        or stopped: its games are claimable again at once); how many it held."""
        with self._write("release leases") as session:
            done = session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.tournament_id == tournament_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_owner=None, lease_expires=None))
            return int(getattr(done, "rowcount", 0))

    def unpark(self, tournament_id: str) -> None:
        """Make the entries parked by :meth:`release` (aborted games) claimable again."""
        with self._write("reset leases") as session:
            session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.tournament_id == tournament_id,
                       ScheduledGameRow.lease_owner == ABORTED_LEASE)
                .values(lease_owner=None, lease_expires=None))

    def held(self, tournament_id: str) -> int:
        """Pending entries that a worker holds a live lease on (being played now)."""
        now = datetime.now(UTC)
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        with self._read("read leases") as session:
            return int(session.scalar(
                sa.select(sa.func.count(ScheduledGameRow.id))
                .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                       ScheduledGameRow.lease_owner.is_not(None),
                       ScheduledGameRow.lease_owner != ABORTED_LEASE,
                       ScheduledGameRow.lease_expires >= now)) or 0)

    def claimable(self, tournament_id: str) -> int:
        """Pending entries that are not parked (claimable now or after a lease)."""
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        with self._read("read leases") as session:
            return int(session.scalar(
                sa.select(sa.func.count(ScheduledGameRow.id))
                .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                       sa.or_(ScheduledGameRow.lease_owner.is_(None),
                              ScheduledGameRow.lease_owner != ABORTED_LEASE))) or 0)

    def record_forfeit(self, tournament_id: str, entry: ScheduledGame, outcome: Outcome,
                       detail: str = "", *, rules: str | None = None,
                       game_id: str | None = None) -> GameRecord:
        """Store a scheduled game that could not be played (a bot never connected, crashed
        before the start...) as a game without moves, so the entry counts as done.

        The start position comes from the tournament's ``spec["rules"]`` (or ``rules``),
        ``spec.get("detectives")`` and the entry's seed. Idempotent for the default id.
        """
        info = self.get_tournament(tournament_id)
        record = forfeit_record(tournament_id, entry, outcome, detail,
                                rules=rules or _opt_str(info.spec.get("rules")),
                                detectives=info.spec.get("detectives"), game_id=game_id)
        self.save_game(record)
        return record


# ---------------------------------------------------------------- row conversion


def forfeit_record(tournament_id: str, entry: ScheduledGame, outcome: Outcome, detail: str,
                   rules: str | None, detectives: int | None = None,
                   game_id: str | None = None) -> GameRecord:
    """A zero-move :class:`GameRecord` for a schedule entry that was never played."""
    if rules is None:
        raise TournamentError(f"tournament {tournament_id}: spec has no 'rules'; pass rules=")
    start = new_game(rules, entry.seed, detectives)
    names = entry.detectives.split("+")
    seats = [SeatRecord(0, entry.mrx)] + [SeatRecord(i, names[(i - 1) % len(names)])
                                          for i in range(1, start.n_detectives + 1)]
    now = datetime.now(UTC)
    return GameRecord(
        game_id=game_id or f"{tournament_id}-{entry.index}-forfeit", ruleset=start.rules.name,
        ruleset_definition=start.rules.definition(), seed=entry.seed,
        start_position=to_text(start), seats=seats, outcome=outcome, turns=[],
        mrx_path=[start.mrx_station], started_at=now, finished_at=now, moves=0,
        tournament_id=tournament_id, schedule_id=entry.schedule_id,
        transcripts={"detail": [{"forfeit": detail}]} if detail else {})


def _ensure_tournament(session: Session, info: TournamentInfo) -> str:
    if session.get(TournamentRow, info.tournament_id) is None:
        spec = info.spec
        session.add(TournamentRow(id=info.tournament_id, created_at=_utc(info.created_at),
                                  spec=spec, rules=_opt_str(spec.get("rules")),
                                  format=_opt_str(spec.get("format"))))
        session.flush()
    return info.tournament_id


def _ensure_entry(session: Session, tournament_id: str, entry: ScheduledGame,
                  game_id: str) -> int:
    row = session.scalar(sa.select(ScheduledGameRow).where(
        ScheduledGameRow.tournament_id == tournament_id,
        ScheduledGameRow.game_index == entry.index))
    if row is None:
        row = _schedule_row(tournament_id, entry)
        session.add(row)
        session.flush()
        return row.id
    if (row.pair_index, row.pair_key, row.mrx_player, row.detective_player, row.seed) != \
            (entry.pair_index, entry.pair_key, entry.mrx, entry.detectives, entry.seed):
        raise TournamentError(f"game {game_id}: schedule entry {entry.index} of tournament "
                              f"{tournament_id} differs in this database "
                              f"({row.mrx_player} vs {row.detective_player}, seed {row.seed})")
    played = session.scalar(sa.select(GameRow.id).where(GameRow.schedule_id == row.id))
    if played is not None:
        raise TournamentError(f"game {game_id}: schedule entry {entry.index} of tournament "
                              f"{tournament_id} was already played as game {played}")
    return row.id


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
        "moves": record.moves, "started_at": _utc(record.started_at),
        "finished_at": _utc(record.finished_at), "mrx_player": record.mrx_player,
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
        insert: Any = sqlite.insert if dialect == "sqlite" else postgresql.insert
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


_TURN_COLUMNS = ("game_id", "turn_index", "seat", "move", "time_used", "fault", "detail",
                 "playouts", "nodes", "depth")
_SQLITE_TURN_INSERT = (f"INSERT INTO {TurnRow.__tablename__} ({', '.join(_TURN_COLUMNS)}) "
                       f"VALUES ({', '.join('?' for _ in _TURN_COLUMNS)})")
"""SQLite's driver gets the turns as plain tuples: they need no conversion (integers, a
float, text or NULL), and SQLAlchemy's per-row parameter handling cost more than the
insert itself (about 80 turns per game, one per move)."""


def _add_turns(session: Session, *records: GameRecord) -> None:
    """Insert the turns of ``records`` with one executemany (no ORM object per turn)."""
    if session.get_bind().dialect.name == "sqlite":
        values = [(record.game_id, t.index, t.seat, t.move, t.time_used, t.fault, t.detail,
                   t.playouts, t.nodes, t.depth) for record in records for t in record.turns]
        if values:
            session.connection().exec_driver_sql(_SQLITE_TURN_INSERT, values)
        return
    rows = [{"game_id": record.game_id, "turn_index": t.index, "seat": t.seat,
             "move": t.move, "time_used": t.time_used, "fault": t.fault, "detail": t.detail,
             "playouts": t.playouts, "nodes": t.nodes, "depth": t.depth}
            for record in records for t in record.turns]
    if rows:
        session.execute(sa.insert(_table(TurnRow)), rows)


def _turn(row: TurnRow) -> TurnRecord:
    return TurnRecord(row.turn_index, row.seat, row.move, row.time_used, row.fault,
                      row.detail, row.playouts, row.nodes, row.depth)


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
                       _aware(row.started_at), _aware(row.finished_at), row.tournament_id)


def _result(row: GameRow, entry: ScheduledGameRow | None) -> ResultRow:
    if entry is None:
        return ResultRow(row.id, row.ruleset, row.mrx_player, row.detective_player,
                         _winner(row.winner), Termination(row.termination), row.moves,
                         row.tournament_id, None, None)
    return ResultRow(row.id, row.ruleset, entry.mrx_player, entry.detective_player,
                     _winner(row.winner), Termination(row.termination), row.moves,
                     entry.tournament_id, entry.id, f"{entry.tournament_id}/{entry.pair_key}")


def _check_entries(games: Sequence[PlannedGame]) -> None:
    seen: set[int] = set()
    for game in games:
        if game.index in seen:
            raise TournamentError(f"schedule has index {game.index} twice")
        seen.add(game.index)
        if not game.mrx or not game.detectives:
            raise TournamentError(f"schedule entry {game.index} needs mrx and detectives")


def _schedule_row(tournament_id: str, game: PlannedGame) -> ScheduledGameRow:
    return ScheduledGameRow(tournament_id=tournament_id, game_index=game.index,
                            pair_index=game.pair_index, pair_key=_pair_key(game),
                            mrx_player=game.mrx,
                            detective_player=game.detectives, seed=game.seed)


def _entry(row: ScheduledGameRow) -> ScheduledGame:
    return ScheduledGame(row.game_index, row.pair_index, row.mrx_player, row.detective_player,
                         row.seed, row.id, row.pair_key)


def _pair_key(game: PlannedGame) -> str:
    key = getattr(game, "pair_key", None)
    if key:
        return str(key)
    low, high = sorted((game.mrx, game.detectives))
    return f"{low}|{high}|{game.pair_index}"


def _winner(value: str | None) -> Winner | None:
    return Winner(value) if value else None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _utc(moment: datetime) -> datetime:
    """Aware UTC; naive datetimes are taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _aware(moment: datetime) -> datetime:
    """Datetimes read back (SQLite drops the zone; they were stored as UTC)."""
    return _utc(moment)


__all__ = ["ComputeRow", "Database", "GameSummary", "ResultRow", "ScheduledGame", "TournamentInfo",
           "forfeit_record"]
