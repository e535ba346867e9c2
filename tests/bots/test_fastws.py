"""The bot client's direct frame path (bots/fastws.py) against websockets' own path.

A raw RFC 6455 server on loopback (handshake, then bytes the test writes; it parses what
the clients send back) talks to two clients at once: a :class:`DirectClientConnection`
with a sink and a plain websockets ``ClientConnection``. The same server bytes, cut into
reads in every way (one frame split anywhere, many frames per read, a byte at a time,
seeded random cuts), must give the same messages in the same order and the same replies
(pongs, close frames with their codes). Then the bot client itself over a real match
server: the same seeded games with and without the direct path, and a resume after the
socket is cut.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from collections.abc import AsyncIterator, Sequence

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.utils import accept_key, apply_mask

from bots.client import BotClient
from bots.fastws import DirectClientConnection
from bots.registry import make_bot
from db.store import Database
from host.writer import GameWriter
from protocol import StartMatch
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE

WAIT = 30 * SCALE  # only to turn a hang into a failure

TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes | str, *, fin: bool = True, rsv: int = 0,
          mask: bytes | None = None) -> bytes:
    """One frame as a server (unmasked) or, with ``mask``, a client writes it."""
    data = payload.encode() if isinstance(payload, str) else payload
    size = len(data)
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    flag = 0x80 if mask is not None else 0
    if size < 126:
        head = bytes((first, flag | size))
    elif size < 1 << 16:
        head = bytes((first, flag | 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((first, flag | 127)) + size.to_bytes(8, "big")
    if mask is not None:
        return head + mask + apply_mask(data, mask)
    return head + data


def close_frame(code: int, reason: str = "") -> bytes:
    return frame(CLOSE, code.to_bytes(2, "big") + reason.encode())


class Peer:
    """The server end of one raw connection: write bytes, read the client's frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.frames: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()

    async def read_frames(self) -> None:
        try:
            while True:
                head = await self.reader.readexactly(2)
                size = head[1] & 0x7F
                if size == 126:
                    size = int.from_bytes(await self.reader.readexactly(2), "big")
                elif size == 127:
                    size = int.from_bytes(await self.reader.readexactly(8), "big")
                assert head[1] & 0x80, "a client frame must be masked"
                mask = await self.reader.readexactly(4)
                payload = apply_mask(await self.reader.readexactly(size), mask)
                self.frames.put_nowait((head[0], payload))
                if head[0] & 0x0F == CLOSE and not self.writer.is_closing():
                    self.writer.write(frame(CLOSE, payload))  # as a server answers
                    self.writer.close()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.frames.put_nowait(None)

    async def next_frame(self) -> tuple[int, bytes] | None:
        return await asyncio.wait_for(self.frames.get(), WAIT)

    async def write(self, chunks: Sequence[bytes]) -> None:
        for chunk in chunks:
            self.writer.write(chunk)
            await self.writer.drain()


