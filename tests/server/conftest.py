"""Fixtures of the referee's tests: a fresh database and a match server on it.

A module tunes them without a fixture of its own: ``SERVER_CONFIG`` (a
:class:`~server.config.ServerConfig`) is the config its ``server`` runs with; indirect
parametrization of ``db`` with a backend of :data:`tests.BACKENDS` runs a test on
PostgreSQL too (tests/server/test_access.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from db.store import Database
from host.writer import GameWriter
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE


@pytest.fixture
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A fresh database, closed afterwards: the SQLite file ``tmp_path / "yard.db"``, or a
    throwaway PostgreSQL schema (``pg_url``) when parametrized with ``"postgresql"``."""
    backend = getattr(request, "param", "sqlite")
    url = (f"sqlite:///{tmp_path / 'yard.db'}" if backend == "sqlite"
           else request.getfixturevalue("pg_url"))
    store = Database.connect(url)
    yield store
    store.close()


@pytest.fixture
async def server(request: pytest.FixtureRequest, db: Database) -> AsyncIterator[MatchServer]:
    """A match server on a free loopback port, storing its games in ``db``; its config is
    the module's ``SERVER_CONFIG``, else a 1 s disconnect grace (times YARD_TEST_TIMEOUT_SCALE)."""
    config = getattr(request.module, "SERVER_CONFIG", None) or ServerConfig(grace_s=1.0 * SCALE)
    srv = MatchServer(config, GameWriter(db), port=0)
    await srv.start()
    yield srv
    await srv.stop()
