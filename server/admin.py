"""An asyncio admin client: list connected bots, start matches, await their results.

Used by ``yard match`` and by the tournament runner. Requests are answered in order, so
replies are matched to requests first-in first-out; ``match_over`` and ``match_result``
pushes are matched by game id and may arrive at any time. Pushes of a type this client
does not know (from a newer server) are ignored.

Example (against a running server)::

    async with AdminClient(url) as admin:
        game = await admin.start_match(StartMatch("classic", "random", ["random"], seed=1))
        result = await admin.result(game)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from game.errors import YardError
from protocol import (
    PROTOCOL_VERSION,
    BotInfo,
    Bots,
    Error,
    ErrorCode,
    Hello,
    ListBots,
    MatchOver,
    MatchResult,
    MatchStarted,
    Message,
    ProtocolError,
    Role,
    StartMatch,
    Welcome,
    decode,
    encode,
)

log = logging.getLogger(__name__)


class AdminError(YardError):
    """The server answered an admin request with an error; ``code`` says which."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        """An error with the server's wire ``code`` and ``message``."""
        super().__init__(message)
        self.code = code


class AdminClient:
    """An admin connection (async context manager)."""

    def __init__(self, url: str, token: str | None = None, name: str = "admin") -> None:
        """A client of the server at ``url``, not yet connected."""
        self.url = url
        self.token = token
        self.name = name
        self._ws: ClientConnection | None = None
        self._replies: asyncio.Queue[Message] = asyncio.Queue()
        self._results: dict[str, asyncio.Future[MatchResult]] = {}
        #: Games started with ``match_over``: set when the game ends (None: its result
        #: came first).
        self._overs: dict[str, asyncio.Future[MatchOver | None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> AdminClient:
        """Connect and say hello as admin."""
        try:
            self._ws = await connect(self.url, proxy=None, compression=None, max_size=2**22)
        except (OSError, TimeoutError) as exc:
            raise AdminError(ErrorCode.SHUTTING_DOWN, f"cannot reach {self.url}: {exc}") from None
        await self._ws.send(encode(Hello(PROTOCOL_VERSION, self.name, "", self.token,
                                         role=Role.ADMIN)))
        reply = decode(await self._ws.recv(), max_size=2**22)
        if not isinstance(reply, Welcome):
            await self._ws.close()
            raise _as_error(reply)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        """Close the connection and stop reading."""
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def list_bots(self) -> list[BotInfo]:
        """Connected bots."""
        reply = await self._request(ListBots())
        if not isinstance(reply, Bots):
            raise _as_error(reply)
        return reply.bots

    async def start_match(self, request: StartMatch) -> str:
        """Start a game; returns its id (raises :class:`AdminError`, e.g. with code
        ``bot_not_connected``). With ``request.match_over``, :meth:`over` says when the
        game ends."""
        reply = await self._request(request)
        if not isinstance(reply, MatchStarted):
            raise _as_error(reply)
        loop = asyncio.get_running_loop()
        self._results.setdefault(reply.game, loop.create_future())
        if request.match_over:
            self._overs.setdefault(reply.game, loop.create_future())
        return reply.game

    async def over(self, game: str, timeout: float | None = None) -> MatchOver | None:
        """Wait until ``game`` (started with ``match_over``) has ended, before its record is
        stored: its ``match_over``, or None when its result or ``store_failed`` came first
        (raises :class:`AdminError` when the connection is lost)."""
        future = self._overs.get(game)
        if future is None:
            raise AdminError(ErrorCode.UNKNOWN_GAME, f"game {game!r} was not started with "
                             "match_over on this connection")
        over = await asyncio.wait_for(asyncio.shield(future), timeout)
        self._overs.pop(game, None)
        return over

    async def result(self, game: str, timeout: float | None = None) -> MatchResult:
        """Wait for the result of ``game`` (pushed once its record is stored; raises
        :class:`AdminError` with code ``store_failed`` when the server could not store it)."""
        future = self._results.setdefault(game, asyncio.get_running_loop().create_future())
        result = await asyncio.wait_for(asyncio.shield(future), timeout)
        self._results.pop(game, None)
        return result

    async def _request(self, msg: Message) -> Message:
        assert self._ws is not None, "use AdminClient as an async context manager"
        async with self._lock:
            await self._ws.send(_wire(msg))
            return await self._replies.get()

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                try:
                    msg = decode(frame, max_size=2**22)
                except ProtocolError as exc:
                    if exc.code is not ErrorCode.UNKNOWN_TYPE:
                        raise
                    log.debug("ignored a message from %s: %s", self.url, exc)
                    continue
                self._take(msg)
        except ConnectionClosed:
            pass
        self._lose_all()

    def _take(self, msg: Message) -> None:
        """One message from the server: an end or a result to the future waiting for it, a
        reply to the request waiting for it."""
        if isinstance(msg, MatchOver):
            over = self._overs.get(msg.game)
            if over is not None and not over.done():
                over.set_result(msg)
        elif isinstance(msg, MatchResult):
            self._ended(msg.game)
            future = self._result_future(msg.game)
            if not future.done():
                future.set_result(msg)
        elif (isinstance(msg, Error) and msg.code is ErrorCode.STORE_FAILED
              and msg.ref is not None):
            # The game ended but its record was not committed: no result.
            self._ended(msg.ref)
            future = self._result_future(msg.ref)
            if not future.done():
                future.set_exception(AdminError(msg.code, msg.message))
                future.add_done_callback(_retrieved)
        elif isinstance(msg, Bots | MatchStarted | Error):
            self._replies.put_nowait(msg)

    def _result_future(self, game: str) -> asyncio.Future[MatchResult]:
        """The future of ``game``'s result, made on first asking."""
        return self._results.setdefault(game, asyncio.get_running_loop().create_future())

    def _lose_all(self) -> None:
        """The connection is gone: every result and end still awaited fails, and so does the
        request waiting for a reply."""
        lost = AdminError(ErrorCode.SHUTTING_DOWN, "connection to the server was lost")
        futures: list[asyncio.Future[Any]] = [*self._results.values(), *self._overs.values()]
        for future in futures:
            if not future.done():
                future.set_exception(lost)
                future.add_done_callback(_retrieved)  # nobody may be waiting for it
        self._replies.put_nowait(Error(ErrorCode.SHUTTING_DOWN, str(lost)))

    def _ended(self, game: str) -> None:
        """A result (or ``store_failed``) for ``game``: it has ended, if nobody heard."""
        over = self._overs.get(game)
        if over is not None and not over.done():
            over.set_result(None)


def _retrieved(future: asyncio.Future[Any]) -> None:
    future.exception()


def _as_error(reply: Message) -> AdminError:
    if isinstance(reply, Error):
        return AdminError(reply.code, reply.message)
    return AdminError(ErrorCode.BAD_VALUE, f"unexpected reply {reply.TYPE}")


_NO_MATCH_OVER = ',"match_over":false}'


def _wire(msg: Message) -> str:
    """``msg`` as sent: a ``start_match`` leaves ``match_over`` out unless it is set, so
    the runner still talks to servers older than that field (they refuse unknown fields)."""
    text = encode(msg)
    if isinstance(msg, StartMatch) and text.endswith(_NO_MATCH_OVER):
        text = text[:-len(_NO_MATCH_OVER)] + "}"
    return text
