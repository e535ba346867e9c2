"""Who gets in: open sockets capped in all and per remote address.

A socket over a cap gets an HTTP 503 with the reason (:func:`refusal`), and beyond a
margin (:func:`refusal_slots`) is dropped at once, so a flood cannot use up the process's
file descriptors. The count runs from accept to close (:class:`GatedConnection`).
A request whose request line or headers are too long for websockets' parser is refused
before any hook sees it; :class:`HttpRefusals` words that refusal for the HTTP client it
usually is (the port serves the pages too), not as a failed websocket connection.

>>> refusal_slots(100), refusal_slots(1000)
(16, 125)
"""

from __future__ import annotations

import asyncio
import http
from typing import Any, ClassVar

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS, Response
from websockets.server import ServerProtocol
from websockets.typing import StatusLike

from server.config import ServerConfig
from server.frames import DirectConnection


def refusal_slots(max_connections: int) -> int:
    """Sockets over ``max_connections`` still answered with a 503 (beyond: dropped)."""
    return max(16, max_connections // 8)


class Gate:
    """Counts open sockets in all and per remote address; decides who is refused."""

    def __init__(self, config: ServerConfig) -> None:
        """A gate enforcing ``config``'s connection limits, with nobody admitted."""
        self.config = config
        self.total = 0
        self.per_address: dict[str, int] = {}
        self.refused = 0
        #: Frames of closed connections that took the fast path of ``data_received``.
        self.fast_frames = 0

    def admit(self, address: str) -> str | None:
        """Count a new socket from ``address``; the reason to refuse it, or ``None``."""
        self.total += 1
        count = self.per_address[address] = self.per_address.get(address, 0) + 1
        if self.total > self.config.max_connections:
            return f"too many connections (server limit {self.config.max_connections})"
        if count > self.config.max_per_address:
            return (f"too many connections from {address} "
                    f"(limit {self.config.max_per_address} per address)")
        return None

    def release(self, address: str) -> None:
        """A socket counted by :meth:`admit` closed."""
        self.total -= 1
        left = self.per_address.get(address, 1) - 1
        if left > 0:
            self.per_address[address] = left
        else:
            self.per_address.pop(address, None)

    def hopeless(self) -> bool:
        """So many sockets that even a refusal would cost too much: drop at once."""
        return self.total > self.config.max_connections + refusal_slots(
            self.config.max_connections)


WEBSOCKET_FAILURE = "Failed to open a WebSocket connection"
"""How websockets' own refusals begin."""


class HttpRefusals(ServerProtocol):
    """websockets' server protocol with the refusals that its request parser makes before
    any hook sees the request (414: the request line is too long; 431: header lines too
    long or too many) worded for HTTP: the port answers page and API requests as well as
    websocket handshakes, and an over-long address is an HTTP client's mistake. Every
    other answer is websockets' own."""

    def reject(self, status: StatusLike, text: str) -> Response:
        """The refusal websockets makes, with an HTTP wording for 414 and 431."""
        code = http.HTTPStatus(status)
        if text.startswith(WEBSOCKET_FAILURE):
            if code == http.HTTPStatus.REQUEST_URI_TOO_LONG:
                text = (f"{code.value} {code.phrase}: the request line (method, address "
                        f"and protocol) is longer than {MAX_LINE_LENGTH} bytes; use a "
                        "shorter address\n")
            elif code == http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE:
                text = (f"{code.value} {code.phrase}: at most {MAX_NUM_HEADERS} header "
                        f"lines of at most {MAX_LINE_LENGTH} bytes each are read\n")
        return super().reject(code, text)


def http_refusals(protocol: ServerProtocol) -> None:
    """Make websockets' ``protocol`` word its parser's refusals for HTTP
    (:class:`HttpRefusals`: a subclass that only rewords :meth:`~HttpRefusals.reject`;
    ``serve`` offers no way to choose the protocol's class)."""
    if type(protocol) is ServerProtocol:
        protocol.__class__ = HttpRefusals


class HttpConnection(ServerConnection):
    """A websockets server connection whose parser refusals are worded for HTTP
    (:func:`http_refusals`): ``create_connection`` of a server that only shows pages."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        """A connection whose parser refusals are worded for HTTP."""
        http_refusals(protocol)
        super().__init__(protocol, *args, **kwargs)


class GatedConnection(DirectConnection):
    """A server connection counted by its class's :attr:`gate` from accept to close; one
    the gate refuses keeps the reason in ``yard_refusal`` (answered with :func:`refusal`),
    or is dropped at once when the gate is :meth:`~Gate.hopeless`."""

    gate: ClassVar[Gate]
    #: The ``Origin`` header of a web page the server does not allow (set by the shell
    #: during the handshake; the core then refuses the connection's ``hello``).
    yard_foreign_origin: str | None = None

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        """A connection whose parser refusals are worded for HTTP."""
        http_refusals(protocol)  # the match server's port shows pages too
        super().__init__(protocol, *args, **kwargs)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Ask the gate whether the peer may connect, then start the handshake."""
        peer = transport.get_extra_info("peername")
        self.yard_address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        self.yard_refusal = self.gate.admit(self.yard_address)
        super().connection_made(transport)
        if self.yard_refusal is not None:
            self.gate.refused += 1
            if self.gate.hopeless() and isinstance(transport, asyncio.WriteTransport):
                transport.abort()  # no 503 either: keep descriptors for real clients

    def connection_lost(self, exc: Exception | None) -> None:
        """Give the connection's place at the gate back."""
        super().connection_lost(exc)
        self.gate.release(self.yard_address)
        self.gate.fast_frames += self.yard_fast_frames
        self.yard_fast_frames = 0


def gated(gate: Gate) -> type[GatedConnection]:
    """The connection class that counts its sockets in ``gate`` (websockets'
    ``create_connection``)."""
    return type("GatedConnection", (GatedConnection,), {"gate": gate})


def refusal(text: str) -> Response:
    """The 503 response that refuses a socket over a cap, saying why."""
    body = (text + "\n").encode()
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"),
                       ("Content-Length", str(len(body))), ("Connection", "close"),
                       ("Retry-After", "5")])
    status = http.HTTPStatus.SERVICE_UNAVAILABLE
    return Response(status.value, status.phrase, headers, body)
