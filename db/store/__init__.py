"""The storage API: finished games, tournaments and their schedules, over SQLAlchemy 2.

Everything is synchronous (the server calls it through ``asyncio.to_thread``); one engine
per :class:`Database`, one short session per call. Any SQLAlchemy URL works; SQLite is the
default and needs no set-up. The schema is created or migrated on connect
(:mod:`db.migrations`).

One module per job, composed by :class:`Database` (:mod:`db.store.database`):
:mod:`~db.store.games` (store, import and load games; results for ratings),
:mod:`~db.store.tournaments`, :mod:`~db.store.schedule`, :mod:`~db.store.leases` (cluster
workers' claims), :mod:`~db.store.accounts` (bot accounts: hashed tokens);
:mod:`~db.store.queries` holds what the web pages read with their own engine.

>>> db = Database.connect("sqlite://")          # in-memory
>>> tid = db.create_tournament({"rules": "grid5", "bots": ["random", "rush"]})
>>> [e.index for e in db.schedule(tid, [ScheduledGame(0, 0, "random", "rush", 1)])]
[0]
>>> len(db.pending(tid))
1
"""

from __future__ import annotations

from db.store.database import Database
from db.store.leases import ABORTED_LEASE
from db.store.tournaments import forfeit_record
from records import (
    AccountInfo,
    ComputeRow,
    GameSummary,
    ResultRow,
    ScheduledGame,
    TournamentInfo,
)

__all__ = ["ABORTED_LEASE", "AccountInfo", "ComputeRow", "Database", "GameSummary",
           "ResultRow", "ScheduledGame", "TournamentInfo", "forfeit_record"]
