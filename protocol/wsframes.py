r"""Websocket frames by hand for the two fast paths, and the one door to websockets' internals.

The bot client (:mod:`bots.fastws`) and the match server (:mod:`server.frames`,
:mod:`server.outbox`) read and write whole text frames themselves where websockets' general
path costs too much per message. What they share lives here:

* :func:`read_header` reads a frame header (RFC 6455 section 5.2) at a position of a read;
  :func:`text_header` and :func:`masked_text_header` write the header of a text frame (a
  server's, a client's);
* every websockets attribute or method the fast paths use that is not websockets' public
  API is used through a function here (:func:`between_frames`, :func:`frame_limit`,
  :func:`write_now`, :func:`write_texts`) or named in :data:`INTERNALS`, and checked once,
  at import, against the installed websockets (:func:`problems`).

:data:`FAST_PATH` says whether that check passed. If it did not (another websockets version
than :data:`CHECKED_VERSIONS`, or an internal missing or of another shape), the fast paths
stay off and every frame takes websockets' own path; this is logged once, naming the
version and what is missing. Off rather than a failed import: websockets' own path is
always correct, only slower, and a server or bot that stops working after a websockets
upgrade would be worse than a slower one. ``tests/protocol/test_wsframes.py`` fails loudly
instead, so a maintainer re-checks before the pin in pyproject.toml moves.

>>> read_header(b"\x81\x05hello", 0)
(129, False, 2, 5)
>>> read_header(b"\x81\x7e\x01", 0)  # a 16-bit length cut short: 4 header bytes
4
>>> text_header(5) + b"hello"
b'\x81\x05hello'
"""

from __future__ import annotations

import inspect
import logging
import operator
import struct
from collections.abc import Callable
from typing import Any

from websockets.asyncio.connection import Connection
from websockets.frames import Opcode
from websockets.protocol import Protocol, Side, State
from websockets.streams import StreamReader
from websockets.version import version as websockets_version

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a websockets build without its C extension
    from websockets.utils import apply_mask

__all__ = ["CHECKED_VERSIONS", "CONTROL_FRAMES", "DATA_OPCODES", "FAST_PATH", "INTERNALS",
           "TEXT_FRAME", "apply_mask", "between_frames", "frame_limit", "masked_text_header",
           "parser", "problems", "read_header", "text_header", "write_now", "write_texts"]

log = logging.getLogger(__name__)

CHECKED_VERSIONS = ((17,), (18,))
"""websockets versions (from, up to but not including) the fast paths were checked against:
keep in step with the pin in pyproject.toml."""

TEXT_FRAME = 0x81
"""The first header byte of a whole text frame: FIN, no RSV bits, opcode TEXT."""
CONTROL_FRAMES = frozenset((0x88, 0x89, 0x8A))
"""The first header byte of a close, ping and pong frame (control frames have FIN set)."""
DATA_OPCODES = frozenset((Opcode.CONT, Opcode.TEXT, Opcode.BINARY))
"""The opcodes of data frames (parts of messages)."""

INTERNALS = (
    "Protocol.parse: a generator method, websockets' frame parser",
    "StreamReader.at_eof: a generator method, where parse() waits between frames",
    "Protocol().reader.buffer: a bytearray, the bytes read and not yet parsed",
    "Protocol().parser: the running parse() generator (gi_code, gi_yieldfrom)",
    "Protocol().current_size: None unless inside a fragmented message",
    "Protocol().max_message_size, max_fragment_size: the frame size limits",
    "Protocol().writes: a list of bytes websockets has yet to send",
    "Connection.data_received(data): the asyncio callback both fast paths override",
    "Connection.process_event(event): called once per parsed frame (the server overrides it)",
    "Connection.send_data(): writes Protocol().writes to the transport",
    "Connection.__init__ sets send_in_progress and paused (flow control)",
    "Connection.connection_made sets transport",
)
"""What the fast paths rely on beyond websockets' public API; :func:`problems` checks each."""


# ---------------------------------------------------------------------- frame headers


