"""Schema creation and migration: a small, documented equivalent of Alembic.

How it works
------------
* The table ``schema_version`` holds one row per applied migration (``version``,
  ``description``, ``applied_at``); the schema's version is the highest ``version``.
* :data:`MIGRATIONS` is an ordered tuple of ``(version, description, function)``. Each
  function receives a SQLAlchemy :class:`~sqlalchemy.engine.Connection` inside an open
  transaction and changes the schema with DDL only (never through the ORM models, which
  always describe the *latest* schema).
* :func:`migrate` runs, in one transaction, every migration newer than the database's
  version and records it. Concurrent starters are serialised: SQLite takes its write lock
  up front (``BEGIN IMMEDIATE``, see :mod:`db.store`), PostgreSQL takes a transaction-level
  advisory lock. DDL is transactional on both, so a failed migration leaves the previous
  schema untouched.
* A database newer than this code (a higher version than the last migration) is refused
  with a clear :class:`~db.errors.DatabaseError` instead of being written to.

Adding a migration: append ``(N + 1, "what it does", _vN_plus_1)`` to :data:`MIGRATIONS`,
write the DDL in that function, and update :mod:`db.models` to match (a test compares the
migrated schema with the models).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from db.errors import DatabaseError

Migration = tuple[int, str, Callable[[Connection], None]]

_ADVISORY_LOCK_KEY = 0x79617264  # "yard": one lock id for every migrating process

_version_meta = sa.MetaData()
schema_version = sa.Table(
    "schema_version", _version_meta,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)


def _v1_tables() -> sa.MetaData:
    """The initial schema, frozen as it was at version 1."""
    meta = sa.MetaData()
    sa.Table(
        "bots", meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_bots_name_version"),
    )
    sa.Table(
        "tournaments", meta,
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rules", sa.String(200), nullable=True),
        sa.Column("format", sa.String(50), nullable=True),
        sa.Column("spec", sa.JSON, nullable=False),
    )
    sa.Table(
        "scheduled_games", meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("tournament_id", sa.String(64),
                  sa.ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=False),
        sa.Column("game_index", sa.Integer, nullable=False),
        sa.Column("pair_index", sa.Integer, nullable=False),
        sa.Column("pair_key", sa.String(400), nullable=False),
        sa.Column("mrx_player", sa.String(400), nullable=False),
        sa.Column("detective_player", sa.String(400), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("tournament_id", "game_index", name="uq_schedule_index"),
    )
    sa.Table(
        "games", meta,
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("ruleset", sa.String(200), nullable=False, index=True),
        sa.Column("seed", sa.BigInteger, nullable=True),
        sa.Column("start_position", sa.Text, nullable=False),
        sa.Column("winner", sa.String(20), nullable=True),
        sa.Column("termination", sa.String(40), nullable=False),
        sa.Column("fault_seat", sa.Integer, nullable=True),
        sa.Column("moves", sa.Integer, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("mrx_player", sa.String(400), nullable=False),
        sa.Column("detective_player", sa.String(400), nullable=False),
        sa.Column("tournament_id", sa.String(64),
                  sa.ForeignKey("tournaments.id", ondelete="SET NULL"), nullable=True,
                  index=True),
        sa.Column("schedule_id", sa.Integer,
                  sa.ForeignKey("scheduled_games.id", ondelete="SET NULL"), nullable=True,
                  unique=True),
    )
    sa.Table(
        "game_seats", meta,
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    )
    sa.Table(
        "turns", meta,
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("turn_index", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("move", sa.String(40), nullable=True),
        sa.Column("time_used", sa.Float, nullable=False),
        sa.Column("fault", sa.String(40), nullable=True),
        sa.Column("detail", sa.Text, nullable=True),
    )
    sa.Table(
        "game_records", meta,
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("record", sa.JSON, nullable=False),
    )
    return meta


def _v1(conn: Connection) -> None:
    _v1_tables().create_all(conn)


def _add_column(conn: Connection, table: str, column: str, kind: sa.types.TypeEngine[Any]
                ) -> None:
    ddl = kind.compile(dialect=conn.dialect)
    conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}"))


def _v2(conn: Connection) -> None:
    """Per-move search effort and the bot process (instance) of each seat; nullable, so
    every existing row stays valid (null: not reported / not known)."""
    _add_column(conn, "turns", "playouts", sa.BigInteger())
    _add_column(conn, "turns", "nodes", sa.BigInteger())
    _add_column(conn, "turns", "depth", sa.Integer())
    _add_column(conn, "game_seats", "instance", sa.String(64))


def _v3(conn: Connection) -> None:
    """``tournaments.state``: JSON the runner writes while it plays (an SPRT's state)."""
    _add_column(conn, "tournaments", "state", sa.JSON())


def _v4(conn: Connection) -> None:
    """Leases on schedule entries for cluster workers (``lease_owner``, ``lease_expires``);
    null on every existing row (nobody holds it)."""
    _add_column(conn, "scheduled_games", "lease_owner", sa.String(100))
    _add_column(conn, "scheduled_games", "lease_expires", sa.DateTime(timezone=True))


def _v5(conn: Connection) -> None:
    """``accounts``: bot identities (name, a salted hash of the token, never the token;
    when created and last used; revoked or not). No existing row changes."""
    meta = sa.MetaData()
    sa.Table(
        "accounts", meta,
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("token_hash", sa.String(200), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    meta.create_all(conn)


MIGRATIONS: tuple[Migration, ...] = (
    (1, "initial schema: bots, tournaments, schedule, games, seats, turns, records", _v1),
    (2, "turns: reported search effort (playouts, nodes, depth); game_seats: instance", _v2),
    (3, "tournaments.state: runner state such as an SPRT decision", _v3),
    (4, "scheduled_games: lease_owner, lease_expires (cluster workers claim games)", _v4),
    (5, "accounts: bot names bound to hashed tokens (yard accounts, yard serve --accounts)",
     _v5),
)
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    """The schema version of the database behind ``conn`` (0 for an empty database)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    version = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    return int(version or 0)


def migrate(engine: Engine) -> int:
    """Bring the schema up to :data:`LATEST` in one transaction; returns the version.
    A database already at :data:`LATEST` is only read (a read-only file or role opens)."""
    with engine.connect() as conn:
        if current_version(conn) == LATEST:
            return LATEST
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                         {"key": _ADVISORY_LOCK_KEY})
        _version_meta.create_all(conn)
        version = current_version(conn)
        if version > LATEST:
            raise DatabaseError(f"database schema version {version} is newer than this "
                                f"yard understands ({LATEST}); upgrade yard")
        for number, description, apply in MIGRATIONS:
            if number > version:
                apply(conn)
                conn.execute(schema_version.insert().values(
                    version=number, description=description, applied_at=datetime.now(UTC)))
        return LATEST
