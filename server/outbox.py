"""What goes out to each connection: its outbox, and the write at the end of a loop tick.

Messages are encoded once by the caller (a broadcast's bytes go to every recipient) and,
while the connection's transport is not paused, framed straight into it and written once
per connection per loop tick (:meth:`Outboxes.flush`); otherwise they wait in a bounded
:class:`Outbox` drained by a writer task (:func:`drain`), so a slow client never blocks
another, and one that does not read at all overflows once ``limit`` bytes are waiting for
it (the owner drops it: :func:`drop`).

>>> close_code(SHUTDOWN_REASON), close_code("protocol violation"), close_code("bye")
(1001, 1008, 1000)
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol.wsframes import write_texts

SHUTDOWN_REASON = "server shutting down"
OVERFLOW_CLOSE_S = 1.0
"""Seconds a client over its send buffer gets for the close frame before it is dropped."""


def close_code(reason: str) -> int:
    """1001 (going away) on shutdown, 1008 (policy) for violations, else 1000."""
    if reason == SHUTDOWN_REASON:
        return 1001
    return 1008 if "violation" in reason else 1000


class CloseMarker:
    """Close the connection (after what was queued before) with ``code`` and ``reason``."""

    def __init__(self, reason: str, code: int | None = None) -> None:
        """Close for ``reason`` (``code``: its close code, by default the reason's)."""
        self.reason = reason
        self.code = close_code(reason) if code is None else code


class Outbox:
    """Frames waiting for one connection's writer, at most ``limit`` bytes of them."""

    def __init__(self, limit: int, ws: ServerConnection | None = None) -> None:
        """An empty outbox of at most ``limit`` bytes for ``ws``."""
        self.limit = limit
        #: The connection the frames go to.
        self.ws = ws
        self.items: deque[bytes] = deque()
        self.bytes = 0
        #: Bytes to be framed straight into the transport at the end of this loop tick
        #: (:meth:`Outboxes.flush`): they count against ``limit`` as queued ones do.
        self.direct = 0
        #: Those messages, in order.
        self.texts: list[bytes] = []
        self.closing: CloseMarker | None = None
        self.overflowed = False
        self.ready = asyncio.Event()

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

    def close(self, marker: CloseMarker) -> None:
        """Close after the frames already queued."""
        if self.closing is None:
            self.closing = marker
            self.ready.set()

    async def get(self) -> bytes | CloseMarker:
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


class Outboxes:
    """Every open connection's :class:`Outbox` by connection id, and the messages sent to
    them in this loop tick. ``overflow(conn, outbox)`` is called when a message would take
    ``conn`` past its limit (the message is dropped)."""

    def __init__(self, overflow: Callable[[int, Outbox], None]) -> None:
        """No outboxes yet; ``overflow`` is called with one that goes over its limit."""
        self.by_conn: dict[int, Outbox] = {}
        self._overflow = overflow
        self._dirty: list[Outbox] = []
        self._flush_due = False

    def send(self, conn: int, text: bytes) -> None:
        """Send ``text`` (one encoded message) to ``conn`` if it is still open."""
        outbox = self.by_conn.get(conn)
        if outbox is None:
            return
        if not outbox.items and outbox.closing is None and not outbox.overflowed:
            # Framed and written at the end of this loop tick (one write per connection),
            # or queued then if the transport cannot take it (see flush).
            if not outbox.reserve(len(text)):
                self._overflow(conn, outbox)
                return
            if not outbox.texts:
                self._dirty.append(outbox)
                if not self._flush_due:
                    self._flush_due = True
                    asyncio.get_running_loop().call_soon(self.flush)
            outbox.texts.append(text)
            return
        if not outbox.put(text):
            self._overflow(conn, outbox)

    def flush(self) -> None:
        """Write each connection's messages of this loop tick, framed, in one
        ``transport.write``; a connection whose transport is paused (its client reads
        slowly) gets them queued for its writer task instead."""
        self._flush_due = False
        dirty, self._dirty = self._dirty, []
        for outbox in dirty:
            outbox.direct = 0
            texts, outbox.texts = outbox.texts, []
            if outbox.ws is not None and not write_texts(outbox.ws, texts):
                outbox.requeue(texts)

    @property
    def queued_bytes(self) -> int:
        """Bytes of messages waiting in every outbox (at most its limit each)."""
        return sum(outbox.bytes + outbox.direct for outbox in self.by_conn.values())


async def drain(ws: ServerConnection, outbox: Outbox) -> None:
    """The writer task of ``ws``: send what waits in ``outbox``, then close as it says."""
    try:
        while True:
            item = await outbox.get()
            if isinstance(item, CloseMarker):
                # A close frame holds at most 123 bytes of reason (UTF-8: a name with
                # non-ASCII letters in it takes more bytes than characters).
                reason = item.reason.encode()[:120].decode(errors="ignore")
                await ws.close(item.code, reason)
                return
            await ws.send(item, text=True)
    except ConnectionClosed:
        return


async def drop(ws: ServerConnection, limit: int) -> None:
    """Close ``ws``, whose client does not read (``limit`` bytes waited for it): a close
    frame if it goes out within :data:`OVERFLOW_CLOSE_S`, then the socket is aborted."""
    try:
        async with asyncio.timeout(OVERFLOW_CLOSE_S):
            await ws.close(1008, f"send buffer full ({limit} bytes unread): not reading")
    except (TimeoutError, ConnectionClosed):
        pass
    finally:
        ws.transport.abort()
