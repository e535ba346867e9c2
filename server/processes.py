"""Start ``yard serve`` and ``yard bot`` as subprocesses and learn when they are ready.

Readiness comes from the child's first stdout line (``listening on ws://...`` from the
server, ``connected ...`` from a bot), so callers never sleep-and-hope. Used by
``yard match`` without ``--server`` and by the tournament runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from game.errors import YardError

READY_TIMEOUT_S = 60.0


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
        self.proc = proc
        self.ready_line = ready_line

    @classmethod
    async def start(cls, args: Sequence[str], expect: str, timeout: float = READY_TIMEOUT_S,
                    stderr_log: Path | None = None) -> Child:
        """Run ``yard ARGS``; wait for a stdout line starting with ``expect``.

        The child's stderr goes to ``stderr_log`` (appended) when given, else to ours.
        """
        try:
            log_file = stderr_log.open("ab") if stderr_log is not None else None
        except OSError as exc:
            raise ProcessError(f"cannot write the process log {stderr_log}: "
                               f"{exc.strerror}") from None
        try:
            proc = await asyncio.create_subprocess_exec(
                *yard_argv(*args), stdout=asyncio.subprocess.PIPE, stderr=log_file,
                preexec_fn=_die_with_parent)
        finally:
            if log_file is not None:
                log_file.close()  # the child holds its own copy of the descriptor
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        except TimeoutError:
            line = b""
        text = line.decode().strip()
        if not text.startswith(expect):
            await cls(proc, text).stop()
            message = f"`yard {' '.join(args)}` did not start (got {text!r:.200})"
            if stderr_log is not None:
                message += f"; last lines of {stderr_log}:\n{tail(stderr_log)}"
            raise ProcessError(message)
        return cls(proc, text)

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


def tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a text file ("" if it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


async def start_server(db_url: str, *extra: str,
                       stderr_log: Path | None = None) -> tuple[Child, str]:
    """``yard serve --port 0``; returns the child and its ``ws://`` URL."""
    child = await Child.start(["serve", "--port", "0", "--db", db_url, *extra], "listening on",
                              stderr_log=stderr_log)
    return child, child.ready_line.split()[-1]


async def start_bot(name: str, url: str, *extra: str, stderr_log: Path | None = None) -> Child:
    """``yard bot NAME --url URL``; returns once it is connected."""
    return await Child.start(["bot", name, "--url", url, *extra], "connected",
                             stderr_log=stderr_log)
