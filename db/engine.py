"""Creating a SQLAlchemy engine from a URL, with SQLite tuned for sharing one file.

SQLite connections get ``journal_mode=WAL`` (readers never block the writer), foreign
keys on, and a busy timeout, so the server's writer thread and CLI readers can use the
same file at once. The driver's own implicit transactions are switched off and SQLAlchemy
emits ``BEGIN`` itself (the documented pysqlite recipe), so DDL is transactional and write
transactions can take the lock up front with ``BEGIN IMMEDIATE`` (an engine derived with
``execution_options(yard_write=True)``); that avoids deadlocks between two writers
upgrading read locks, which the busy timeout cannot resolve. A file opened read-only
(``sqlite:///file:PATH?mode=ro&uri=true``, or without write permission) keeps its journal
mode, and every read works on it; one older than this yard's schema is read through a
migrated in-memory copy (:func:`memory_copy`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import StaticPool

from db.defaults import DEFAULT_DB_URL as DEFAULT_DB_URL  # re-exported
from db.errors import DatabaseError

BUSY_TIMEOUT_MS = 30_000


def parse_url(url: str) -> URL:
    """Parse a SQLAlchemy URL, raising :class:`DatabaseError` with a hint when it is bad."""
    try:
        return sa.make_url(url)
    except sa.exc.ArgumentError:
        raise DatabaseError(f"bad database URL {url!r}: expected a SQLAlchemy URL such as "
                            "sqlite:///yard.db or postgresql+psycopg://user@host/db") from None


def safe_url(url: URL) -> str:
    """The URL as text with any password masked (for messages)."""
    return url.render_as_string(hide_password=True)


def check_exists(url: URL) -> None:
    """Raise :class:`DatabaseError` if ``url`` names a SQLite file that does not exist."""
    path = url.database
    if url.get_backend_name() == "sqlite" and path not in (None, "", ":memory:") \
            and not path.startswith("file:") and not Path(path).exists():
        raise DatabaseError(f"no database file {path!r} (from {safe_url(url)}); play or "
                            "serve some games first, or pass --db / set YARD_DB")


def create_engine(url: URL) -> Engine:
    """An engine for ``url``; SQLite gets the pragmas and transaction handling above."""
    if url.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True, json_serializer=json_text)
    kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False},
                              "json_serializer": json_text}
    if url.database in (None, "", ":memory:"):
        kwargs["poolclass"] = StaticPool  # one shared in-memory database
    engine = sa.create_engine(url, **kwargs)
    _tune_sqlite(engine)
    return engine


def is_read_only(error: sa.exc.DBAPIError) -> bool:
    """Whether ``error`` is SQLite refusing a write to a file it opened read-only."""
    code = getattr(error.orig, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_READONLY


def memory_copy(engine: Engine) -> Engine:
    """A private in-memory copy of the SQLite database behind ``engine`` (read through
    ``engine``, which is then disposed): what a reader uses when the file is older than
    this yard's schema and cannot be upgraded in place (no write access). The file is
    never written; the copy shows the file as it was when copied."""
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    source = engine.raw_connection()
    try:
        source.driver_connection.backup(copy)  # type: ignore[union-attr]
    finally:
        source.close()
        engine.dispose()
    memory = sa.create_engine("sqlite://", creator=lambda: copy, poolclass=StaticPool,
                              json_serializer=json_text)
    _tune_sqlite(memory)
    return memory


def _tune_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself (see "begin")
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:  # a read-only file keeps its journal mode
            if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_READONLY:
                raise
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get("yard_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def json_text(value: Any) -> str:
    """JSON columns' serializer: orjson (a stored record is written in one pass), the
    standard library for what orjson cannot write (integers past 64 bits, lone surrogates,
    non-string keys)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value)
