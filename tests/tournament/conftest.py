"""Fixtures of the tournament tests: a ``yard serve`` process for tournaments to play on.

A module gives its server more command-line options with ``SERVE_ARGS`` (a list of strings).
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.yard_cli import YARD


@pytest.fixture
def serve_process(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A `yard serve` process on a free port and a fresh SQLite file, with the module's
    ``SERVE_ARGS``; yields (ws url, db url)."""
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    extra = getattr(request.module, "SERVE_ARGS", [])
    proc = subprocess.Popen([*YARD, "serve", "--port", "0", "--db", url, *extra],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on"), line
    try:
        yield line.split()[-1], url
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
