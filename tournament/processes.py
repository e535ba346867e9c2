"""Start ``yard serve`` and ``yard bot`` as subprocesses and learn when they are ready.

Readiness comes from the child's first stdout line (``listening on ws://...`` from the
server, ``connected ...`` from ``yard bot``) or, for a bot given as a command, from the
server listing it as connected, so callers never sleep-and-hope. Used for the bots of
``yard match`` and of the tournament runner (whose server runs in their own process,
:mod:`host.hosted`), by ``yard bot-check``, and by the benchmarks that measure ``yard
serve`` itself; :mod:`tournament.engines` turns a bot spec into the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from game.errors import YardError
from server.auth import ADMIN_TOKEN_ENV

READY_TIMEOUT_S = 60.0
READY_POLL_S = 0.1


class ProcessError(YardError):
    """A child process failed to start or to report ready."""


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the parent dies (Linux), so a killed
    runner never leaves a server or bots playing on behind its back."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def yard_argv(*args: str) -> list[str]:
    """The command line running ``yard ARGS`` with this interpreter."""
    return [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])",
            *args]


class Child:
    """A running ``yard`` subprocess whose first stdout line said it is ready."""

    def __init__(self, proc: asyncio.subprocess.Process, ready_line: str) -> None:
        """Wrap ``proc``, which printed ``ready_line``."""
        self.proc = proc
        self.ready_line = ready_line

    @classmethod
    async def start(cls, args: Sequence[str], expect: str, timeout: float = READY_TIMEOUT_S,
                    stderr_log: Path | None = None, env: Mapping[str, str] | None = None
                    ) -> Child:
        """Run ``yard ARGS``; wait for a stdout line starting with ``expect``.

        The child's stderr goes to ``stderr_log`` (appended) when given, else to ours;
        ``env`` is added to its environment.
        """
        return await cls.launch(yard_argv(*args), f"yard {' '.join(args)}", expect=expect,
                                timeout=timeout, stderr_log=stderr_log, env=env)

    @classmethod
    async def launch(cls, argv: Sequence[str], what: str, *, expect: str | None = None,
                     ready: Callable[[], Awaitable[bool]] | None = None,
                     timeout: float = READY_TIMEOUT_S, stderr_log: Path | None = None,
                     env: Mapping[str, str] | None = None, cwd: str | None = None,
                     not_ready: Callable[[], str] | None = None) -> Child:
        """Run ``argv`` and wait until it is ready: its first stdout line starts with
        ``expect``, or (without ``expect``) ``ready()`` says so; its stdout then goes to
        ``stderr_log`` too. Raises :class:`ProcessError` if it exits or is not ready within
        ``timeout`` seconds (``not_ready()`` then says what was missing), with the lines it
        and the other children wrote to ``stderr_log`` since it started. ``what`` names it
        in errors. Cancelled while waiting, it stops the process first."""
        try:
            log_file = stderr_log.open("ab") if stderr_log is not None else None
        except OSError as exc:
            raise ProcessError(f"cannot write the process log {stderr_log}: "
                               f"{exc.strerror}") from None
        try:
            offset = log_file.tell() if log_file is not None else 0
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE if expect is not None else log_file,
                stderr=log_file, preexec_fn=_die_with_parent, cwd=cwd,
                env=None if env is None else {**os.environ, **env})
        except OSError as exc:
            raise ProcessError(f"cannot run `{what}`: {exc.strerror or exc}") from None
        finally:
            if log_file is not None:
                log_file.close()  # the child holds its own copy of the descriptor
        line = ""
        try:
            if expect is not None:
                line, problem = await _wait_line(proc, expect, timeout)
            else:
                assert ready is not None
                problem = await _wait_ready(proc, ready, timeout)
        except BaseException:
            await cls(proc, "").stop()  # cancelled (a sibling failed, Ctrl-C): no orphan
            raise
        if problem is None:
            return cls(proc, line)
        await cls(proc, "").stop()
        if problem != _TIMED_OUT:
            message = f"`{what}` did not start ({problem})"
        elif not_ready is not None:
            message = f"`{what}` did not connect: {not_ready()}"
        else:
            message = f"`{what}` did not start (not ready after {timeout:g} s)"
        if stderr_log is not None:
            lines = tail(stderr_log, start=offset)
            message += (f"; last lines of {stderr_log}:\n{lines}" if lines else
                        f"; nothing was written to {stderr_log} meanwhile")
        raise ProcessError(message)

    async def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, wait, SIGKILL if needed; returns the exit status."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode or 0


#: What the waiters below return when the time is up.
_TIMED_OUT = "timed out"


async def _wait_line(proc: asyncio.subprocess.Process, expect: str,
                     timeout: float) -> tuple[str, str | None]:
    """``(line, None)`` when the first stdout line of ``proc`` starts with ``expect``
    within ``timeout`` seconds, else ``("", what went wrong)`` (``_TIMED_OUT``: no line)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    except TimeoutError:
        return "", _TIMED_OUT
    text = line.decode(errors="replace").strip()
    if text.startswith(expect):
        return text, None
    if not line:  # end of its output: it exited (or closed stdout)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), max(0.0, deadline - time.monotonic()))
        if proc.returncode is not None:
            return "", f"it exited with status {proc.returncode}"
        return "", _TIMED_OUT
    return "", f"got {text!r:.200}"


async def _wait_ready(proc: asyncio.subprocess.Process, ready: Callable[[], Awaitable[bool]],
                      timeout: float) -> str | None:
    """None when ``ready()`` turned true within ``timeout`` seconds (each call of it
    bounded by what is left), else what went wrong (``_TIMED_OUT``)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if proc.returncode is not None:
            return f"it exited with status {proc.returncode}"
        try:
            if await asyncio.wait_for(ready(), left):
                return None
        except TimeoutError:
            break
        with contextlib.suppress(TimeoutError):  # poll, or notice an exit
            await asyncio.wait_for(proc.wait(), min(READY_POLL_S, max(0.0, left)))
    if proc.returncode is not None:
        return f"it exited with status {proc.returncode}"
    return _TIMED_OUT


def tail(path: Path, lines: int = 20, start: int = 0) -> str:
    """The last ``lines`` lines of a text file from byte ``start`` on ("" if it cannot be
    read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


async def start_server(db_url: str, *extra: str, stderr_log: Path | None = None,
                       admin_token: str | None = None) -> tuple[Child, str]:
    """``yard serve --port 0``; returns the child and its ``ws://`` URL. ``admin_token``:
    the server's admin token, handed over in its environment (not on its command line,
    which other users may list); without one it uses its default token file."""
    env = None if admin_token is None else {ADMIN_TOKEN_ENV: admin_token}
    child = await Child.start(["serve", "--port", "0", "--db", db_url, *extra], "listening on",
                              stderr_log=stderr_log, env=env)
    return child, child.ready_line.split()[-1]


async def start_bot(name: str, url: str, *extra: str, stderr_log: Path | None = None) -> Child:
    """``yard bot NAME --url URL EXTRA...``; returns once it is connected. (Launchers of
    bot specs and commands use :func:`tournament.engines.start_engine`)."""
    return await Child.start(["bot", name, "--url", url, *extra], "connected",
                             stderr_log=stderr_log)