class RawServer:
    """Answers the websocket handshake, then leaves every byte to the test."""

    def __init__(self) -> None:
        self.peers: asyncio.Queue[Peer] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        found = re.search(rb"(?i)sec-websocket-key:\s*(\S+)", head)
        assert found is not None
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Accept: "
                     + accept_key(found.group(1).decode()).encode() + b"\r\n\r\n")
        peer = Peer(reader, writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.peers.put_nowait(peer)
        await peer.read_frames()

    async def pair(self, max_size: int = 2**20) -> tuple[DirectClientConnection, Peer,
                                                          ClientConnection, Peer, list[str]]:
        """A direct client (attached; its sink's list returned) and a plain one."""
        direct = await connect(self.url, compression=None, max_size=max_size,
                               create_connection=DirectClientConnection)
        direct_peer = await self.peers.get()
        plain = await connect(self.url, compression=None, max_size=max_size)
        plain_peer = await self.peers.get()
        assert isinstance(direct, DirectClientConnection)
        got: list[str] = []
        assert direct.attach(got.append, max_size)
        return direct, direct_peer, plain, plain_peer, got


@pytest.fixture
async def raw() -> AsyncIterator[RawServer]:
    async with RawServer() as server:
        yield server


def cuts(stream: bytes, points: Sequence[int]) -> list[bytes]:
    edges = [0, *sorted(set(points)), len(stream)]
    return [stream[a:b] for a, b in itertools.pairwise(edges) if b > a]


async def drain(conn: ClientConnection, count: int) -> list[str | bytes]:
    return [await asyncio.wait_for(conn.recv(), WAIT) for _ in range(count)]


async def shut(conn: ClientConnection, peer: Peer) -> None:
    """The server closes (close frame, then TCP); the client is closed after it."""
    if not peer.writer.is_closing():
        peer.writer.write(close_frame(1000))
        peer.writer.close()
    await asyncio.wait_for(conn.close(), WAIT)


SMALL = [frame(TEXT, '{"type":"update","turn":1}'), frame(TEXT, ""),
         frame(PING, b"p1"), frame(TEXT, "é€😀" * 10), frame(PONG, b"unasked"),
         frame(TEXT, "x" * 125), frame(TEXT, "y" * 126)]
SMALL_TEXTS = ['{"type":"update","turn":1}', "", "é€😀" * 10, "x" * 125, "y" * 126]
LARGE = [frame(TEXT, "a" * 65535), frame(PING, b""), frame(TEXT, "b" * 65536),
         frame(TEXT, "ü" * 150_000), frame(TEXT, "z")]
LARGE_TEXTS = ["a" * 65535, "b" * 65536, "ü" * 150_000, "z"]


async def test_any_cut_of_the_stream_gives_what_websockets_gives(raw: RawServer) -> None:
    """Frames split anywhere (headers included), several per read, a byte at a time,
    random cuts; pings answered by both with the same pong; the direct path stays on."""
    direct, direct_peer, plain, plain_peer, got = await raw.pair()
    small = b"".join(SMALL)
    rng = random.Random(12)
    large = b"".join(LARGE)
    plans: list[tuple[bytes, list[list[int]]]] = [
             (small, [[]]), (small, [[i] for i in range(1, len(small))]),
             (small, [list(range(1, len(small)))]),
             (small, [rng.sample(range(1, len(small)), 7) for _ in range(20)]),
             (large, [[]] + [rng.sample(range(1, len(large)), 9) for _ in range(10)]
              + [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 65541, 65542, 65544, 65545]])]
    for stream, splits in plans:
        texts = SMALL_TEXTS if stream is small else LARGE_TEXTS
        pings = 1
        for points in splits:
            got.clear()
            for chunk in cuts(stream, points):
                direct.data_received(chunk)
                plain.data_received(chunk)
            assert got == texts, points
            assert await drain(plain, len(texts)) == texts
            for _ in range(pings):  # each answered the ping with the same pong
                pong = (PONG | 0x80, b"p1" if stream is small else b"")
                assert await direct_peer.next_frame() == pong
                assert await plain_peer.next_frame() == pong
    assert direct.direct and direct.passed_frames > 0
    await shut(direct, direct_peer)
    await shut(plain, plain_peer)


async def test_over_the_socket_then_a_close_from_the_server(raw: RawServer) -> None:
    """Real reads of whatever sizes TCP makes: same messages, same pong, and both
    complete the server's close handshake the same way."""
    direct, direct_peer, plain, plain_peer, got = await raw.pair()
    stream = b"".join(SMALL + LARGE)
    chunks = cuts(stream, random.Random(3).sample(range(1, len(stream)), 40))
    await direct_peer.write(chunks)
    await plain_peer.write(chunks)
    texts = SMALL_TEXTS + LARGE_TEXTS
    assert await drain(plain, len(texts)) == texts
    for peer in (direct_peer, plain_peer):
        assert await peer.next_frame() == (PONG | 0x80, b"p1")
        assert await peer.next_frame() == (PONG | 0x80, b"")
    for peer in (direct_peer, plain_peer):
        await peer.write([frame(TEXT, "last"), close_frame(1001, "bye"), frame(TEXT, "late")])
    assert await drain(plain, 1) == ["last"]
    for conn, peer in ((direct, direct_peer), (plain, plain_peer)):
        assert await peer.next_frame() == (CLOSE | 0x80, (1001).to_bytes(2, "big") + b"bye")
        peer.writer.close()
        await asyncio.wait_for(conn.wait_closed(), WAIT)
        assert conn.close_code == 1001
    assert got == [*texts, "last"]  # the late frame after the close is dropped by both
    for conn in (direct, plain):
        with pytest.raises(ConnectionClosed):
            await conn.recv()


