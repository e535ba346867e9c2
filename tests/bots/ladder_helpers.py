"""A ladder server from the full install for the tests of what bot authors run against
one (``yard standing``, the slim client): ``yard serve --ladder grid5 --house random``."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests import SCALE
from tournament.processes import yard_argv


@contextlib.contextmanager
def ladder_server(folder: Path, *extra: str) -> Iterator[str]:
    """``yard serve --ladder grid5 --house random EXTRA...`` on a free port, its database
    and log in ``folder``; yields its ``ws://`` URL once it listens, stops it (SIGINT)
    after."""
    with (folder / "server.log").open("wb") as log:
        proc = subprocess.Popen(yard_argv("serve", "--port", "0", "--db",
                                          f"sqlite:///{folder / 'ladder.db'}", "--ladder",
                                          "grid5", "--house", "random", *extra),
                                stdout=subprocess.PIPE, stderr=log)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode()
            assert line.startswith("listening on "), (line, (folder / "server.log").read_text())
            yield line.split()[-1]
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60 * SCALE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
