"""``yard ARGS`` in the test process: :func:`yard.cli.main`, which the ``yard`` console script
calls, with its own stdin/stdout/stderr, environment and working directory.

For commands that end before they start anything (user mistakes: one line, exit 2) or that
only read a database: starting a Python process and importing yard (torch and Ray for some
commands) costs one to ten seconds of CPU a call, much more than the command itself. Each
test module that uses this keeps at least one real ``yard`` process for its commands.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

from yard.cli import main

YARD = [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])"]
"""``yard`` as a real process: the argument list that starts it with this Python."""


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _directory(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


def yard_here(*args: str, env: Mapping[str, str] | None = None,
              cwd: Path | str | None = None, stdin: str | None = None
              ) -> subprocess.CompletedProcess[str]:
    """Run ``yard ARGS`` in this process; the result as :func:`subprocess.run` gives it for
    the real command (an exception that escapes ``main`` is a traceback on stderr and exit
    status 1, as the interpreter would print it). ``env`` replaces the environment."""
    # Text streams over bytes, as a process has them (commands may write to .buffer).
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
                for _ in range(2))
    code = 0
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    try:
        with _environment(env), _directory(cwd), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:  # what the interpreter would print for the real command
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["yard", *args], code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    text = raw.getvalue().decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as subprocess's text=True