CASES: dict[str, tuple[list[bytes], int, list[str | bytes], int | None]] = {
    # name: (server frames, max_size, messages, the client's close code (None: open))
    "binary": ([frame(TEXT, "a"), frame(BINARY, b"\x00b"), frame(TEXT, "c")], 2**20,
               ["a", b"\x00b", "c"], None),
    "fragmented": ([frame(TEXT, "a"), frame(TEXT, "d1", fin=False), frame(PING, b"i"),
                    frame(CONT, "d2"), frame(TEXT, "e")], 2**20, ["a", "d1d2", "e"], None),
    "invalid utf-8": ([frame(TEXT, "a"), frame(TEXT, b"\xff\xfe"), frame(TEXT, "c")],
                      2**20, ["a"], 1007),
    "too large": ([frame(TEXT, "a"), frame(TEXT, "x" * 1001), frame(TEXT, "c")], 1000,
                  ["a"], 1009),
    "masked by the server": ([frame(TEXT, "a"), frame(TEXT, "m", mask=b"abcd")], 2**20,
                             ["a"], 1002),
    "reserved bit": ([frame(TEXT, "a"), frame(TEXT, "r", rsv=4)], 2**20, ["a"], 1002),
    "unknown opcode": ([frame(TEXT, "a"), frame(0x3, b"?")], 2**20, ["a"], 1002),
    "oversized ping": ([frame(TEXT, "a"), frame(PING, b"p" * 126)], 2**20, ["a"], 1002),
}


async def _messages(conn: ClientConnection, count: int, closes: bool) -> list[str | bytes]:
    """``count`` messages, or (``closes``) every message until the connection closes."""
    if not closes:
        return await drain(conn, count)
    out: list[str | bytes] = []
    with pytest.raises(ConnectionClosed):
        while True:
            try:
                out.append(await asyncio.wait_for(conn.recv(), WAIT))
            except UnicodeDecodeError:
                out.append("(invalid utf-8)")
    return out


@pytest.mark.parametrize("case", sorted(CASES))
async def test_unusual_frames_go_to_websockets_in_order(raw: RawServer, case: str) -> None:
    """What the direct path does not take switches the connection to websockets for
    good, at that frame: the same messages in the same order, the same close code."""
    frames, max_size, expected, code = CASES[case]
    direct, direct_peer, plain, plain_peer, got = await raw.pair(max_size)
    stream = b"".join(frames)
    for peer in (direct_peer, plain_peer):
        await peer.write(cuts(stream, [1, len(frames[0]) + 1]))
    closes = code is not None
    assert await _messages(plain, len(expected), closes) == expected
    # Websockets' messages come after the direct ones (same byte stream, in order).
    later = await _messages(direct, len(expected) - 1, closes)
    assert got == ["a"] and [*got, *later] == expected, later
    assert not direct.direct
    if case == "fragmented":
        for peer in (direct_peer, plain_peer):
            assert await peer.next_frame() == (PONG | 0x80, b"i")
    for peer in (direct_peer, plain_peer):
        if code is not None:
            reply = await peer.next_frame()
            assert reply is not None and reply[0] == CLOSE | 0x80
            assert int.from_bytes(reply[1][:2], "big") == code
    await shut(direct, direct_peer)
    await shut(plain, plain_peer)


async def test_send_text_now_writes_what_send_writes(raw: RawServer) -> None:
    """Masked frames of every length form, parsed back by the server; after the close,
    or while flow control holds writing, it declines and writes nothing."""
    direct, direct_peer, plain, plain_peer, _ = await raw.pair()
    texts = ["", "move", "ä" * 70, "b" * 65535, "c" * 70_000]
    masks = set()
    for text in texts:
        assert direct.send_text_now(text)
        await plain.send(text)
    for text in texts:
        assert await direct_peer.next_frame() == (TEXT | 0x80, text.encode())
        assert await plain_peer.next_frame() == (TEXT | 0x80, text.encode())
    for _ in range(2000):  # masks come from a pool that is refilled
        assert direct.send_text_now("m")
        masks.add(direct._masks[direct._mask_at - 4:direct._mask_at])
    assert len(masks) > 1900
    direct.pause_writing()  # what the transport does above its high-water mark
    assert not direct.send_text_now("held")
    direct.resume_writing()
    seen = [await direct_peer.next_frame() for _ in range(2000)]
    assert seen == [(TEXT | 0x80, b"m")] * 2000
    await shut(direct, direct_peer)
    assert not direct.send_text_now("after close")
    await shut(plain, plain_peer)


# ---------------------------------------------------------------- the bot client


