"""The fast paths' shared frame code and their door to websockets' internals
(protocol/wsframes.py), against the installed websockets.

If a test here fails after a websockets upgrade, the fast paths (bots/fastws.py,
server/frames.py, server/outbox.py) are off in that install (every frame takes websockets'
own path, logged once). To move to the new version: read each of
``protocol.wsframes.INTERNALS`` in the new websockets' source (asyncio/connection.py,
protocol.py, streams.py, frames.py), adapt protocol/wsframes.py, run tests/test_fastws.py
and tests/test_frame_fast_path.py, then move ``CHECKED_VERSIONS`` and the websockets pin in
pyproject.toml together.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import tomllib
from collections.abc import Generator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import ServerConnection, serve
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader
from websockets.uri import parse_uri
from websockets.version import version as installed

from protocol import wsframes
from protocol.wsframes import (
    CHECKED_VERSIONS,
    INTERNALS,
    between_frames,
    masked_text_header,
    problems,
    read_header,
    text_header,
)

RECHECK = (
    "re-check every entry of protocol.wsframes.INTERNALS against the new websockets "
    "source, adapt protocol/wsframes.py, run tests/test_fastws.py and "
    "tests/test_frame_fast_path.py, then move CHECKED_VERSIONS and the pin in "
    "pyproject.toml together (the fast paths are off until then)")
KEY = b"\x37\xfa\x21\x3d"


def test_the_installed_websockets_is_one_the_fast_paths_were_checked_against() -> None:
    low, high = CHECKED_VERSIONS
    assert low <= wsframes._version() < high, (
        f"websockets {installed} is installed; the fast paths were checked against "
        f"{low} <= version < {high}: {RECHECK}")


def test_the_websockets_pin_is_the_checked_range() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    pins = [d for d in project["project"]["dependencies"] if re.match(r"websockets\b", d)]
    low, high = CHECKED_VERSIONS
    assert pins == [f"websockets>={wsframes._dotted(low)},<{wsframes._dotted(high)}"], (
        f"pyproject.toml pins {pins}; protocol.wsframes.CHECKED_VERSIONS is {low}..{high}: "
        "keep them in step")


def test_every_internal_the_fast_paths_use_is_there_with_its_shape() -> None:
    found = problems()
    assert not found, (f"websockets {installed} differs from what the fast paths rely on: "
                       f"{found}; {RECHECK}")
    assert wsframes.FAST_PATH


async def test_real_connections_have_the_attributes_the_fast_paths_use() -> None:
    """What the check at import reads from the code, on live connections of both sides."""
    seen: list[Connection] = []
    done = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        seen.append(ws)
        await done.wait()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", proxy=None) as client:
            await client.send("x")
            while not seen:
                await asyncio.sleep(0.001)
            for conn in (client, seen[0]):
                assert conn.send_in_progress is None and conn.paused is False, INTERNALS
                assert isinstance(conn.transport, asyncio.Transport), INTERNALS
                assert isinstance(conn.protocol.writes, list), INTERNALS
            # Both sides parse after the handshake; the server's parser has one frame in.
            assert between_frames(client.protocol)
            assert between_frames(seen[0].protocol)
            done.set()


HANDSHAKE = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def _open_server() -> ServerProtocol:
    sans = ServerProtocol()
    sans.receive_data(HANDSHAKE)
    request = sans.events_received()[0]
    sans.send_response(sans.accept(request))  # type: ignore[arg-type]
    assert sans.state is State.OPEN
    return sans


def test_between_frames_follows_websockets_parser() -> None:
    """A server protocol after its handshake: waiting between frames, not inside one, not
    inside a fragmented message, not after a close or a failure."""
    sans = _open_server()
    assert between_frames(sans)
    whole = frame(Opcode.TEXT, b"hello", mask=True)
    for cut in range(1, len(whole)):
        sans.receive_data(whole[:cut])
        assert not between_frames(sans), cut
        sans.receive_data(whole[cut:])
        assert between_frames(sans), cut
    sans.receive_data(frame(Opcode.TEXT, b"a", fin=False, mask=True))
    assert not between_frames(sans)
    sans.receive_data(frame(Opcode.CONT, b"b", mask=True))
    assert between_frames(sans)
    sans.receive_data(frame(Opcode.TEXT, b"unmasked"))  # websockets fails the connection
    assert not between_frames(sans)
    closed = _open_server()
    closed.receive_data(frame(Opcode.CLOSE, b"\x03\xe8", mask=True))
    assert not between_frames(closed)
    client = ClientProtocol(parse_uri("ws://x/"), state=State.OPEN)
    assert between_frames(client)


def test_the_check_names_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version, a method with another signature, a parser laid out otherwise:
    each is named (and would turn the fast paths off at import)."""
    monkeypatch.setattr(wsframes, "websockets_version", "18.0")
    monkeypatch.setattr(Connection, "process_event", lambda self, event, extra: None)
    monkeypatch.setattr(StreamReader, "at_eof", lambda self: False)
    found = " | ".join(problems())
    assert "websockets 18.0 is not one" in found
    assert "Connection.process_event(event)" in found
    assert "StreamReader.at_eof is not a generator" in found
    assert "Protocol().parser" in found or "a sans-I/O Protocol fails" in found


