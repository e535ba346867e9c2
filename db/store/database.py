"""The :class:`Database`: every part of the store over one engine."""

from __future__ import annotations

import sqlalchemy as sa

from db.engine import (
    check_exists,
    create_engine,
    is_read_only,
    memory_copy,
    parse_url,
    safe_url,
)
from db.errors import DatabaseError
from db.migrations import migrate
from db.store.accounts import Accounts
from db.store.base import opt_str
from db.store.games import Games
from db.store.leases import Leases
from db.store.pools import Pools
from db.store.schedule import Schedule
from db.store.tournaments import Tournaments, forfeit_record
from game import Outcome
from records import GameRecord, ScheduledGame


class Database(Games, Tournaments, Schedule, Leases, Accounts, Pools):
    """A yard database. Create with :meth:`connect`; close with :meth:`close`."""

    @classmethod
    def connect(cls, url: str, *, create: bool = True) -> Database:
        """Open (creating or migrating the schema) the database at SQLAlchemy ``url``.

        With ``create=False`` a SQLite file that does not exist yet is an error instead of
        being created (for read-only commands such as ``yard games``). A SQLite file with an
        older schema that cannot be written here is read from a migrated in-memory copy
        (:func:`db.engine.memory_copy`) that refuses writes, as the file would.
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
            try:
                migrate(db._writer)
            except sa.exc.OperationalError as exc:
                if not is_read_only(exc):
                    raise
                copy = memory_copy(engine)  # an older schema in a file we cannot write
                db = cls(copy, shown)
                migrate(db._writer)
                with copy.connect() as conn:  # what a command writes would be lost: refuse
                    conn.exec_driver_sql("PRAGMA query_only = ON")
        return db

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def __enter__(self) -> Database:
        """The database itself; closed on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the database."""
        self.close()

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
                                rules=rules or opt_str(info.spec.get("rules")),
                                detectives=info.spec.get("detectives"), game_id=game_id)
        self.save_game(record)
        return record