async def _play(server: MatchServer, direct: bool, seeds: Sequence[int]) -> list[str]:
    clients = [BotClient(lambda: make_bot("random"), server.url, name, direct=direct)
               for name in ("x", "d")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        for client in clients:
            await asyncio.wait_for(client.connected.wait(), WAIT)
        async with AdminClient(server.url, server.admin_token) as admin:
            # seat_seed too: the bots' seeds (else each server draws its own) and the deal.
            games = [await admin.start_match(StartMatch("grid5", "x", ["d"], seed=seed,
                                                        seat_seed=seed))
                     for seed in seeds]
            for game in games:
                await admin.result(game, 6 * WAIT)
        for client in clients:
            assert client._ws is not None and client._ws.direct is direct
            assert (client._ws.direct_frames > 0) is direct
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return games


async def test_bot_client_plays_the_same_games_with_and_without_the_direct_path() -> None:
    """Seeded random bots: every move of every game is the same either way."""
    moves = []
    for direct in (True, False):
        db = Database.connect("sqlite://")
        server = MatchServer(ServerConfig(), GameWriter(db), port=0)
        await server.start()
        try:
            games = await _play(server, direct, range(6))
        finally:
            await server.stop()
        moves.append([[t.move for t in db.load_game(g).turns] for g in games])
        db.close()
    assert moves[0] == moves[1]
    assert all(len(game) > 2 for game in moves[0])


async def test_bot_client_resumes_after_its_socket_is_cut() -> None:
    """A socket aborted mid-game (no close handshake): the client resumes its session on a
    new connection, again on the direct path, and the game ends by the rules."""
    server = MatchServer(ServerConfig(grace_s=5.0 * SCALE), None, port=0)
    await server.start()
    clients = [BotClient(lambda: make_bot("random"), server.url, n) for n in ("a", "b")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        for client in clients:
            await asyncio.wait_for(client.connected.wait(), WAIT)
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("classic", "a", ["b"], seed=3))
            session = clients[0].session
            first = clients[0]._ws
            assert first is not None and first.direct
            first.transport.abort()
            result = await admin.result(game, 6 * WAIT)
        again = clients[0]._ws
        assert again is not None and again is not first and again.direct
        assert clients[0].session == session
        assert result.termination.value in {"caught", "survived", "cornered",
                                            "detectives_stuck"}
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()


async def test_bot_client_stops_after_max_games_on_the_direct_path() -> None:
    """``max_games`` reached inside the direct path's callback: the client closes its
    connection and ``run`` returns the games played."""
    server = MatchServer(ServerConfig(), None, port=0)
    await server.start()
    limited = BotClient(lambda: make_bot("random"), server.url, "x", max_games=2)
    other = BotClient(lambda: make_bot("random"), server.url, "d")
    tasks = [asyncio.create_task(c.run()) for c in (limited, other)]
    try:
        for client in (limited, other):
            await asyncio.wait_for(client.connected.wait(), WAIT)
        async with AdminClient(server.url, server.admin_token) as admin:
            for seed in (1, 2):
                game = await admin.start_match(StartMatch("grid5", "x", ["d"], seed=seed))
                await admin.result(game, 6 * WAIT)
            assert await asyncio.wait_for(tasks[0], WAIT) == 2
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()


async def test_a_refused_resume_token_starts_a_fresh_session(
        caplog: pytest.LogCaptureFixture) -> None:
    """The server's ``bad_resume_token`` arrives through the direct path's callback: the
    session ends there and the client connects again as a new session, then plays."""
    server = MatchServer(ServerConfig(), None, port=0)
    await server.start()
    stale = BotClient(lambda: make_bot("random"), server.url, "x")
    stale._resume = "r-from-a-server-that-is-gone"
    other = BotClient(lambda: make_bot("random"), server.url, "d")
    tasks = [asyncio.create_task(c.run()) for c in (stale, other)]
    try:
        for client in (stale, other):
            await asyncio.wait_for(client.connected.wait(), WAIT)
        assert stale.session is not None and stale._resume != "r-from-a-server-that-is-gone"
        assert any("connection lost" in r.getMessage() and "retrying" in r.getMessage()
                   for r in caplog.records if r.name == "bots.client")
        async with AdminClient(server.url, server.admin_token) as admin:
            game = await admin.start_match(StartMatch("grid5", "x", ["d"], seed=4))
            result = await admin.result(game, 6 * WAIT)
        assert result.termination.value != "aborted"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()