def read_header(data: bytes, at: int) -> tuple[int, bool, int, int] | int:
    """The header of the frame at ``data[at:]`` as ``(first, masked, start, length)``: its
    first byte (FIN, RSV bits, opcode), whether the MASK bit is set, where the payload
    starts (after the 4-byte masking key of a masked frame; it may lie beyond ``data``, as
    the payload's end may) and its length; or, when ``data`` ends before the length does,
    how many bytes from ``at`` the header takes up to the key (2, 4 or 10). Lengths are
    read as websockets reads them (7, 16 or 64 bits, not necessarily the shortest)."""
    try:
        second = data[at + 1]
    except IndexError:
        return 2
    if second & 0x7F < 126:  # the common case first: a 7-bit length
        if second < 0x80:
            return data[at], False, at + 2, second
        return data[at], True, at + 6, second & 0x7F
    return _read_long_header(data, at, second)


def _read_long_header(data: bytes, at: int, second: int) -> tuple[int, bool, int, int] | int:
    """:func:`read_header` for a 16- or 64-bit length (``second``: the header's 2nd byte)."""
    if second & 0x7F == 126:
        if len(data) - at < 4:
            return 4
        length, start = (data[at + 2] << 8) | data[at + 3], at + 4
    else:
        if len(data) - at < 10:
            return 10
        length, start = int.from_bytes(data[at + 2:at + 10], "big"), at + 10
    if second > 0x7F:
        return data[at], True, start + 4, length
    return data[at], False, start, length


def text_header(size: int) -> bytes:
    """The header of an unmasked, unfragmented text frame of ``size`` bytes (a server's),
    as websockets writes it without extensions."""
    if size < 126:
        return _SHORT_HEADERS[size]
    if size < 1 << 16:
        return _pack_medium(TEXT_FRAME, 126, size)
    return _pack_long(TEXT_FRAME, 127, size)


def masked_text_header(size: int) -> bytes:
    """The header of a masked, unfragmented text frame of ``size`` bytes (a client's),
    the 4-byte masking key not included."""
    if size < 126:
        return _SHORT_MASKED_HEADERS[size]
    if size < 1 << 16:
        return _pack_medium(TEXT_FRAME, 0x80 | 126, size)
    return _pack_long(TEXT_FRAME, 0x80 | 127, size)


_SHORT_HEADERS = tuple(bytes((TEXT_FRAME, size)) for size in range(126))
_SHORT_MASKED_HEADERS = tuple(bytes((TEXT_FRAME, 0x80 | size)) for size in range(126))
_pack_medium = struct.Struct("!BBH").pack
_pack_long = struct.Struct("!BBQ").pack


# ---------------------------------------------------------------- websockets' internals


_PARSE_CODE = getattr(getattr(Protocol, "parse", None), "__code__", None)
_AT_EOF_CODE = getattr(getattr(StreamReader, "at_eof", None), "__code__", None)


parser: Callable[[Protocol], object] = operator.attrgetter("parser")
"""websockets' running frame parser of a protocol (a new one after each failure or close):
the same object between two reads means nothing else fed it meanwhile."""


def between_frames(protocol: Protocol) -> bool:
    """Whether websockets' parser waits for the next frame with nothing buffered (not in
    the middle of one, not inside a fragmented message, not discarding after a close frame
    or a failure): then a whole frame read by hand is what it would have made of it."""
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


def frame_limit(protocol: Protocol) -> int | None:
    """The largest frame websockets accepts from the peer of ``protocol`` outside a
    fragmented message (``None``: no limit)."""
    message, fragment = protocol.max_message_size, protocol.max_fragment_size
    if fragment is not None and (message is None or fragment < message):
        return fragment
    return message


def write_now(connection: Connection, data: bytes) -> bool:
    """Write ``data`` (whole frames) straight to the transport of ``connection``; ``False``
    (nothing written) when it must go through websockets' ``send`` instead: the fast
    path is off, the connection is not open, a fragmented message is being sent, or flow
    control paused writing."""
    if (not FAST_PATH or connection.protocol.state is not State.OPEN
            or connection.send_in_progress is not None or connection.paused
            or connection.transport.is_closing()):
        return False
    connection.transport.write(data)
    return True


