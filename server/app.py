"""The asyncio shell around :class:`server.core.Core`: websockets in, frames out, timers.

Each connection gets a reader loop (frames -> ``Core.receive``) and a writer task fed by a
queue, so a slow client never blocks another. One timer task calls ``Core.tick`` at the
next deadline. Finished games are stored off the event loop (``asyncio.to_thread``) before
their ``match_result`` goes to the admin connection that started them.

>>> import asyncio
>>> async def demo() -> str:
...     server = MatchServer(ServerConfig(), sink=None, port=0)
...     url = await server.start()
...     await server.stop()
...     return url.split(":")[0]
>>> asyncio.run(demo())
'ws'
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, PayloadTooBig
from websockets.http11 import Request, Response

from db.records import GameRecord
from protocol import ErrorCode, encode
from server.core import Close, Core, Finished, Output, Send, ServerConfig

log = logging.getLogger(__name__)

FRAME_SLACK = 4
"""websockets drops frames above ``FRAME_SLACK * max_size`` outright; smaller oversized
frames reach the codec and get a structured ``too_large`` error."""


class GameSink(Protocol):
    """Where finished games go (``db.store.Database`` satisfies it)."""

    def save_game(self, record: GameRecord) -> object:
        """Store ``record`` in one transaction."""


SHUTDOWN_REASON = "server shutting down"


def _close_code(reason: str) -> int:
    """1001 (going away) on shutdown, 1008 (policy) for violations, else 1000."""
    if reason == SHUTDOWN_REASON:
        return 1001
    return 1008 if "violation" in reason else 1000


class _CloseMarker:
    def __init__(self, reason: str) -> None:
        self.reason = reason


class MatchServer:
    """A websocket match server on ``host:port`` (port 0 picks a free port)."""

    def __init__(self, config: ServerConfig, sink: GameSink | None,
                 host: str = "127.0.0.1", port: int = 8765) -> None:
        offset = time.time() - time.monotonic()
        self.core = Core(config, wall=lambda t: datetime.fromtimestamp(t + offset, UTC))
        self.sink = sink
        self.host = host
        self.port = port
        self.url = ""
        self._server: Server | None = None
        self._queues: dict[int, asyncio.Queue[str | _CloseMarker]] = {}
        self._wake = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._saves: set[asyncio.Task[None]] = set()
        self.games_saved = 0
        #: Answers plain HTTP requests on the same port (``server.web.http.WebApp``).
        self.process_request: Callable[[ServerConnection, Request],
                                       Awaitable[Response | None]] | None = None

    async def start(self) -> str:
        """Start listening; returns ``ws://HOST:PORT`` with the real port."""
        self._server = await serve(self._handle, self.host, self.port, compression=None,
                                   max_size=self.core.config.max_size * FRAME_SLACK,
                                   process_request=self.process_request)
        port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self.port
        self.url = f"ws://{self.host}:{port}"
        self._timer = asyncio.create_task(self._run_timer())
        log.info("listening on %s", self.url)
        return self.url

    async def stop(self) -> None:
        """Abort running games (stored as ``aborted``), flush stores, close connections."""
        self._apply(self.core.shutdown(time.monotonic()))
        if self._saves:
            await asyncio.gather(*self._saves, return_exceptions=True)
        for queue in self._queues.values():
            queue.put_nowait(_CloseMarker(SHUTDOWN_REASON))
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    # ------------------------------------------------------------------ connections

    async def _handle(self, ws: ServerConnection) -> None:
        conn = self.core.connect(time.monotonic())
        queue: asyncio.Queue[str | _CloseMarker] = asyncio.Queue()
        self._queues[conn] = queue
        writer = asyncio.create_task(self._write(ws, queue))
        try:
            await self._read(ws, conn)
        finally:
            self._queues.pop(conn, None)
            self._apply(self.core.disconnect(conn, time.monotonic()))
            queue.put_nowait(_CloseMarker("connection closed"))
            await writer

    async def _read(self, ws: ServerConnection, conn: int) -> None:
        try:
            async for frame in ws:
                self._apply(self.core.receive(conn, frame, time.monotonic()))
        except PayloadTooBig as exc:
            self._apply(self.core.violation(conn, ErrorCode.TOO_LARGE, str(exc),
                                            time.monotonic()))
        except ConnectionClosed:
            pass

    async def _write(self, ws: ServerConnection, queue: asyncio.Queue[str | _CloseMarker]
                     ) -> None:
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _CloseMarker):
                    await ws.close(_close_code(item.reason), item.reason[:120])
                    return
                await ws.send(item)
        except ConnectionClosed:
            return

    # ------------------------------------------------------------------ outputs

    def _apply(self, outputs: list[Output]) -> None:
        texts: dict[int, str] = {}  # one encoding per message object (broadcasts)
        for output in outputs:
            if isinstance(output, Send):
                key = id(output.message)
                if key not in texts:
                    texts[key] = encode(output.message)
                self._send(output.conn, texts[key])
            elif isinstance(output, Close):
                queue = self._queues.get(output.conn)
                if queue is not None:
                    queue.put_nowait(_CloseMarker(output.reason))
            elif isinstance(output, Finished):
                task = asyncio.create_task(self._store(output))
                self._saves.add(task)
                task.add_done_callback(self._saves.discard)
        self._wake.set()

    def _send(self, conn: int, text: str) -> None:
        queue = self._queues.get(conn)
        if queue is not None:
            queue.put_nowait(text)

    async def _store(self, finished: Finished) -> None:
        record = finished.record
        if self.sink is not None:
            try:
                await asyncio.to_thread(self.sink.save_game, record)
                self.games_saved += 1
            except Exception:
                log.exception("game %s: storing the record failed", record.game_id)
        if finished.notify is not None:
            self._send(finished.notify, encode(finished.result))

    async def _run_timer(self) -> None:
        while True:
            deadline = self.core.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
            self._apply_tick()

    def _apply_tick(self) -> None:
        outputs = self.core.tick(time.monotonic())
        if outputs:
            self._apply(outputs)
