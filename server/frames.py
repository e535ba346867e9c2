r"""The server's websocket fast read path: whole masked text frames straight to the core.

In: :class:`DirectConnection` hands whole masked text frames from ``data_received``
straight to a sink, and everything else to websockets. Out: the server's text frames are
framed by :func:`protocol.wsframes.text_header` (``server.outbox`` writes them straight
into the transport). The frame parsing and every use of websockets' internals are in
:mod:`protocol.wsframes`, shared with the bot client's fast path (:mod:`bots.fastws`).

>>> text_header(5) + b"hello"
b'\x81\x05hello'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import Event

from protocol import wsframes
from protocol.wsframes import (
    DATA_OPCODES,
    TEXT_FRAME,
    apply_mask,
    between_frames,
    frame_limit,
    read_header,
    text_header,
)

__all__ = ["FRAME_SLACK", "DirectConnection", "text_header"]

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
    so the order of messages is kept either way. Without :data:`protocol.wsframes.FAST_PATH`
    (websockets' internals not as checked) every frame takes websockets' own path.
    """

    yard_sink: Callable[[str | bytes], None] | None = None
    yard_pending: list[str | bytes] | None = None
    #: Frames that took the fast path of :meth:`data_received`.
    yard_fast_frames = 0
    #: websockets' parser generator, while it is known to wait between frames with
    #: nothing buffered (it is fed only by ``super().data_received``, which resets this,
    #: and replaced when the connection fails or closes).
    yard_parser: object = None
    #: The largest frame websockets accepts from the client (read with ``yard_parser``).
    yard_limit: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """A websockets connection, on the fast path when :data:`protocol.wsframes.FAST_PATH`."""
        super().__init__(*args, **kwargs)
        #: Whole data frames go to the sink (False: websockets' path for all of them).
        self.yard_direct = wsframes.FAST_PATH

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
        if sink is None or not self.yard_direct:
            self.yard_parser = None
            super().data_received(data)
            return
        parser = wsframes.parser(self.protocol)
        if parser is not self.yard_parser or parser is None:  # it was fed since
            if not between_frames(self.protocol):
                super().data_received(data)
                return
            self.yard_parser = parser
            self.yard_limit = frame_limit(self.protocol)
        at = self._take_text_frames(data, sink)
        if at < len(data):
            self.yard_parser = None  # to be checked again next time
            super().data_received(data[at:] if at else data)

    def _take_text_frames(self, data: bytes, sink: Callable[[str | bytes], None]) -> int:
        """Hand ``sink`` the whole masked text frames at the front of ``data``, as long as
        it stays attached; where the first frame it did not take starts."""
        limit = self.yard_limit
        end = len(data)
        at = 0
        while at < end and data[at] == TEXT_FRAME:
            head = read_header(data, at)
            if isinstance(head, int):  # the header is cut short
                break
            _, masked, start, size = head
            stop = start + size
            if not masked or stop > end or (limit is not None and size > limit):
                break  # websockets fails an unmasked client frame, drops an oversized one
            try:
                text = str(apply_mask(data[start:stop], data[start - 4:start]), "utf-8")
            except UnicodeDecodeError:  # websockets fails the connection (1007)
                break
            at = stop
            self.yard_fast_frames += 1
            sink(text)
            if self.yard_sink is not sink or not self.yard_direct:
                break
        return at

    def process_event(self, event: Event) -> None:
        """Whole data frames parsed by websockets go to the sink too (or wait for it)."""
        if not (type(event) is Frame and event.opcode in DATA_OPCODES and self.yard_direct):
            super().process_event(event)
        elif event.fin and event.opcode is not Opcode.CONT:
            self._deliver(event)
        else:
            self.yard_direct = False  # a fragmented message: websockets assembles it
            super().process_event(event)

    def _deliver(self, frame: Frame) -> None:
        data: str | bytes
        if frame.opcode is Opcode.TEXT:
            try:
                data = str(frame.data, "utf-8")
            except UnicodeDecodeError:  # websockets fails the connection (1007)
                self.yard_direct = False
                super().process_event(frame)
                return
        else:
            data = bytes(frame.data)
        if self.yard_sink is not None:
            self.yard_sink(data)
        elif self.yard_pending is None:
            self.yard_pending = [data]
        else:
            self.yard_pending.append(data)
