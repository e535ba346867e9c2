"""The asyncio shell around :class:`server.core.Core`: websockets in, frames out, timers.

Each connection gets a reader loop (frames -> ``Core.receive``). Messages are encoded once
(a broadcast's bytes go to every recipient) and, while the connection's transport is not
paused, framed straight into it and written once per connection per loop tick; otherwise
they wait in a bounded outbox drained by a writer task, so a slow client never blocks
another, and one that does not read at all is disconnected once ``max_send_bytes`` are
waiting for it. A connection that has not sent
``hello`` within ``hello_timeout_s`` is closed. Open sockets are capped in all and per
remote address: one over a cap gets an HTTP 503 with the reason (and beyond a margin is
dropped at once), so a flood cannot use up the process's file descriptors. One timer task
calls ``Core.tick`` at the next deadline. Finished games are stored off the event loop
(``asyncio.to_thread``) before their ``match_result`` goes to the admin connection that
started them (one that asked for ``match_over`` hears at once that the game ended); a
game that cannot be stored is kept in a fallback file and the admin gets an ``error``
(``store_failed``) instead.

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
import errno
import http
import logging
import struct
import time
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, PayloadTooBig
from websockets.frames import DATA_OPCODES, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import Event, State
from websockets.protocol import Protocol as WsProtocol
from websockets.streams import StreamReader

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a websockets build without its C extension
    from websockets.utils import apply_mask

from db.errors import AlreadyPlayedError
from db.records import GameRecord
from protocol import Error, ErrorCode, encode_bytes
from server.core import Close, Core, Finished, Output, Send, ServerConfig

log = logging.getLogger(__name__)

FRAME_SLACK = 4
"""websockets drops frames above ``FRAME_SLACK * max_size`` outright; smaller oversized
frames reach the codec and get a structured ``too_large`` error."""


class GameSink(Protocol):
    """Where finished games go (``db.store.Database`` satisfies it). A sink that also has
    ``save_games(records)`` (one transaction for all) gets the games that finished while
    the previous write was running in one call."""

    def save_game(self, record: GameRecord) -> object:
        """Store ``record`` in one transaction."""


SHUTDOWN_REASON = "server shutting down"
CLOSE_TIMEOUT_S = 3.0
"""Seconds a closing handshake may take before the socket is dropped."""
OVERFLOW_CLOSE_S = 1.0
"""Seconds a client over its send buffer gets for the close frame before it is dropped."""
STORE_RETRIES_S = (0.2, 1.0)
STORE_BATCH = 100
"""Most finished games written in one transaction."""
"""Waits before the second and third attempt to store a finished game."""


def _close_code(reason: str) -> int:
    """1001 (going away) on shutdown, 1008 (policy) for violations, else 1000."""
    if reason == SHUTDOWN_REASON:
        return 1001
    return 1008 if "violation" in reason else 1000


def refusal_slots(max_connections: int) -> int:
    """Sockets over ``max_connections`` still answered with a 503 (beyond: dropped)."""
    return max(16, max_connections // 8)


class _CloseMarker:
    def __init__(self, reason: str, code: int | None = None) -> None:
        self.reason = reason
        self.code = _close_code(reason) if code is None else code


class _Outbox:
    """Frames waiting for one connection's writer, at most ``limit`` bytes of them."""

    def __init__(self, limit: int, ws: ServerConnection | None = None) -> None:
        self.limit = limit
        #: The connection the frames go to.
        self.ws = ws
        self.items: deque[bytes] = deque()
        self.bytes = 0
        #: Bytes to be framed straight into the transport at the end of this loop tick
        #: (:meth:`MatchServer._flush`): they count against ``limit`` as queued ones do.
        self.direct = 0
        #: Those messages, in order.
        self.texts: list[bytes] = []
        self.closing: _CloseMarker | None = None
        self.overflowed = False
        self.ready = asyncio.Event()

    def idle(self) -> bool:
        """Nothing queued and not closing: a frame may bypass the queue."""
        return not self.items and self.closing is None and not self.overflowed

    def reserve(self, size: int) -> bool:
        """Count ``size`` bytes framed straight into the transport; ``False`` (the outbox
        overflowed) if that would pass the limit."""
        if self.bytes + self.direct + size > self.limit:
            self.overflowed = True
            self.items.clear()
            self.texts.clear()  # this tick's messages: dropped with it
            self.bytes = 0
            return False
        self.direct += size
        return True

    def requeue(self, texts: list[bytes]) -> None:
        """Put ``texts`` (this tick's messages, already counted) at the front of the queue:
        the transport could not take them (paused) and the writer task sends them."""
        self.items.extendleft(reversed(texts))
        self.bytes += sum(map(len, texts))
        self.ready.set()

    def put(self, text: bytes) -> bool:
        """Queue ``text``; ``False`` (and nothing queued) if that would pass the limit."""
        if self.closing is not None or self.overflowed:
            return True
        if self.bytes + self.direct + len(text) > self.limit:
            self.overflowed = True
            self.items.clear()
            self.bytes = 0
            return False
        self.items.append(text)
        self.bytes += len(text)
        self.ready.set()
        return True

    def close(self, marker: _CloseMarker) -> None:
        """Close after the frames already queued."""
        if self.closing is None:
            self.closing = marker
            self.ready.set()

    async def get(self) -> bytes | _CloseMarker:
        """The next frame, or the close marker once every frame is out."""
        while True:
            if self.items:
                text = self.items.popleft()
                self.bytes -= len(text)
                return text
            if self.closing is not None:
                return self.closing
            self.ready.clear()
            await self.ready.wait()


