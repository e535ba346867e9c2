"""The match server hosted inside another program: its own event loop in a thread of the
calling process, for the programs that run one server for their own games only
(``yard tournament run`` and ``yard match`` without ``--server``).

A separate ``yard serve`` process would cost every run its start-up (most of a CPU second,
almost all of it imports the host has made already) for a server that plays the host's
games only, listens on the loopback address and ends with it (people may still watch it
there). Its own event loop keeps its clocks and its writes independent of the host's loop,
which may block on the database. What the process would have written to its stderr
(warnings, the closing ``stopped; N games stored`` line) goes to ``log_path`` (else to
stderr).

>>> hosted = HostedServer(server_config("127.0.0.1", admin_token="t"), "sqlite://")
>>> hosted.start().startswith("ws://127.0.0.1:")
True
>>> hosted.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from pathlib import Path

from game.errors import YardError
from host.run import Serving, close_serving, fit_open_files, open_serving, server_config
from server.config import ServerConfig
from server.logs import RateLimitFilter

__all__ = ["HostedServer", "HostedServerError", "server_config"]

#: Loggers whose records the hosted server writes to its log (the server's own, its
#: database writer's and web pages', and the websockets server's handshake failures).
LOGGERS = ("server", "host", "websockets.server")


class HostedServerError(YardError):
    """The hosted server could not start (or was asked to start twice)."""


class HostedServer:
    """``config``'s match server on ``host:port`` (0: a free port) storing games in
    ``db_url``, run by :meth:`start` on a thread of its own until :meth:`stop`."""

    def __init__(self, config: ServerConfig, db_url: str, host: str = "127.0.0.1",
                 port: int = 0, log_path: Path | None = None) -> None:
        """A server for ``config`` storing into ``db_url``, not yet started."""
        self.config = config
        self.db_url = db_url
        self.host = host
        self.port = port
        self.log_path = log_path
        #: The ``ws://`` URL, once started.
        self.url = ""
        #: The line the server ended with (``stopped; N games stored``), once stopped.
        self.closing_line = ""
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._handler: logging.Handler | None = None

    def start(self) -> str:
        """Listen and open the database; returns the ``ws://`` URL. Blocks until the
        server is ready; raises what kept it from starting (:class:`~host.run.
        ServerConfigError` for a port it cannot have, :class:`~db.errors.DatabaseError`
        for a database it cannot open, else :class:`HostedServerError`)."""
        if self._thread is not None:
            raise HostedServerError("this hosted server was started already")
        fit_open_files(self.config)
        self._ready.clear()
        self._loop = self._stop = None
        self._handler = self._log_handler()
        self._thread = threading.Thread(target=self._main, name="yard-hosted-server",
                                        daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join()
            self._thread = None
            self._unhook_log()
            error, self._error = self._error, None
            if isinstance(error, YardError):
                raise error
            raise HostedServerError(f"the match server did not start: {error!r}") from error
        return self.url

    def stop(self) -> None:
        """Abort and store the running games, close every connection and the database,
        and end the thread (blocks until done; a no-op when not running)."""
        thread = self._thread
        if thread is None:
            return
        self._ready.wait()  # a start still under way: stopped once it is done
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(stop.set)
        thread.join()
        self._thread = None
        self._unhook_log()

    async def stop_async(self) -> None:
        """:meth:`stop` off the caller's event loop (whose clients the closing server may
        be waiting for). Cancelled, it still waits until the games are stored, then
        re-raises the cancellation."""
        stopping = asyncio.ensure_future(asyncio.to_thread(self.stop))
        cancelled = False
        while not stopping.done():
            try:
                await asyncio.shield(stopping)
            except asyncio.CancelledError:
                cancelled = True
        stopping.result()
        if cancelled:
            raise asyncio.CancelledError

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # handed to start(), or logged
            if not self._ready.is_set():
                self._error = exc
            else:
                logging.getLogger(__name__).exception("the hosted match server failed")
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        serving: Serving = await open_serving(self.config, self.db_url, self.host, self.port)
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.url = serving.url
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            self.closing_line = await close_serving(serving)
            self._write(self.closing_line)

    def _log_handler(self) -> logging.Handler:
        handler: logging.Handler
        if self.log_path is None:
            handler = logging.StreamHandler(sys.stderr)
        else:
            handler = logging.FileHandler(self.log_path, encoding="utf-8", delay=True)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: "
                                               "%(message)s"))
        handler.addFilter(RateLimitFilter())
        for name in LOGGERS:
            logging.getLogger(name).addHandler(handler)
        return handler

    def _unhook_log(self) -> None:
        handler, self._handler = self._handler, None
        if handler is not None:
            for name in LOGGERS:
                logging.getLogger(name).removeHandler(handler)
            handler.close()

    def _write(self, line: str) -> None:
        if self.log_path is None:
            print(line, file=sys.stderr)
            return
        with contextlib.suppress(OSError), self.log_path.open("a", encoding="utf-8") as log:
            log.write(line + "\n")
