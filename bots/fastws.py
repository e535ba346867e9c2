"""A websockets client connection with a direct path for whole text frames.

:class:`DirectClientConnection` is a :class:`websockets.asyncio.client.ClientConnection`
(use it with ``connect(..., create_connection=DirectClientConnection)``) that, once
:meth:`~DirectClientConnection.attach` gave it a sink, reads the server's frames itself:

* a whole (FIN, unfragmented, no extension bits), unmasked text frame of at most
  ``max_size`` bytes of valid UTF-8 goes straight from ``data_received`` to the sink, in
  order, without websockets' generator parser, message queue and reader-task wake-up;
* a control frame (ping, pong, close) is handed to websockets on its own, as the exact
  bytes it arrived as, so websockets answers pings, acknowledges pongs and runs the close
  handshake as always (websockets' parser only ever sees whole frames, so it stays in
  step);
* anything else (binary or fragmented messages, invalid UTF-8, extension bits, a masked or
  oversized frame, a frame after a close) switches the connection back to websockets for
  good: that frame and every later byte take websockets' own path (``recv`` / ``async
  for``) with its checks and errors, so message order is kept either way.

:meth:`~DirectClientConnection.send_text_now` writes one masked text frame straight to
the transport (a random mask from a pooled ``os.urandom`` and websockets' C
``apply_mask``) when nothing else is in the way (connection open, no fragmented send, the
transport not paused by flow control); otherwise it returns ``False`` and the caller uses
``await send(...)``, which waits for the buffer to drain.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - websockets built without its C extension
    from websockets.utils import apply_mask

__all__ = ["DirectClientConnection"]

_MASK_POOL = 4096
"""Bytes of ``os.urandom`` drawn at once for frame masks (4 per frame)."""


class DirectClientConnection(ClientConnection):
    """A client connection that hands whole text frames to a sink (see the module
    docstring). Until :meth:`attach` it is a plain ``ClientConnection``."""

    #: Whether incoming bytes are parsed here (True after :meth:`attach`, until a frame
    #: needs websockets).
    direct = False
    #: Frames delivered to the sink, and frames handed to websockets (for tests, stats).
    direct_frames = 0
    passed_frames = 0
    _sink: Callable[[str], None]
    _max_size = 0
    _pending: bytearray
    _need = 0
    _masks = b""
    _mask_at = 0

    def attach(self, sink: Callable[[str], None], max_size: int) -> bool:
        """Deliver every whole text frame (of at most ``max_size`` bytes) to ``sink`` from
        now on; ``False`` (and nothing changes) unless the connection is open and nothing
        has arrived since the handshake. ``sink`` must not raise."""
        if self.protocol.state is not State.OPEN or self.protocol.reader.buffer:
            return False
        self._sink = sink
        self._max_size = max_size
        self._pending = bytearray()  # an incomplete frame's bytes
        self._need = 0  # bytes ``_pending`` must reach before parsing is worth trying
        self._masks = b""
        self._mask_at = 0
        self.direct = True
        return True

    # ------------------------------------------------------------------ receiving

    def data_received(self, data: bytes) -> None:
        if not self.direct:
            super().data_received(data)
            return
        if self._pending:
            self._pending += data
            if len(self._pending) < self._need:
                return
            data, self._pending = bytes(self._pending), bytearray()
        self._parse(data)

    def _parse(self, data: bytes) -> None:
        size = len(data)
        pos = 0
        sink = self._sink
        while pos < size:
            if self.protocol.state is not State.OPEN:
                self._give_up(data, pos)
                return
            if size - pos < 2:
                self._wait(data, pos, 2)
                return
            first, second = data[pos], data[pos + 1]
            length = second & 0x7F
            head = 2
            if length == 126:
                head = 4
                if size - pos < head:
                    self._wait(data, pos, head)
                    return
                length = int.from_bytes(data[pos + 2:pos + 4], "big")
            elif length == 127:
                head = 10
                if size - pos < head:
                    self._wait(data, pos, head)
                    return
                length = int.from_bytes(data[pos + 2:pos + 10], "big")
            if second & 0x80 or length > self._max_size:  # masked by a server, or too big
                self._give_up(data, pos)
                return
            end = pos + head + length
            if first == 0x81:  # FIN, no RSV bits, text
                if end > size:
                    self._wait(data, pos, head + length)
                    return
                try:
                    text = data[pos + head:end].decode()
                except UnicodeDecodeError:  # websockets fails the connection (1007)
                    self._give_up(data, pos)
                    return
                pos = end
                self.direct_frames += 1
                sink(text)
            elif first in (0x88, 0x89, 0x8A) and length <= 125:  # close, ping, pong
                if end > size:
                    self._wait(data, pos, head + length)
                    return
                self.passed_frames += 1
                super().data_received(data[pos:end])
                pos = end
            else:  # binary, fragmented, reserved bits or opcodes: websockets decides
                self._give_up(data, pos)
                return

    def _wait(self, data: bytes, pos: int, need: int) -> None:
        """Keep the incomplete frame at ``pos``; parse again once ``need`` bytes of it
        have arrived."""
        self._pending = bytearray(data[pos:])
        self._need = need

    def _give_up(self, data: bytes, pos: int) -> None:
        """Hand the frame at ``pos`` and everything after it to websockets, for good."""
        self.direct = False
        self._pending = bytearray()
        if pos < len(data):
            self.passed_frames += 1
            super().data_received(data[pos:])

    # ------------------------------------------------------------------ sending

    def send_text_now(self, text: str) -> bool:
        """Write ``text`` as one masked text frame now; ``False`` (nothing written) when it
        must go through ``await send(text)`` instead: the connection is not open, a
        fragmented message is being sent, or flow control paused writing."""
        transport = self.transport
        if (self.protocol.state is not State.OPEN or self.send_in_progress is not None
                or self.paused or transport.is_closing()):
            return False
        payload = text.encode()
        size = len(payload)
        if size < 126:
            header = bytes((0x81, 0x80 | size))
        elif size < 1 << 16:
            header = b"\x81\xfe" + size.to_bytes(2, "big")
        else:
            header = b"\x81\xff" + size.to_bytes(8, "big")
        mask = self._mask()
        transport.write(header + mask + apply_mask(payload, mask))
        return True

    def _mask(self) -> bytes:
        at = self._mask_at
        if at + 4 > len(self._masks):
            self._masks, at = os.urandom(_MASK_POOL), 0
        self._mask_at = at + 4
        return self._masks[at:at + 4]