class _Gate:
    """Counts open sockets in all and per remote address; decides who is refused."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.total = 0
        self.per_address: dict[str, int] = {}
        self.refused = 0
        #: Frames of closed connections that took the fast path of ``data_received``.
        self.fast_frames = 0

    def admit(self, address: str) -> str | None:
        """Count a new socket from ``address``; the reason to refuse it, or ``None``."""
        self.total += 1
        count = self.per_address[address] = self.per_address.get(address, 0) + 1
        if self.total > self.config.max_connections:
            return f"too many connections (server limit {self.config.max_connections})"
        if count > self.config.max_per_address:
            return (f"too many connections from {address} "
                    f"(limit {self.config.max_per_address} per address)")
        return None

    def release(self, address: str) -> None:
        """A socket counted by :meth:`admit` closed."""
        self.total -= 1
        left = self.per_address.get(address, 1) - 1
        if left > 0:
            self.per_address[address] = left
        else:
            self.per_address.pop(address, None)

    def hopeless(self) -> bool:
        """So many sockets that even a refusal would cost too much: drop at once."""
        return self.total > self.config.max_connections + refusal_slots(
            self.config.max_connections)


class _GatedConnection(ServerConnection):
    """A websockets server connection counted by a :class:`_Gate` from accept to close.

    Whole (unfragmented) data frames go straight from ``data_received`` to the sink the
    handler attaches (:meth:`attach`), in order, without websockets' message queue and a
    reader task wake-up per frame; frames that arrive before the handler attaches wait in
    a list. Once a client sends a fragmented message (or a text frame that is not UTF-8),
    that frame and all later ones take websockets' own path (the handler's reader loop),
    so the order of messages is kept either way.
    """

    gate: ClassVar[_Gate]
    yard_sink: Callable[[str | bytes], None] | None = None
    yard_direct = True
    yard_pending: list[str | bytes] | None = None
    #: Frames that took the fast path of :meth:`data_received`.
    yard_fast_frames = 0
    #: websockets' parser generator, while it is known to wait between frames with
    #: nothing buffered (it is fed only by ``super().data_received``, which resets this,
    #: and replaced when the connection fails or closes).
    yard_parser: object = None

    def attach(self, sink: Callable[[str | bytes], None]) -> None:
        """Hand ``sink`` every whole data frame from now on (those waiting first)."""
        pending, self.yard_pending = self.yard_pending or [], None
        for data in pending:
            sink(data)
        self.yard_sink = sink

    def detach(self) -> None:
        """No more frames to the sink (the handler is done)."""
        self.yard_sink = None
        self.yard_direct = False

    def data_received(self, data: bytes) -> None:
        """Whole masked text frames at the front of ``data`` go straight to the sink while
        websockets' parser waits between frames with nothing buffered (then it would make
        of them what this does); the rest of ``data`` (a control frame, a partial,
        fragmented, binary, unmasked or oversized frame, text that is not UTF-8, anything
        before the handler attached) goes to websockets, as all of it did before."""
        sink = self.yard_sink
        protocol = self.protocol
        if sink is None or not self.yard_direct:
            self.yard_parser = None
            super().data_received(data)
            return
        parser = getattr(protocol, "parser", None)
        if parser is not self.yard_parser or parser is None:  # it was fed since
            if not _between_frames(protocol):
                super().data_received(data)
                return
            self.yard_parser = parser
        limit = protocol.max_message_size
        end = len(data)
        at = 0
        while end - at >= 6:
            if data[at] != 0x81:  # FIN, no RSV bits, TEXT
                break
            size = data[at + 1] ^ 0x80  # the MASK bit must be set (a client frame)
            if size < 126:
                start = at + 6
            elif size == 126 and end - at >= 8:
                size = (data[at + 2] << 8) | data[at + 3]
                start = at + 8
            else:  # unmasked, a 64-bit length, or a header cut short
                break
            stop = start + size
            if stop > end or (limit is not None and size > limit):
                break
            try:
                text = str(apply_mask(data[start:stop], data[start - 4:start]), "utf-8")
            except UnicodeDecodeError:  # websockets fails the connection (1007)
                break
            at = stop
            self.yard_fast_frames += 1
            sink(text)
            if self.yard_sink is not sink or not self.yard_direct:
                break
        if at < end:
            self.yard_parser = None  # to be checked again next time
            super().data_received(data[at:] if at else data)

    def process_event(self, event: Event) -> None:
        if type(event) is Frame and event.opcode in DATA_OPCODES:
            if self.yard_direct and event.fin and event.opcode is not Opcode.CONT:
                data: str | bytes
                if event.opcode is Opcode.TEXT:
                    try:
                        data = str(event.data, "utf-8")
                    except UnicodeDecodeError:  # websockets fails the connection (1007)
                        self.yard_direct = False
                        super().process_event(event)
                        return
                else:
                    data = bytes(event.data)
                if self.yard_sink is not None:
                    self.yard_sink(data)
                elif self.yard_pending is None:
                    self.yard_pending = [data]
                else:
                    self.yard_pending.append(data)
                return
            self.yard_direct = False  # a fragmented message: websockets assembles it
        super().process_event(event)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self.yard_address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        self.yard_refusal = self.gate.admit(self.yard_address)
        super().connection_made(transport)
        if self.yard_refusal is not None:
            self.gate.refused += 1
            if self.gate.hopeless() and isinstance(transport, asyncio.WriteTransport):
                transport.abort()  # no 503 either: keep descriptors for real clients

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.gate.release(self.yard_address)
        self.gate.fast_frames += self.yard_fast_frames
        self.yard_fast_frames = 0


_PARSE_CODE = getattr(getattr(WsProtocol, "parse", None), "__code__", None)
_AT_EOF_CODE = getattr(getattr(StreamReader, "at_eof", None), "__code__", None)


def _between_frames(protocol: WsProtocol) -> bool:
    """websockets' parser waits for the next frame with nothing buffered (not in the
    middle of one, not discarding after a close frame or a failure)."""
    # Attributes of websockets' sans-I/O Protocol (14 to 17); any other layout: False,
    # and every frame takes websockets' own path.
    reader = getattr(protocol, "reader", None)
    if (getattr(reader, "buffer", True) or getattr(protocol, "current_size", 0) is not None
            or _PARSE_CODE is None or _AT_EOF_CODE is None):
        return False
    generator: Any = getattr(protocol, "parser", None)  # ServerProtocol.parse() delegates
    for _ in range(4):
        code = getattr(generator, "gi_code", None)
        if code is None:
            return False
        generator = generator.gi_yieldfrom
        if code is _PARSE_CODE:
            return getattr(generator, "gi_code", None) is _AT_EOF_CODE
    return False


def _text_header(size: int) -> bytes:
    """The header of an unmasked, unfragmented server text frame of ``size`` bytes
    (RFC 6455 section 5.2), as websockets writes it without extensions."""
    if size < 126:
        return _SHORT_HEADERS[size]
    if size < 1 << 16:
        return _pack_medium(0x81, 126, size)
    return _pack_long(0x81, 127, size)


_SHORT_HEADERS = tuple(bytes((0x81, size)) for size in range(126))
_pack_medium = struct.Struct("!BBH").pack
_pack_long = struct.Struct("!BBQ").pack


def _refusal(text: str) -> Response:
    body = (text + "\n").encode()
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"),
                       ("Content-Length", str(len(body))), ("Connection", "close"),
                       ("Retry-After", "5")])
    status = http.HTTPStatus.SERVICE_UNAVAILABLE
    return Response(status.value, status.phrase, headers, body)


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
        self._outboxes: dict[int, _Outbox] = {}
        self._sockets: dict[int, ServerConnection] = {}
        self._wake = asyncio.Event()
        self._dirty: list[_Outbox] = []
        self._flush_due = False
        self._timer: asyncio.Task[None] | None = None
        self._saves: set[asyncio.Task[None]] = set()
        self._to_store: list[Finished] = []
        self._writer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._gate = _Gate(config)
        self._previous_handler: Any = None
        self.games_saved = 0
        #: Games that could not be stored (each kept in :attr:`fallback_path` if set).
        self.store_failures = 0
        #: Where a game that cannot be stored is appended (one JSON record per line, as
        #: ``yard export --what records`` writes them; ``yard import`` reads it).
        self.fallback_path: Path | None = None
        #: Clients disconnected for not reading their messages.
        self.overflows = 0
        #: Answers plain HTTP requests on the same port (``server.web.http.WebApp``).
        self.process_request: Callable[[ServerConnection, Request],
                                       Awaitable[Response | None]] | None = None

    @property
    def port_number(self) -> int:
        """The port listened on (the real one after ``port=0``)."""
        return int(self.url.rsplit(":", 1)[1]) if self.url else self.port

    @property
    def queued_bytes(self) -> int:
        """Bytes of messages waiting in every connection's outbox (at most
        ``max_send_bytes`` each)."""
        return sum(outbox.bytes + outbox.direct for outbox in self._outboxes.values())

    @property
    def fast_frames(self) -> int:
        """Client frames parsed by the server's own fast path (whole masked text frames at
        a read's start; everything else goes through websockets' parser)."""
        return self._gate.fast_frames + sum(
            ws.yard_fast_frames for ws in self._sockets.values()
            if isinstance(ws, _GatedConnection))

    @property
    def open_sockets(self) -> int:
        """Sockets open now (websocket, HTTP, or still in their handshake)."""
        return self._gate.total

    async def start(self) -> str:
        """Start listening; returns ``ws://HOST:PORT`` with the real port."""
        config = self.core.config
        gated = type("GatedConnection", (_GatedConnection,), {"gate": self._gate})
        self._server = await serve(
            self._handle, self.host, self.port, compression=None,
            max_size=config.max_size * FRAME_SLACK, process_request=self._process_request,
            create_connection=gated, open_timeout=max(config.hello_timeout_s, 0.1),
            close_timeout=CLOSE_TIMEOUT_S)
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
        if self._saves:
            await asyncio.gather(*self._saves, return_exceptions=True)
        for outbox in self._outboxes.values():
            outbox.close(_CloseMarker(SHUTDOWN_REASON))
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            if loop.get_exception_handler() == self._loop_exception:
                loop.set_exception_handler(self._previous_handler)

    # ------------------------------------------------------------------ connections

    async def _process_request(self, connection: ServerConnection, request: Request
                               ) -> Response | None:
        refusal = getattr(connection, "yard_refusal", None)
        if refusal is not None:
            return _refusal(refusal)
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
        conn = self.core.connect(time.monotonic())
        outbox = _Outbox(self.core.config.max_send_bytes, ws)
        self._outboxes[conn] = outbox
        self._sockets[conn] = ws
        writer = asyncio.create_task(self._write(ws, outbox))
        timer = asyncio.get_running_loop().call_later(
            self.core.config.hello_timeout_s, self._hello_due, conn)
        if isinstance(ws, _GatedConnection):
            ws.attach(lambda data: self._apply(self.core.receive(conn, data, time.monotonic())))
        try:
            await self._read(ws, conn)
        finally:
            if isinstance(ws, _GatedConnection):
                ws.detach()
            timer.cancel()
            self._outboxes.pop(conn, None)
            self._sockets.pop(conn, None)
            self._apply(self.core.disconnect(conn, time.monotonic()))
            outbox.close(_CloseMarker("connection closed"))
            if outbox.overflowed:
                writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    def _hello_due(self, conn: int) -> None:
        state = self.core.conns.get(conn)
        outbox = self._outboxes.get(conn)
        if state is not None and state.session is None and outbox is not None:
            seconds = self.core.config.hello_timeout_s
            outbox.close(_CloseMarker(f"no hello within {seconds:g} s", 1008))

    async def _read(self, ws: ServerConnection, conn: int) -> None:
        try:
            async for frame in ws:
                self._apply(self.core.receive(conn, frame, time.monotonic()))
        except PayloadTooBig as exc:
            self._apply(self.core.violation(conn, ErrorCode.TOO_LARGE, str(exc),
                                            time.monotonic()))
        except ConnectionClosed:
            pass

    async def _write(self, ws: ServerConnection, outbox: _Outbox) -> None:
        try:
            while True:
                item = await outbox.get()
                if isinstance(item, _CloseMarker):
                    await ws.close(item.code, item.reason[:120])
                    return
                await ws.send(item, text=True)
        except ConnectionClosed:
            return

    def _overflow(self, conn: int, outbox: _Outbox) -> None:
        """``conn`` has ``max_send_bytes`` waiting: it is not reading. Drop it."""
        self.overflows += 1
        log.warning("connection %d: more than %d bytes unread; disconnected", conn,
                    outbox.limit)
        # Gone for the core now (its session's games start their grace period, logged),
        # not when the socket is finally closed: nothing addressed to it from here on
        # is in the games' rebuilt messages. What was waiting in its buffer (dropped
        # unwritten) still is.
        self.core.disconnect(conn, time.monotonic())
        ws = self._sockets.get(conn)
        if ws is not None:
            task = asyncio.create_task(self._drop(ws, outbox.limit))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _drop(self, ws: ServerConnection, limit: int) -> None:
        try:
            async with asyncio.timeout(OVERFLOW_CLOSE_S):
                await ws.close(1008, f"send buffer full ({limit} bytes unread): not reading")
        except (TimeoutError, ConnectionClosed):
            pass
        finally:
            ws.transport.abort()

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
                outbox = self._outboxes.get(output.conn)
                if outbox is not None:
                    outbox.close(_CloseMarker(output.reason, output.code))
            elif isinstance(output, Finished):
                self._queue_store(output)
        if self.core.rearm:  # a deadline earlier than the one the timer sleeps until
            self._wake.set()

    def _send(self, conn: int, text: bytes) -> None:
        outbox = self._outboxes.get(conn)
        if outbox is None:
            return
        if not outbox.items and outbox.closing is None and not outbox.overflowed:
            # Framed and written at the end of this loop tick (one write per connection),
            # or queued then if the transport cannot take it (see _flush).
            if not outbox.reserve(len(text)):
                self._overflow(conn, outbox)
                return
            if not outbox.texts:
                self._dirty.append(outbox)
                if not self._flush_due:
                    self._flush_due = True
                    asyncio.get_running_loop().call_soon(self._flush)
            outbox.texts.append(text)
            return
        if not outbox.put(text):
            self._overflow(conn, outbox)

    def _flush(self) -> None:
        """Write each connection's messages of this loop tick, framed, in one
        ``transport.write``; a connection whose transport is paused (its client reads
        slowly) gets them queued for its writer task instead."""
        self._flush_due = False
        dirty, self._dirty = self._dirty, []
        header = _text_header
        for outbox in dirty:
            outbox.direct = 0
            texts, outbox.texts = outbox.texts, []
            ws = outbox.ws
            if ws is None:
                continue
            protocol = ws.protocol
            writes = protocol.data_to_send()  # websockets' own, if any (it sends at once)
            if ws.transport.is_closing():
                continue
            if protocol.state is State.OPEN:  # else closing meanwhile: messages dropped
                if ws.paused or protocol.extensions:
                    outbox.requeue(texts)
                else:
                    for text in texts:
                        writes += (header(len(text)), text)
            if b"" in writes:  # an end-of-stream marker: websockets writes it its own way
                protocol.writes[:0] = writes
                ws.send_data()
            elif writes:
                ws.transport.write(b"".join(writes))

    def _queue_store(self, finished: Finished) -> None:
        """Hand a finished game to the writer task (a thread does the writing, so a slow
        database never stalls play); games that finish while it writes go in its next
        batch, one transaction. Results go out only once their game is committed."""
        self._to_store.append(finished)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_batches())
            self._saves.add(self._writer)
            self._writer.add_done_callback(self._saves.discard)

    async def _write_batches(self) -> None:
        try:
            while self._to_store:
                batch = self._to_store[:STORE_BATCH]
                del self._to_store[:STORE_BATCH]
                if len(batch) > 1 and await self._save_batch([f.record for f in batch]):
                    for finished in batch:
                        self.games_saved += 1
                        if finished.notify is not None:
                            self._send(finished.notify, encode_bytes(finished.result))
                    continue
                for finished in batch:  # one by one: retries, fallback file, errors
                    await self._store(finished)
        finally:
            self._writer = None

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
                    self._send(finished.notify, encode_bytes(Error(
                        ErrorCode.STORE_FAILED, f"game {record.game_id} finished but was not "
                        f"stored ({problem[:200]}); {where}", record.game_id)))
                return
            self.games_saved += 1
        if finished.notify is not None:
            self._send(finished.notify, encode_bytes(finished.result))

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
            from db.portable import to_line

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
