"""The proxy between the bot under test and the match server.

Every bot connection gets its own upstream connection to the server. The frame rules are a
sans-I/O :class:`Observer`: it may rewrite what the server sends (unknown extra fields, a
``legal`` list narrowed to double or secret moves), records what the bot sends (hellos,
pongs, moves) and says when to drop the bot's connection (the resume check);
:class:`Proxy` only moves frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

EXTRA_KEY = "x_yard_check"
"""The unknown field added to every message in :attr:`Mode.EXTRA_FIELDS`."""


class Mode(Enum):
    """What the proxy does to the game being played."""

    PLAIN = "plain"
    DOUBLE_SECRET = "double and secret moves"
    RESUME = "resume"
    EXTRA_FIELDS = "unknown fields"


@dataclass
class Observer:
    """Sans-I/O frame rules of the proxy between the bot and the server.

    :meth:`to_bot` may rewrite a server frame (extra fields, a narrowed ``legal`` list);
    :meth:`from_bot` records the bot's frames and says when to drop its connection.
    """

    mode: Mode = Mode.PLAIN
    tokens: dict[int, str] = field(default_factory=dict)          # conn -> resume token
    hellos: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    offered: dict[tuple[str, int], tuple[str, list[str]]] = field(default_factory=dict)
    answers: dict[tuple[str, int], str] = field(default_factory=dict)
    mrx_updates: list[str] = field(default_factory=list)
    pongs: set[Any] = field(default_factory=set)
    moves_in_mode: int = 0
    dropped_conn: int | None = None
    _mrx_turns: int = 0

    def start(self, mode: Mode) -> None:
        """Begin a game in ``mode``."""
        self.mode = mode
        self.offered.clear()
        self.answers.clear()
        self.mrx_updates.clear()
        self.moves_in_mode = 0
        self.dropped_conn = None
        self._mrx_turns = 0

    def to_bot(self, conn: int, data: dict[str, Any]) -> dict[str, Any]:
        """The frame to pass on to the bot for server frame ``data``."""
        kind = data.get("type")
        if kind == "welcome":
            self.tokens[conn] = str(data.get("resume_token"))
        elif kind == "update" and data.get("seat") == "mrx":
            self.mrx_updates.append(str(data.get("move")))
        elif kind == "your_turn" and self.mode is Mode.DOUBLE_SECRET:
            data = self._narrow(data)
        if self.mode is Mode.EXTRA_FIELDS:
            data = {**data, EXTRA_KEY: {"note": "unknown fields must be ignored", "n": 1}}
            for key in ("view", "clock", "time_control"):
                if isinstance(data.get(key), dict):
                    data[key] = {**data[key], EXTRA_KEY: 1}
        return data

    def _narrow(self, data: dict[str, Any]) -> dict[str, Any]:
        key = (str(data.get("game")), int(data.get("turn", -1)))
        if data.get("seat") != "mrx" or key in self.offered:
            return data
        legal = [str(m) for m in data.get("legal", [])]
        kind, subset = "", []
        if self._mrx_turns == 0:
            kind, subset = "double", [m for m in legal if "+" in m]
        elif self._mrx_turns == 1:
            kind, subset = "secret", [m for m in legal if m.startswith("secret:")
                                      and "+" not in m]
        self._mrx_turns += 1
        if not subset:
            return data
        self.offered[key] = (kind, subset)
        return {**data, "legal": subset}

    def from_bot(self, conn: int, data: dict[str, Any]) -> bool:
        """Record a bot frame; True: drop the connection once it has been passed on."""
        kind = data.get("type")
        if kind == "hello":
            self.hellos.append((conn, data))
        elif kind == "pong":
            self.pongs.add(data.get("nonce"))
        elif kind == "move":
            self.answers[(str(data.get("game")), int(data.get("turn", -1)))] = \
                str(data.get("move"))
            self.moves_in_mode += 1
            if self.mode is Mode.RESUME and self.dropped_conn is None and \
                    self.moves_in_mode == 2:
                self.dropped_conn = conn
                return True
        return False


class Proxy:
    """A websocket proxy: every bot connection gets its own upstream connection; frames go
    through the :class:`Observer`. ``changed`` is set after every frame."""

    def __init__(self, upstream: str, observer: Observer) -> None:
        """A proxy to ``upstream`` reporting frames to ``observer``, not yet started."""
        self.upstream = upstream
        self.observer = observer
        self.url = ""
        self.changed = asyncio.Event()
        self.clients: dict[int, ServerConnection] = {}
        self._ids = itertools.count(1)
        self._server: Server | None = None

    async def start(self) -> str:
        """Listen on a free loopback port; returns its URL."""
        self._server = await serve(self._handle, "127.0.0.1", 0, compression=None,
                                   max_size=2**22)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        """Close every connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def send(self, conn: int, data: dict[str, Any]) -> None:
        """Send a frame of our own to a bot connection."""
        client = self.clients.get(conn)
        if client is not None:
            with contextlib.suppress(ConnectionClosed):
                await client.send(json.dumps(data))

    async def wait_until(self, cond: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``cond()`` holds, checked after every frame; False after
        ``timeout`` seconds without it."""
        deadline = time.monotonic() + timeout
        while not cond():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)
        return True

    async def _handle(self, client: ServerConnection) -> None:
        conn = next(self._ids)
        self.clients[conn] = client
        try:
            async with connect(self.upstream, proxy=None, compression=None,
                               max_size=2**22) as server:
                up = asyncio.create_task(self._up(conn, client, server))
                down = asyncio.create_task(self._down(conn, client, server))
                await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
                for task in (up, down):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await task
        except (OSError, ConnectionClosed):
            pass
        finally:
            self.clients.pop(conn, None)
            self.changed.set()

    async def _up(self, conn: int, client: ServerConnection, server: ClientConnection
                  ) -> None:
        async for frame in client:
            drop = self.observer.from_bot(conn, _loads(frame))
            await server.send(frame)
            self.changed.set()
            if drop:
                client.transport.abort()  # like a network failure: no close handshake
                await server.close()
                return

    async def _down(self, conn: int, client: ServerConnection, server: ClientConnection
                    ) -> None:
        async for frame in server:
            data = _loads(frame)
            if data:
                frame = json.dumps(self.observer.to_bot(conn, data))
            await client.send(frame)
            self.changed.set()


def _loads(frame: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(frame)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
