"""What every part of :class:`db.store.Database` shares: the engine, transactions that
turn SQLAlchemy errors into :class:`~db.errors.DatabaseError`, and time and text helpers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from db.errors import DatabaseError


class Connection:
    """One engine (and its writer: ``BEGIN IMMEDIATE`` on SQLite), one short session per
    call."""

    def __init__(self, engine: Engine, url_text: str) -> None:
        """Wrap ``engine`` (``url_text``: its URL, for messages)."""
        self._engine = engine
        self._writer = engine.execution_options(yard_write=True)
        self.url = url_text

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


def opt_str(value: Any) -> str | None:
    """``value`` as text, ``None`` staying ``None`` (spec fields stored in columns)."""
    return None if value is None else str(value)


def utc(moment: datetime) -> datetime:
    """Aware UTC; naive datetimes are taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def aware(moment: datetime) -> datetime:
    """Datetimes read back (SQLite drops the zone; they were stored as UTC)."""
    return utc(moment)

