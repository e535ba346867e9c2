"""The server's inline frame parser (``server.frames.DirectConnection.data_received``)
against websockets' own: the same bytes, cut into reads at any points, give the client the
same frames either way, including hostile input (frames split anywhere, several per read,
pings and closes in between, binary, unmasked, oversized, fragmented, not UTF-8, reserved
bits).

A real server on loopback and a raw RFC 6455 client over a real socket: after ``hello``
the test hands the server-side connection its reads directly (``data_received`` with chosen
boundaries; websockets' path is ``ServerConnection.data_received``), and the client reads
what the server sent back over the socket.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import random
import socket
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection

from protocol import StartMatch, TimeControl
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from server.frames import FRAME_SLACK, DirectConnection

MAX_SIZE = 1000
"""The server's frame limit in these tests (websockets drops frames over 4x this)."""
SENTINEL = 424242
"""The nonce of the last ``ping`` of every script: its ``pong`` ends the reading."""
KEY = bytes((0x37, 0xFA, 0x21, 0x3D))


def frame(payload: bytes | str | dict[str, Any], opcode: int = 1, fin: bool = True,
          rsv: int = 0, mask: bool = True, form: int | None = None) -> bytes:
    """One client frame. ``form``: 0 (7-bit), 1 (16-bit) or 2 (64-bit) length."""
    if isinstance(payload, dict):
        payload = json.dumps(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    size = len(payload)
    if form is None:
        form = 0 if size < 126 else 1 if size < 1 << 16 else 2
    bit = 0x80 if mask else 0
    head = bytes(((0x80 if fin else 0) | rsv | opcode,))
    if form == 0:
        head += bytes((bit | size,))
    elif form == 1:
        head += bytes((bit | 126,)) + size.to_bytes(2, "big")
    else:
        head += bytes((bit | 127,)) + size.to_bytes(8, "big")
    if not mask:
        return head + payload
    return head + KEY + bytes(b ^ KEY[i % 4] for i, b in enumerate(payload))


def ping(nonce: int, **extra: Any) -> bytes:
    return frame({"type": "ping", "nonce": nonce, **extra})


END = ping(SENTINEL)

def nested() -> bytes:
    """A binary frame whose payload, as sent (masked), is itself a whole masked text frame:
    read from inside the outer frame, it would be a ping."""
    inner = ping(7)
    return frame(bytes(b ^ KEY[i % 4] for i, b in enumerate(inner)), opcode=2)


SCRIPTS: dict[str, bytes] = {
    "plain frames": b"".join(ping(i) for i in range(6)) + frame({"type": "list_bots"})
    + frame("{not json") + END,
    "control frames between": ping(1) + frame(b"abc", opcode=0x9) + ping(2)
    + frame(b"", opcode=0xA) + ping(3) + frame(b"x" * 125, opcode=0x9) + END,
    "16-bit and 64-bit lengths": ping(1, pad="p" * 300) + ping(2)
    + frame({"type": "ping", "nonce": 3}, form=1) + frame({"type": "ping", "nonce": 4},
                                                             form=2) + ping(5) + END,
    "binary frame": ping(1) + frame(b'{"type": "ping", "nonce": 2}', opcode=2) + ping(3)
    + END,
    "too large for the codec": ping(1) + ping(2, pad="q" * (MAX_SIZE + 10)) + ping(3) + END,
    "too large for websockets": ping(1) + ping(2, pad="r" * (MAX_SIZE * FRAME_SLACK))
    + ping(3) + END,
    "fragmented message": ping(1) + frame('{"type": "ping", ', fin=False)
    + frame(b"x" * 3, opcode=0x9) + frame('"nonce": 2}', opcode=0) + ping(3) + END,
    "not UTF-8": ping(1) + frame(b'{"type": "ping", "nonce": "\xff\xfe"}') + ping(3) + END,
    "unmasked": ping(1) + frame({"type": "ping", "nonce": 2}, mask=False) + END,
    "reserved bit": ping(1) + frame({"type": "ping", "nonce": 2}, rsv=0x40) + END,
    "unknown opcode": ping(1) + frame(b"{}", opcode=0x3) + END,
    "close then more": ping(1) + frame((1000).to_bytes(2, "big") + b"bye", opcode=0x8)
    + ping(2) + END,
    "continuation without start": ping(1) + frame(b"{}", opcode=0) + END,
    "a frame inside a frame": ping(1) + nested() + ping(2) + nested() + END,
    "unmasked last": ping(1) + frame({"type": "ping", "nonce": 2}, mask=False),
    # read as masked, the unmasked frame would be text: its 4 "mask" bytes come from the
    # payload and the 4 spaces make up the length
    "unmasked then spaces": ping(1) + frame({"type": "ping", "nonce": 2}, mask=False)
    + b"    " + END,
}


class RawClient:
    """A minimal websocket client on a real socket: it reads the server's frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, receive_buffer: int | None = None) -> RawClient:
        sock = socket.socket()
        if receive_buffer is not None:  # before connecting: the window stays that small
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=sock)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                     f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        assert b" 101 " in head.split(b"\r\n")[0], head
        return cls(reader, writer)

    async def frames(self, until_nonce: int | None = SENTINEL) -> list[tuple[Any, ...]]:
        """The server's frames (text as normalised JSON) until the ``pong`` with
        ``until_nonce`` or the end of the stream (a close frame is answered)."""
        out: list[tuple[Any, ...]] = []
        async with asyncio.timeout(20):
            while True:
                try:
                    head = await self.reader.readexactly(2)
                except asyncio.IncompleteReadError:
                    out.append(("eof",))
                    return out
                opcode, size = head[0] & 0x0F, head[1] & 0x7F
                assert head[0] & 0x70 == 0 and head[1] & 0x80 == 0  # no RSV, unmasked
                if size == 126:
                    size = int.from_bytes(await self.reader.readexactly(2), "big")
                elif size == 127:
                    size = int.from_bytes(await self.reader.readexactly(8), "big")
                data = await self.reader.readexactly(size)
                if opcode == 1:
                    msg = _normalised(json.loads(data))
                    out.append(("text", msg))
                    if msg.get("type") == "pong" and msg.get("nonce") == until_nonce:
                        return out
                elif opcode == 9:  # the server's keepalive ping: not part of the answer
                    continue
                elif opcode == 8:
                    out.append(("close", int.from_bytes(data[:2], "big") if data else None,
                                data[2:].decode()))
                    self.writer.write(frame(data[:2], opcode=0x8))
                else:
                    out.append((opcode, data))

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def until(condition: Callable[[], bool]) -> None:
    """Wait (polling) until ``condition()`` holds; fail after 30 seconds (a hang)."""
    async with asyncio.timeout(30):
        while not condition():
            await asyncio.sleep(0.001)


def _normalised(msg: dict[str, Any]) -> dict[str, Any]:
    """``msg`` without what differs between two connections (session ids, tokens)."""
    return {k: "*" if k in ("session", "resume_token") else v for k, v in msg.items()}


async def _server_side(server: MatchServer, client: RawClient) -> DirectConnection:
    """The server's connection object of ``client`` (its handler runs: hello answered)."""
    port = client.writer.get_extra_info("sockname")[1]
    found = [ws for ws in server._sockets.values()
             if ws.transport.get_extra_info("peername")[1] == port]
    assert len(found) == 1 and isinstance(found[0], DirectConnection)
    return found[0]


async def _run(server: MatchServer, script: bytes, cuts: list[int], fast: bool
               ) -> tuple[list[tuple[Any, ...]], list[str | bytes], int]:
    """Feed ``script`` (after hello) to a fresh connection as reads cut at ``cuts``; what
    the client received, the frames handed to the server's core, and how many frames
    took the fast path."""
    client = await RawClient.open(server.port_number)
    try:
        client.writer.write(frame({"type": "hello", "protocol": 1, "name": "fp"}))
        head = await _read_one(client)
        assert head[0] == "text" and head[1]["type"] == "welcome", head
        ws = await _server_side(server, client)
        before = ws.yard_fast_frames
        delivered: list[str | bytes] = []
        sink = ws.yard_sink
        assert sink is not None

        def recording(data: str | bytes) -> None:
            delivered.append(data)
            sink(data)

        ws.yard_sink = recording
        feed: Callable[[bytes], None] = (
            ws.data_received if fast else lambda data: ServerConnection.data_received(ws, data))
        bounds = [0, *sorted(set(cuts)), len(script)]
        for start, stop in itertools.pairwise(bounds):
            if stop > start and not ws.transport.is_closing():
                feed(script[start:stop])
        received = await client.frames()
        return received, delivered, ws.yard_fast_frames - before
    finally:
        await client.close()


async def _read_one(client: RawClient) -> tuple[Any, ...]:
    """The next frame (read without the sentinel logic)."""
    async with asyncio.timeout(10):
        head = await client.reader.readexactly(2)
        size = head[1] & 0x7F
        if size == 126:
            size = int.from_bytes(await client.reader.readexactly(2), "big")
        data = await client.reader.readexactly(size)
        return ("text", json.loads(data)) if head[0] & 0x0F == 1 else (head[0] & 0x0F, data)


def _cuttings(script: bytes, rng: random.Random) -> list[list[int]]:
    """Where to cut ``script`` into reads: not at all, after every byte, inside every
    frame's header (after 2, 6 and 8 bytes of it: a read may then start with the rest of
    a frame, which is not a header), and at random points."""
    size = len(script)
    starts = _frame_starts(script)
    inside = [[s + k for s in starts if s + k < size] for k in (2, 6, 8)]
    return [[], list(range(1, size)), *inside, [size - 1],
            *(sorted(rng.sample(range(1, size), min(size - 1, k))) for k in (1, 3, 12))]


def _frame_starts(script: bytes) -> list[int]:
    """Where each frame of ``script`` starts (it is read as the server would)."""
    starts, at = [], 0
    while at + 2 <= len(script):
        starts.append(at)
        size, start = script[at + 1] & 0x7F, at + 2
        if size == 126:
            size, start = int.from_bytes(script[at + 2:at + 4], "big"), at + 4
        elif size == 127:
            size, start = int.from_bytes(script[at + 2:at + 10], "big"), at + 10
        at = start + (4 if script[at + 1] & 0x80 else 0) + size
    return starts


SERVER_CONFIG = ServerConfig(max_size=MAX_SIZE, max_violations=1000)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_any_cut_of_the_input_gives_what_websockets_parser_gives(
        server: MatchServer, name: str) -> None:
    script = SCRIPTS[name]
    rng = random.Random(name)
    reference = (await _run(server, script, [], fast=False))[:2]
    assert reference[0], name
    fast_frames = 0
    for cuts in _cuttings(script, rng):
        slow = await _run(server, script, cuts, fast=False)
        assert slow[:2] == reference, (name, cuts)
        got = await _run(server, script, cuts, fast=True)
        assert got[:2] == reference, (name, cuts)
        fast_frames += got[2]
    assert fast_frames > 0  # every script starts with a plain frame: the fast path ran


async def test_the_scripts_mean_what_they_say(server: MatchServer) -> None:
    """What websockets' path answers (so the comparison above covers these cases)."""
    async def answers(name: str) -> list[tuple[Any, ...]]:
        return (await _run(server, SCRIPTS[name], [], fast=True))[0]

    async def delivered(name: str) -> list[str | bytes]:
        return (await _run(server, SCRIPTS[name], [], fast=True))[1]

    plain = await answers("plain frames")
    assert [m[1].get("nonce") for m in plain[:6]] == list(range(6))
    assert [m[1]["code"] for m in plain[6:8]] == ["forbidden", "bad_json"]
    control = await answers("control frames between")
    assert (0xA, b"abc") in control and (0xA, b"x" * 125) in control  # pinged: pong
    assert [m[1]["nonce"] for m in control if m[0] == "text"] == [1, 2, 3, SENTINEL]
    assert [m[1]["nonce"] for m in await answers("16-bit and 64-bit lengths")
            if m[1]["type"] == "pong"] == [2, 3, 4, 5, SENTINEL]
    binary = await answers("binary frame")
    assert binary[1][1]["code"] == "bad_json" and "binary" in binary[1][1]["message"]
    large = await answers("too large for the codec")
    assert large[1][1]["code"] == "too_large" and large[2][1]["nonce"] == 3
    assert _close_code(await answers("too large for websockets")) == 1009
    fragmented = await answers("fragmented message")
    assert [m[1].get("nonce") for m in fragmented if m[0] == "text"] == [1, 2, 3, SENTINEL]
    assert _close_code(await answers("not UTF-8")) == 1007
    assert _close_code(await answers("unmasked")) == 1002
    assert _close_code(await answers("reserved bit")) == 1002
    assert _close_code(await answers("unknown opcode")) == 1002
    assert _close_code(await answers("continuation without start")) == 1002
    closed = await answers("close then more")
    assert ("close", 1000, "bye") in closed and closed[-1] == ("eof",)
    assert not [m for m in closed if m[0] == "text" and m[1].get("nonce") == 2]
    inside = await delivered("a frame inside a frame")
    assert [type(d) for d in inside] == [str, bytes, str, bytes, str]  # no ping 7
    assert _close_code(await answers("unmasked last")) == 1002


def _close_code(frames: list[tuple[Any, ...]]) -> int | None:
    """The code of the server's close frame among ``frames`` (it then closed the socket)."""
    closes = [m[1] for m in frames if m[0] == "close"]
    assert len(closes) == 1 and frames[-1] == ("eof",), frames
    return closes[0]


async def test_frames_a_real_client_writes_take_the_fast_path(server: MatchServer) -> None:
    """Over the socket (the kernel decides the reads): answers in order, fast path taken."""
    client = await RawClient.open(server.port_number)
    try:
        client.writer.write(frame({"type": "hello", "protocol": 1, "name": "fp"}))
        assert (await _read_one(client))[1]["type"] == "welcome"
        ws = await _server_side(server, client)
        client.writer.write(b"".join(ping(i) for i in range(50)) + END)
        got = await client.frames()
        assert [m[1]["nonce"] for m in got] == [*range(50), SENTINEL]
        assert ws.yard_fast_frames >= 1
        assert server.fast_frames >= ws.yard_fast_frames
    finally:
        await client.close()


async def test_a_client_that_stops_reading_gets_everything_in_order_once_it_reads() -> None:
    """Replies go straight into the transport until it is paused (the client does not
    read); then they wait in the connection's queue for its writer task. Read again
    later, every reply arrives, in order."""
    server = MatchServer(ServerConfig(max_send_bytes=64 << 20, rate_per_s=100_000,
                                      burst=100_000), recorder=None, port=0)
    await server.start()
    try:
        async with connect(server.url, proxy=None) as bot, \
                AdminClient(server.url, server.admin_token) as admin:
            await bot.send(json.dumps({"type": "hello", "protocol": 1, "name": "holder"}))
            game = await admin.start_match(StartMatch(
                "classic", "holder", ["holder"], seed=3, time_control=TimeControl(60.0)))
            fan = await RawClient.open(server.port_number, receive_buffer=4096)
            fan.writer.write(frame({"type": "hello", "protocol": 1, "name": "fan",
                                    "role": "spectator"}))
            assert (await _read_one(fan))[1]["type"] == "welcome"
            # Small kernel buffers on both ends: the transport pauses after ~100 KiB.
            ws = await _server_side(server, fan)
            ws.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            handled = 0
            sink = ws.yard_sink
            assert sink is not None

            def counting(data: str | bytes) -> None:
                nonlocal handled
                handled += 1
                sink(data)

            ws.yard_sink = counting
            peak, rounds = 0, 400
            for i in range(rounds):  # ~1.5 KiB per snapshot: ~600 KiB unread
                fan.writer.write(frame({"type": "watch", "game": game}) + ping(i))
                def both_read(i: int = i) -> bool:
                    return handled == 2 * i + 2

                await until(both_read)  # the server read both
                peak = max(peak, server.queued_bytes)
            fan.writer.write(END)
            got = await fan.frames()
            assert peak > 0  # the transport was paused: replies were queued
            kinds = [m[1]["type"] for m in got]
            # The board comes once, before the first snapshot of a game on it.
            assert kinds == ["board"] + ["watching", "pong"] * rounds + ["pong"]
            assert [m[1]["nonce"] for m in got if m[1]["type"] == "pong"] == [
                *range(rounds), SENTINEL]
            await fan.close()
    finally:
        await server.stop()


@pytest.mark.parametrize("switch", ["_PARSE_CODE", "FAST_PATH"])
async def test_an_unknown_websockets_layout_turns_the_fast_path_off(
        server: MatchServer, monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    """If websockets' parser is not the one the fast path knows, or the check at import
    found its internals changed (another version), every frame goes through websockets:
    the same answers, no frame taken by the fast path."""
    from protocol import wsframes

    monkeypatch.setattr(wsframes, switch, None if switch == "_PARSE_CODE" else False)
    got, delivered, taken = await _run(server, SCRIPTS["plain frames"], [], fast=True)
    assert (got, delivered) == (await _run(server, SCRIPTS["plain frames"], [],
                                           fast=False))[:2]
    assert taken == 0
