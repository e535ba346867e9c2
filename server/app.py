"""The asyncio shell around :class:`server.core.Core`: websockets in, frames out, timers.

Each connection gets a reader loop (frames -> ``Core.receive``; whole text frames come
straight from the socket, :mod:`server.frames`) and an outbox (:mod:`server.outbox`):
messages are encoded once and written once per connection per loop tick, and a client
that does not read is disconnected once ``max_send_bytes`` are waiting for it. A
connection that has not sent ``hello`` within ``hello_timeout_s`` is closed. Open sockets
are capped in all and per remote address (:mod:`server.gate`). One timer task calls
``Core.tick`` at the next deadline. Finished games go to the :class:`Recorder` the
server was given, which stores them and then sends their ``match_result`` to the admin
connection that started them (:mod:`host.writer` stores them in a database, off the event
loop; one that asked for ``match_over`` hears at once that the game ended); without one,
the result is sent at once. Account tokens are checked by an :class:`AccountCheck`
(:mod:`host.accounts`). The shell imports neither: whoever puts the server to work hands
them in.

>>> import asyncio
>>> async def demo() -> str:
...     server = MatchServer(ServerConfig(), recorder=None, port=0)
...     url = await server.start()
...     await server.stop()
...     return url.split(":")[0]
>>> asyncio.run(demo())
'ws'
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, PayloadTooBig
from websockets.http11 import Request, Response

from protocol import ErrorCode, encode_bytes
from server.auth import is_loopback, origin_allowed
from server.config import ServerConfig
from server.core import Core
from server.frames import FRAME_SLACK, DirectConnection
from server.gate import Gate, GatedConnection, gated, refusal
from server.outbox import SHUTDOWN_REASON, CloseMarker, Outbox, Outboxes, drain, drop
from server.outputs import (
    AccountStatus,
    AccountVerdict,
    Authenticate,
    Close,
    Finished,
    Output,
    Send,
)

log = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = 3.0
"""Seconds a closing handshake may take before the socket is dropped."""


class Recorder(Protocol):
    """Where the shell hands finished games: each is stored, then its result sent to the
    admin that started it (``host.writer.GameWriter`` stores them in a database)."""

    def attach(self, send: Callable[[int, bytes], None], running: Callable[[], bool]
               ) -> None:
        """Send results with ``send(conn, encoded message)``; ``running()`` says whether
        games are still being played (more may finish soon). Called once, by the server
        the recorder is given to."""

    def queue(self, finished: Finished) -> None:
        """Store ``finished.record`` (without blocking the event loop), then send
        ``finished.result`` to ``finished.notify`` (or an error if it cannot be stored)."""

    async def wait(self) -> None:
        """Until every game queued so far is stored (or given up)."""


class AccountCheck(Protocol):
    """Checks bot account tokens for the shell without blocking the event loop
    (``host.accounts.AccountChecker`` reads the accounts from a database)."""

    async def verify(self, request: Authenticate) -> AccountVerdict:
        """The verdict on ``request``'s name and token (or registration)."""

    def close(self) -> None:
        """Release what the checks hold (blocking; the server calls it off the loop)."""