# ------------------------------------------------------------- headers vs websockets


def frame(opcode: Opcode, payload: bytes, *, fin: bool = True, rsv: int = 0,
          mask: bool = False, form: int | None = None) -> bytes:
    """One frame; ``form`` 0, 1 or 2: a 7-, 16- or 64-bit length (shortest by default)."""
    size = len(payload)
    if form is None:
        form = 0 if size < 126 else 1 if size < 1 << 16 else 2
    bit = 0x80 if mask else 0
    head = bytes(((0x80 if fin else 0) | rsv << 4 | opcode,))
    head += (bytes((bit | size,)) if form == 0
             else bytes((bit | 126,)) + size.to_bytes(2, "big") if form == 1
             else bytes((bit | 127,)) + size.to_bytes(8, "big"))
    if not mask:
        return head + payload
    return head + KEY + bytes(b ^ KEY[i % 4] for i, b in enumerate(payload))


FRAMES = [
    (opcode, payload, fin, rsv, mask, form)
    for opcode, payload, fin in [(Opcode.TEXT, b'{"type":"move"}', True),
                                 (Opcode.BINARY, b"\x00\xff" * 40, True),
                                 (Opcode.PING, b"p", True), (Opcode.PONG, b"", True),
                                 (Opcode.CLOSE, b"\x03\xe8bye", True),
                                 (Opcode.TEXT, "é".encode() * 100, False),
                                 (Opcode.CONT, b"rest", True), (Opcode.TEXT, b"", True),
                                 (Opcode.TEXT, b"x" * 125, True),
                                 (Opcode.TEXT, b"y" * 126, True),
                                 (Opcode.BINARY, b"z" * 65535, True),
                                 (Opcode.TEXT, b"w" * 65536, True)]
    for mask in (False, True)
    for form in (None, 2)
    for rsv in (0, 4)
]


def _websockets_parse(data: bytes, mask: bool) -> tuple[Frame, int]:
    """The frame websockets' own parser reads from ``data``, and the bytes it took."""
    reader = StreamReader()
    reader.feed_data(data)
    parser: Generator[None, None, Frame] = Frame.parse(
        reader.read_exact, mask=mask, max_size=None, extensions=None)
    try:
        next(parser)
    except StopIteration as stop:
        return stop.value, len(data) - len(reader.buffer)
    raise AssertionError("websockets wants more bytes")


@pytest.mark.parametrize("case", range(len(FRAMES)), ids=[
    f"{o.name}-{len(p)}{'' if f else '-nofin'}{'-rsv' if r else ''}{'-masked' if m else ''}"
    f"{'-64bit' if form == 2 else ''}" for o, p, f, r, m, form in FRAMES])
def test_read_header_reads_what_websockets_reads(case: int) -> None:
    """Text, binary, ping, pong, close, fragmented, masked and not, 7/16/64-bit lengths
    (the 64-bit form also for short payloads), a reserved bit; after other bytes and
    before more; every prefix of the frame either asks for more header bytes or says
    where the payload ends (beyond the prefix)."""
    opcode, payload, fin, rsv, mask, form = FRAMES[case]
    raw = frame(opcode, payload, fin=fin, rsv=rsv, mask=mask, form=form)
    if rsv == 0:  # websockets refuses reserved bits without an extension
        parsed, taken = _websockets_parse(raw + b"\x81\x00", mask)
        assert taken == len(raw)
        assert (parsed.opcode, parsed.fin, bytes(parsed.data)) == (opcode, fin, payload)
    stream = b"junk" + raw + b"\x81\x00"
    head = read_header(stream, 4)
    assert not isinstance(head, int)
    first, masked, start, length = head
    assert (first & 0x0F, bool(first & 0x80), first >> 4 & 0x07) == (opcode, fin, rsv)
    assert (masked, length, start + length) == (mask, len(payload), 4 + len(raw))
    body = stream[start:start + length]
    if mask:
        body = wsframes.apply_mask(body, stream[start - 4:start])
    assert body == payload
    for cut in itertools.chain(range(min(len(raw), 20)), [len(raw) - 1]):
        part = read_header(raw[:cut], 0)
        if isinstance(part, int):
            assert cut < part <= 10
        else:
            assert part[2] + part[3] > cut and part[:2] == (first, masked)


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70_000])
def test_headers_are_what_websockets_writes(size: int) -> None:
    payload = b"a" * size
    assert text_header(size) + payload == Frame(Opcode.TEXT, payload).serialize(mask=False)
    masked = Frame(Opcode.TEXT, payload).serialize(mask=True)  # a random key
    head = masked_text_header(size)
    assert masked.startswith(head) and len(masked) == len(head) + 4 + size
