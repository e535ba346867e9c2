"""House bots: built-in bots a ladder server starts and keeps connected to itself
(``yard serve --ladder grid5 --house random --house mcts:iterations=200``), as opponents
for people on the Play page and as fixed points of the ladder.

Each is a ``yard bot --warm-up`` process, exactly as a stranger's bot connects (the server
imports no bot code): it compiles and warms up before its ``hello``, so the ladder matches
it only once its first move cannot time out on compiling. One that exits is started again
after a pause that doubles up to a minute. Where bots need tokens (accounts or fixed
tokens), each house bot gets a fixed token of its own, handed over in a file only this user
can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from protocol.tokens import new_token
from server.config import ServerConfig

log = logging.getLogger(__name__)

RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0)
"""Seconds before a house bot that exited is started again (the last one repeats)."""

STOP_WAIT_S = 5.0
"""Seconds a house bot has to exit after SIGTERM before it is killed."""


@dataclass(frozen=True)
class HouseBot:
    """A bot spec (``mcts:iterations=200``) the server runs under ``name``, taking at
    most ``games`` games at once."""

    spec: str
    name: str
    games: int = 4


class House:
    """The house bots of one server: started by :meth:`start`, kept running, stopped by
    :meth:`stop`."""

    def __init__(self, bots: list[HouseBot], config: ServerConfig) -> None:
        """House bots for a server with ``config``, not yet started."""
        self.bots = bots
        self.config = config
        self._tasks: list[asyncio.Task[None]] = []
        self._procs: dict[str, asyncio.subprocess.Process] = {}
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._stopping = False

    def prepare(self) -> None:
        """Reserve the house bots' names (no other bot may take one that looks like them)
        and give each a fixed token where bots need one (before the server takes
        connections)."""
        self.config.reserved_names = tuple(dict.fromkeys(
            [*self.config.reserved_names, *(bot.name for bot in self.bots)]))
        if not (self.config.accounts or self.config.bot_tokens):
            return
        self._dir = tempfile.TemporaryDirectory(prefix="yard-house-")
        for bot in self.bots:
            token = self.config.bot_tokens.setdefault(bot.name, new_token())
            path = self._token_file(bot)
            path.write_text(token + "\n")
            path.chmod(0o600)

    def _token_file(self, bot: HouseBot) -> Path:
        assert self._dir is not None
        return Path(self._dir.name) / f"{self.bots.index(bot)}.token"

    def start(self, url: str) -> None:
        """Start every house bot against the server at ``url``."""
        for bot in self.bots:
            self._tasks.append(asyncio.create_task(self._keep(bot, url)))

    def command(self, bot: HouseBot, url: str) -> list[str]:
        """The ``yard bot`` command line of ``bot``."""
        args = [sys.executable, "-c", "import sys; from yard.cli import main; "
                "main(sys.argv[1:])", "bot", bot.spec, "--url", url, "--name", bot.name,
                "--ladder", ",".join(self.config.ladder), "--max-games", str(bot.games),
                "--warm-up"]
        if self._dir is not None:
            args += ["--token-file", str(self._token_file(bot))]
        return args

    async def _keep(self, bot: HouseBot, url: str) -> None:
        failures = 0
        while not self._stopping:
            proc = await asyncio.create_subprocess_exec(
                *self.command(bot, url), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
            self._procs[bot.name] = proc
            code = await proc.wait()
            if self._stopping:
                return
            delay = RESTART_DELAYS[min(failures, len(RESTART_DELAYS) - 1)]
            failures += 1
            log.warning("house bot %s exited with status %s; starting it again in %.0f s",
                        bot.name, code, delay)
            await asyncio.sleep(delay)

    async def stop(self) -> None:
        """Stop every house bot (SIGTERM, then SIGKILL after :data:`STOP_WAIT_S`)."""
        self._stopping = True
        for proc in self._procs.values():
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        for proc in self._procs.values():
            try:
                await asyncio.wait_for(proc.wait(), STOP_WAIT_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for task in self._tasks:
            task.cancel()
        if self._dir is not None:
            self._dir.cleanup()
