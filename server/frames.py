"""Websocket frames by hand, where websockets' general path costs too much per message.

In: :class:`DirectConnection` hands whole masked text frames from ``data_received``
straight to a sink, and everything else to websockets. Out: :func:`text_header` frames
the server's text messages (``server.outbox`` writes them straight into the transport).

>>> text_header(5) + b"hello"
b'\\x81\\x05hello'
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import DATA_OPCODES, Frame, Opcode
from websockets.protocol import Event
from websockets.protocol import Protocol as WsProtocol
from websockets.streams import StreamReader

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a websockets build without its C extension
    from websockets.utils import apply_mask

FRAME_SLACK = 4
"""websockets drops frames above ``FRAME_SLACK * max_size`` outright; smaller oversized
frames reach the codec and get a structured ``too_large`` error."""


class DirectConnection(ServerConnection):
    """A websockets server connection that reads whole client text frames itself.

    Whole (unfragmented) data frames go straight from ``data_received`` to the sink the
    handler attaches (:meth:`attach`), in order, without websockets' message queue and a
    reader task wake-up per frame; frames that arrive before the handler attaches wait in
    a list. Once a client sends a fragmented message (or a text frame that is not UTF-8),
    that frame and all later ones take websockets' own path (the handler's reader loop),
    so the order of messages is kept either way.
    """

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
            if not between_frames(protocol):
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


_PARSE_CODE = getattr(getattr(WsProtocol, "parse", None), "__code__", None)
_AT_EOF_CODE = getattr(getattr(StreamReader, "at_eof", None), "__code__", None)


def between_frames(protocol: WsProtocol) -> bool:
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


def text_header(size: int) -> bytes:
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
