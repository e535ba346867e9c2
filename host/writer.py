"""Finished games to the database, off the event loop, and their results to the admin.

:class:`GameWriter` stores finished games in a thread (``asyncio.to_thread``), so a slow
database never stalls play. Writes are group commits: while other games are still
running, a finished game waits up to :data:`STORE_LINGER_S` for more to finish, and games
that finish meanwhile (or while a write runs) go in one transaction. A game's
``match_result`` goes to the admin connection that started it only once the game is
committed; a game that cannot be stored is appended to a fallback file and the admin gets
an ``error`` (``store_failed``) instead. It is the :class:`server.app.Recorder` a served
match server is given (:mod:`host.run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from db.errors import AlreadyPlayedError
from db.portable import to_line
from protocol import Error, ErrorCode, encode_bytes
from records import GameRecord
from server.outputs import Finished

log = logging.getLogger(__name__)

STORE_RETRIES_S = (0.2, 1.0)
"""Waits before the second and third attempt to store a finished game."""
STORE_BATCH = 100
"""Most finished games written in one transaction."""
STORE_LINGER_S = 0.02
"""How long a finished game waits for others to finish before it is written, while other
games are running: one transaction per game cost several times the CPU of the game's
share of a batch, in a server that plays hundreds of games a second (bench/RESULTS.md).
A game that ends when no other is running is written at once."""


class GameSink(Protocol):
    """Where finished games go (``db.store.Database`` satisfies it). A sink that also has
    ``save_games(records)`` (one transaction for all) gets the games that finished while
    the previous write was running in one call."""

    def save_game(self, record: GameRecord) -> object:
        """Store ``record`` in one transaction."""


def _unattached(conn: int, message: bytes) -> None:
    raise RuntimeError("a GameWriter sends results only once attached to a server "
                       "(MatchServer(config, writer) attaches it)")


class GameWriter:
    """Stores finished games in ``sink`` (none: stored nowhere, results still sent) and
    then sends each game's result with ``send(conn, encoded message)``.

    A :class:`server.app.MatchServer` given the writer (``MatchServer(config,
    GameWriter(db))``) attaches its own ``send`` and ``running``."""

    def __init__(self, sink: GameSink | None,
                 send: Callable[[int, bytes], None] = _unattached,
                 running: Callable[[], bool] = lambda: False,
                 linger_s: float = STORE_LINGER_S) -> None:
        """A writer storing into ``sink`` and answering through ``send``."""
        #: Where games are stored (``None``: nowhere; may be set before games finish).
        self.sink = sink
        self.send = send
        #: Whether games are still being played (more may finish soon): see
        #: :data:`STORE_LINGER_S`.
        self.running = running
        self.linger_s = linger_s
        #: Where a game that cannot be stored is appended (one JSON record per line, as
        #: ``yard export --what records`` writes them; ``yard import`` reads it).
        self.fallback_path: Path | None = None
        self.games_saved = 0
        #: Games that could not be stored (each kept in :attr:`fallback_path` if set).
        self.store_failures = 0
        self._to_store: list[Finished] = []
        self._writer: asyncio.Task[None] | None = None
        self._saves: set[asyncio.Task[None]] = set()
        self._hurry = False  # write what is queued without waiting for more
        self._woken: asyncio.Event | None = None  # set to end the wait for more

    def attach(self, send: Callable[[int, bytes], None], running: Callable[[], bool]
               ) -> None:
        """Send results with ``send``; ``running()``: whether games are still being
        played (the server's own, given by the server the writer serves)."""
        self.send = send
        self.running = running

    def queue(self, finished: Finished) -> None:
        """Hand a finished game to the writer task (a thread does the writing); games that
        finish while it waits for them (see :data:`STORE_LINGER_S`) or writes go in its
        next batch, one transaction."""
        self._to_store.append(finished)
        if len(self._to_store) >= STORE_BATCH or not self.running():
            self._write_soon()
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_batches())
            self._saves.add(self._writer)
            self._writer.add_done_callback(self._saves.discard)

    async def wait(self) -> None:
        """Until every game queued so far is stored (or kept, or given up); what waits
        for more games to finish is written at once."""
        self._write_soon()
        if self._saves:
            await asyncio.gather(*self._saves, return_exceptions=True)

    async def _write_batches(self) -> None:
        try:
            while self._to_store:
                if self.linger_s > 0 and not self._hurry and self.running():
                    self._woken = asyncio.Event()
                    try:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._woken.wait(), self.linger_s)
                    finally:
                        self._woken = None
                self._hurry = False
                batch = self._to_store[:STORE_BATCH]
                del self._to_store[:STORE_BATCH]
                if len(batch) > 1 and await self._save_batch([f.record for f in batch]):
                    for finished in batch:
                        self.games_saved += 1
                        if finished.notify is not None:
                            self.send(finished.notify, encode_bytes(finished.result))
                    continue
                for finished in batch:  # one by one: retries, fallback file, errors
                    await self._store(finished)
        finally:
            self._writer = None

    def _write_soon(self) -> None:
        self._hurry = True
        if self._woken is not None:
            self._woken.set()

    async def _save_batch(self, records: list[GameRecord]) -> bool:
        """Store ``records`` in one transaction if the sink can; ``False`` if it cannot or
        that failed (nothing stored: the caller stores them one by one)."""
        save_games = getattr(self.sink, "save_games", None)
        if save_games is None:
            return False
        try:
            await asyncio.to_thread(save_games, records)
            return True
        except Exception as exc:  # any sink error: each game gets its own tries
            log.warning("storing %d games in one transaction failed (%s); storing them one "
                        "by one", len(records), f"{type(exc).__name__}: {exc}".splitlines()[0])
            return False

    async def _store(self, finished: Finished) -> None:
        record = finished.record
        if self.sink is not None:
            failure = await self._save(record)
            if failure is not None:
                self.store_failures += 1
                problem = f"{type(failure).__name__}: {failure}".splitlines()[0]
                if isinstance(failure, AlreadyPlayedError):
                    # Another server stored this scheduled game first (a cluster worker
                    # whose lease had expired): a duplicate, not a record to keep.
                    where = "not kept: the entry's game is stored"
                    log.warning("game %s: not stored (%s)", record.game_id, problem)
                else:
                    kept = await self._keep(record)
                    where = f"kept in {kept}" if kept else "NOT kept anywhere"
                    log.error("game %s: storing the record failed (%s); %s",
                              record.game_id, problem, where)
                if finished.notify is not None:
                    self.send(finished.notify, encode_bytes(Error(
                        ErrorCode.STORE_FAILED, f"game {record.game_id} finished but was not "
                        f"stored ({problem[:200]}); {where}", record.game_id)))
                return
            self.games_saved += 1
        if finished.notify is not None:
            self.send(finished.notify, encode_bytes(finished.result))

    async def _save(self, record: GameRecord) -> Exception | None:
        """Store ``record`` (three tries, one for a duplicate of a played schedule entry);
        ``None`` on success, else the last error."""
        assert self.sink is not None
        failure: Exception | None = None
        for wait in (0.0, *STORE_RETRIES_S):
            if wait:
                await asyncio.sleep(wait)  # back-off before a retry, not synchronisation
            try:
                await asyncio.to_thread(self.sink.save_game, record)
                return None
            except AlreadyPlayedError as exc:  # final: retrying cannot succeed
                return exc
            except Exception as exc:  # any sink error: keep the game, tell the admin
                failure = exc
        return failure

    async def _keep(self, record: GameRecord) -> Path | None:
        """Append ``record`` to the fallback file; its path, or ``None`` if that failed."""
        path = self.fallback_path
        if path is None:
            return None
        try:
            line = to_line(record) + "\n"

            def append() -> None:
                with path.open("a", encoding="utf-8") as out:
                    out.write(line)

            await asyncio.to_thread(append)
            return path
        except Exception:
            log.exception("game %s: writing the fallback record to %s failed",
                          record.game_id, path)
            return None