def write_texts(connection: Connection, texts: list[bytes]) -> bool:
    """Write what websockets has to send on ``connection``, then ``texts`` (encoded
    messages) as unmasked text frames, in one ``transport.write``. ``False`` (``texts`` not
    written; websockets' own bytes were) when ``texts`` must wait for websockets' ``send``:
    the fast path is off, flow control paused writing, or an extension (compression) is
    on. ``texts`` for a connection that is closing are dropped."""
    if not FAST_PATH:
        return False
    protocol = connection.protocol
    writes = protocol.data_to_send()  # websockets' own, if any (it sends at once)
    if connection.transport.is_closing():
        return True
    written = True
    if protocol.state is State.OPEN:  # else closing meanwhile: texts dropped
        if connection.paused or protocol.extensions:
            written = False
        else:
            for text in texts:
                writes += (text_header(len(text)), text)
    if b"" in writes:  # an end-of-stream marker: websockets writes it its own way
        protocol.writes[:0] = writes
        connection.send_data()
    elif writes:
        connection.transport.write(b"".join(writes))
    return written


# ---------------------------------------------------------------------- the check


def problems() -> list[str]:
    """What is not as the fast paths expect in the installed websockets (empty: all is):
    its version against :data:`CHECKED_VERSIONS`, and each of :data:`INTERNALS`."""
    found = []
    version = _version()
    low, high = CHECKED_VERSIONS
    if not low <= version < high:
        found.append(f"websockets {websockets_version} is not one the fast paths were "
                     f"checked against (>={_dotted(low)},<{_dotted(high)})")
    found += _generator_problems()
    found += _protocol_problems()
    found += _connection_problems()
    return found


def _version() -> tuple[int, ...]:
    parts = []
    for part in websockets_version.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _generator_problems() -> list[str]:
    found = []
    for owner, name in ((Protocol, "parse"), (StreamReader, "at_eof")):
        if not inspect.isgeneratorfunction(getattr(owner, name, None)):
            found.append(f"{owner.__name__}.{name} is not a generator method")
    return found


def _protocol_problems() -> list[str]:
    """Run a sans-I/O server protocol through one frame: between frames before and after
    it, not in the middle, nor inside a fragmented message."""
    try:
        sans = Protocol(Side.SERVER, state=State.OPEN, max_size=(1000, 100))
        shapes = {"reader.buffer": isinstance(sans.reader.buffer, bytearray),
                  "writes": isinstance(sans.writes, list),
                  "current_size": sans.current_size is None,
                  "frame limits": frame_limit(sans) == 100}
        found = [f"Protocol().{name} is not as expected" for name, ok in shapes.items()
                 if not ok]
        idle = between_frames(sans)
        sans.receive_data(b"\x81\x82\x00\x00")  # a masked text frame, its key cut short
        inside = between_frames(sans)
        first = parser(sans)
        sans.receive_data(b"\x00\x00hi")
        after = between_frames(sans) and parser(sans) is first
        sans.receive_data(b"\x01\x80\x00\x00\x00\x00")  # a fragmented message begins
        fragmented = between_frames(sans)
    except Exception as exc:  # any other layout: say what broke
        return [f"a sans-I/O Protocol fails: {type(exc).__name__}: {exc}"]
    if not (idle and after) or inside or fragmented:
        found.append("Protocol().parser's generators are not parse() waiting in at_eof() "
                     f"between frames (idle {idle}, inside a frame {inside}, after it "
                     f"{after}, in a fragmented message {fragmented})")
    return found


def _connection_problems() -> list[str]:
    found = []
    for name, parameters in (("data_received", ["self", "data"]),
                             ("process_event", ["self", "event"]), ("send_data", ["self"])):
        method = getattr(Connection, name, None)
        if method is None or list(inspect.signature(method).parameters) != parameters:
            found.append(f"Connection.{name}({', '.join(parameters[1:])}) is missing or "
                         "takes other parameters")
    for method, names in (("__init__", ("send_in_progress", "paused")),
                          ("connection_made", ("transport",))):
        code = getattr(getattr(Connection, method, None), "__code__", None)
        for name in names:
            if code is None or name not in code.co_names:
                found.append(f"Connection.{method} does not set {name}")
    return found


def _enabled() -> bool:
    found = problems()
    if found:
        log.warning("websockets %s: the fast frame paths are off (every frame takes "
                    "websockets' own path): %s", websockets_version, "; ".join(found))
    return not found


FAST_PATH = _enabled()
"""Whether the fast paths may be used: the installed websockets passed :func:`problems`."""
