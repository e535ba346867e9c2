"""``yard`` commands on a folder's database, for the CLI tests: in this process
(:func:`tests.yard_cli.yard_here`) and as a real process, both without YARD_DB (the
commands find ``yard.db`` in the folder they run in)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.yard_cli import yard_here

YARD = str(Path(sys.executable).with_name("yard"))


def yard(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``yard ARGS`` in this process (a ``yard`` process costs about a CPU second to start)."""
    full_env = {k: v for k, v in os.environ.items() if k != "YARD_DB"} | (env or {})
    return yard_here(*args, cwd=cwd, env=full_env)


def yard_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``yard ARGS`` as a real process."""
    full_env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return subprocess.run([YARD, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=60)
