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

Frame headers and every use of websockets' internals are in :mod:`protocol.wsframes`,
shared with the server's fast path (:mod:`server.frames`); when that module finds
websockets' internals not as checked, :meth:`~DirectClientConnection.attach` and
:meth:`~DirectClientConnection.send_text_now` decline and websockets does everything.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

from protocol import wsframes
from protocol.wsframes import (
    CONTROL_FRAMES,
    TEXT_FRAME,
    apply_mask,
    between_frames,
    masked_text_header,
    read_header,
    write_now,
)

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
        now on; ``False`` (and nothing changes) unless the connection is open, nothing
        has arrived since the handshake and websockets' internals are as the fast path
        expects (:data:`protocol.wsframes.FAST_PATH`). ``sink`` must not raise."""
        if (not wsframes.FAST_PATH or self.protocol.state is not State.OPEN
                or not between_frames(self.protocol)):
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
        """Parse ``data`` here after :meth:`attach` (see the module docstring), else hand
        it to websockets."""
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
        """Deliver the frames of ``data`` (to the sink, control frames to websockets) until
        one is cut short (kept for the next read) or websockets takes it and all that
        follows."""
        pos = 0
        size = len(data)
        sink = self._sink
        while pos < size:
            if self.protocol.state is not State.OPEN:  # closing: websockets drops the rest
                self._give_up(data, pos)
                return
            head = read_header(data, pos)
            if isinstance(head, int):  # the header is cut short
                self._wait(data, pos, head)
                return
            first, masked, start, length = head
            if (masked or length > self._max_size  # masked by a server, or too big
                    or (first != TEXT_FRAME and (first not in CONTROL_FRAMES or length > 125))):
                self._give_up(data, pos)  # binary, fragmented, reserved bits or opcodes
                return
            end = start + length
            if end > size:
                self._wait(data, pos, end - pos)
                return
            if first != TEXT_FRAME:  # close, ping, pong: websockets answers
                self.passed_frames += 1
                super().data_received(data[pos:end])
            else:
                try:
                    text = data[start:end].decode()
                except UnicodeDecodeError:  # websockets fails the connection (1007)
                    self._give_up(data, pos)
                    return
                self.direct_frames += 1
                sink(text)
            pos = end

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
        payload = text.encode()
        mask = self._mask()
        return write_now(self, masked_text_header(len(payload)) + mask
                         + apply_mask(payload, mask))

    def _mask(self) -> bytes:
        at = self._mask_at
        if at + 4 > len(self._masks):
            self._masks, at = os.urandom(_MASK_POOL), 0
        self._mask_at = at + 4
        return self._masks[at:at + 4]