class MatchServer:
    """A websocket match server on ``host:port`` (port 0 picks a free port) handing its
    finished games to ``recorder`` (``None``: stored nowhere, results sent at once)."""

    def __init__(self, config: ServerConfig, recorder: Recorder | None,
                 host: str = "127.0.0.1", port: int = 8765) -> None:
        """A server for ``config`` on ``host:port`` (port 0: any free port), not yet started."""
        offset = time.time() - time.monotonic()
        self.core = Core(config, wall=lambda t: datetime.fromtimestamp(t + offset, UTC))
        self.host = host
        self.port = port
        self.url = ""
        self._server: Server | None = None
        self._outboxes = Outboxes(self._overflow)
        self._send = self._outboxes.send
        self._sockets: dict[int, ServerConnection] = {}
        self._wake = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._recorder = recorder
        if recorder is not None:
            recorder.attach(self._send, lambda: bool(self.core.matches))
        self._tasks: set[asyncio.Task[None]] = set()
        self._gate = Gate(config)
        self._previous_handler: Any = None
        #: Clients disconnected for not reading their messages.
        self.overflows = 0
        #: Answers plain HTTP requests on the same port (``host.web.http.WebApp``).
        self.process_request: Callable[[ServerConnection, Request],
                                       Awaitable[Response | None]] | None = None
        #: Checks bot account tokens when the config asks for accounts (may be set before
        #: the first ``hello``; without one, account checks answer ``accounts_unavailable``).
        self.accounts: AccountCheck | None = None

    @property
    def admin_token(self) -> str | None:
        """The secret an admin connection must send (``ServerConfig.admin_token``)."""
        return self.core.config.admin_token

    @property
    def port_number(self) -> int:
        """The port listened on (the real one after ``port=0``)."""
        return int(self.url.rsplit(":", 1)[1]) if self.url else self.port

    @property
    def queued_bytes(self) -> int:
        """Bytes of messages waiting in every connection's outbox (at most
        ``max_send_bytes`` each)."""
        return self._outboxes.queued_bytes

    @property
    def fast_frames(self) -> int:
        """Client frames parsed by the server's own fast path (whole masked text frames at
        a read's start; everything else goes through websockets' parser)."""
        return self._gate.fast_frames + sum(
            ws.yard_fast_frames for ws in self._sockets.values()
            if isinstance(ws, DirectConnection))

    @property
    def open_sockets(self) -> int:
        """Sockets open now (websocket, HTTP, or still in their handshake)."""
        return self._gate.total

    async def start(self) -> str:
        """Start listening; returns ``ws://HOST:PORT`` with the real port."""
        config = self.core.config
        self._server = await serve(
            self._handle, self.host, self.port, compression=None,
            max_size=config.max_size * FRAME_SLACK, process_request=self._process_request,
            create_connection=gated(self._gate),
            open_timeout=max(config.hello_timeout_s, 0.1), close_timeout=CLOSE_TIMEOUT_S)
        port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self.port
        self.url = f"ws://{self.host}:{port}"
        self._timer = asyncio.create_task(self._run_timer())
        loop = asyncio.get_running_loop()
        self._previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_exception)
        log.info("listening on %s", self.url)
        return self.url

    async def stop(self) -> None:
        """Abort running games (stored as ``aborted``), flush stores, close connections."""
        self._apply(self.core.shutdown(time.monotonic()))
        if self._recorder is not None:
            await self._recorder.wait()
        for outbox in self._outboxes.by_conn.values():
            outbox.close(CloseMarker(SHUTDOWN_REASON))
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self.accounts is not None:
            await asyncio.to_thread(self.accounts.close)
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            if loop.get_exception_handler() == self._loop_exception:
                loop.set_exception_handler(self._previous_handler)

    # ------------------------------------------------------------------ connections

    async def _process_request(self, connection: ServerConnection, request: Request
                               ) -> Response | None:
        reason = getattr(connection, "yard_refusal", None)
        if reason is not None:
            return refusal(reason)
        origins = request.headers.get_all("Origin")
        if origins and isinstance(connection, GatedConnection):
            # A browser's page: the core refuses its hello unless the origin is allowed.
            origin = ", ".join(origins)
            hosts = request.headers.get_all("Host")
            if len(origins) > 1 or not origin_allowed(
                    origin, hosts[0] if len(hosts) == 1 else None,
                    self.core.config.allowed_origins, loopback=is_loopback(self.host)):
                connection.yard_foreign_origin = origin
        if self.process_request is not None:
            return await self.process_request(connection, request)
        return None

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]
                        ) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            # asyncio stops accepting for a second by itself; say so in one line, not a
            # traceback per attempt (repeats are thinned out by server.logs).
            log.error("cannot accept connections: %s (%d sockets open); accepting "
                      "again in a second", exc.strerror, self._gate.total)
            return
        if self._previous_handler is not None:
            self._previous_handler(loop, context)
        else:
            loop.default_exception_handler(context)

    async def _handle(self, ws: ServerConnection) -> None:
        conn = self.core.connect(time.monotonic(), getattr(ws, "yard_foreign_origin", None),
                                 getattr(ws, "yard_address", None))
        outbox = Outbox(self.core.config.max_send_bytes, ws)
        self._outboxes.by_conn[conn] = outbox
        self._sockets[conn] = ws
        writer = asyncio.create_task(drain(ws, outbox))
        timer = asyncio.get_running_loop().call_later(
            self.core.config.hello_timeout_s, self._hello_due, conn)
        if isinstance(ws, DirectConnection):
            ws.attach(lambda data: self._apply(self.core.receive(conn, data, time.monotonic())))
        try:
            await self._read(ws, conn)
        finally:
            if isinstance(ws, DirectConnection):
                ws.detach()
            timer.cancel()
            self._outboxes.by_conn.pop(conn, None)
            self._sockets.pop(conn, None)
            self._apply(self.core.disconnect(conn, time.monotonic()))
            outbox.close(CloseMarker("connection closed"))
            if outbox.overflowed:
                writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    def _hello_due(self, conn: int) -> None:
        state = self.core.conns.get(conn)
        outbox = self._outboxes.by_conn.get(conn)
        if state is not None and state.session is None and outbox is not None:
            seconds = self.core.config.hello_timeout_s
            outbox.close(CloseMarker(f"no hello within {seconds:g} s", 1008))

    async def _read(self, ws: ServerConnection, conn: int) -> None:
        try:
            async for frame in ws:
                self._apply(self.core.receive(conn, frame, time.monotonic()))
        except PayloadTooBig as exc:
            self._apply(self.core.violation(conn, ErrorCode.TOO_LARGE, str(exc),
                                            time.monotonic()))
        except ConnectionClosed:
            pass

    def _overflow(self, conn: int, outbox: Outbox) -> None:
        """``conn`` has ``max_send_bytes`` waiting: it is not reading. Drop it."""
        self.overflows += 1
        log.warning("connection %d: more than %d bytes unread; disconnected", conn,
                    outbox.limit)
        # Gone for the core now (its session's games start their grace period, logged),
        # not when the socket is finally closed: nothing addressed to it from here on
        # is in the games' rebuilt messages. What was waiting in its buffer (dropped
        # unwritten) still is.
        # What its leaving sets off (a waiting person's game started) is sent after this
        # send, not inside it.
        asyncio.get_running_loop().call_soon(
            self._apply, self.core.disconnect(conn, time.monotonic()))
        ws = self._sockets.get(conn)
        if ws is not None:
            task = asyncio.create_task(drop(ws, outbox.limit))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ outputs

    def _apply(self, outputs: list[Output]) -> None:
        texts: dict[int, bytes] = {}  # one encoding per message object (broadcasts)
        for output in outputs:
            if type(output) is Send:
                key = id(output.message)
                text = texts.get(key)
                if text is None:
                    text = texts[key] = encode_bytes(output.message)
                self._send(output.conn, text)
            elif isinstance(output, Close):
                self._close(output)
            elif isinstance(output, Finished):
                self._finished(output)
            elif isinstance(output, Authenticate):
                self._spawn(self._authenticate(output))
        if self.core.rearm:  # a deadline earlier than the one the timer sleeps until
            self._wake.set()

    def _close(self, output: Close) -> None:
        """Close the connection after the frames already queued for it (if still open)."""
        outbox = self._outboxes.by_conn.get(output.conn)
        if outbox is not None:
            outbox.close(CloseMarker(output.reason, output.code))

    def _finished(self, output: Finished) -> None:
        """A game ended: queue it to be stored (the recorder then sends the result), else send
        the result to the admin that started it, if any."""
        if self._recorder is not None:
            self._recorder.queue(output)
        elif output.notify is not None:
            self._send(output.notify, encode_bytes(output.result))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _authenticate(self, request: Authenticate) -> None:
        """Check an account token off the loop; then the core goes on with the hello."""
        verdict = AccountVerdict(AccountStatus.UNAVAILABLE)
        if self.accounts is not None:
            try:
                verdict = await self.accounts.verify(request)
            except Exception:  # a bug in the check must not leave the hello hanging
                log.exception("account check of %r failed", request.name)
        self._apply(self.core.authenticated(request.conn, verdict, time.monotonic()))

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
