"""docs/bots.md's commands, as written there: the blocks marked ``<!-- tested: ... -->``
run in bash against the ladder server the page starts (``yard serve ... --accounts
--open-registration``), with only the server's address, its database and the ``yard``
command put in: the Python walkthrough (slim client wheel, fresh venv, ``yard-bot new-bot``,
its test, ``yard-bot check``, 4 ladder games, ``yard-bot standing``), then the JavaScript
example with a token from ``yard accounts add``."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

from bots.standing import fetch_standing
from tests import SCALE
from tests.bots.ladder_helpers import ladder_server
from tournament.processes import yard_argv

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "bots.md"
SERVE = (".venv/bin/yard serve --port 8765 --ladder grid5 --house random --accounts "
         "--open-registration --db sqlite:///ladder.db")
"""The page's server, as :func:`ladder_server` starts it (on a free port)."""


def _marked_blocks() -> list[str]:
    found = re.findall(r"<!-- tested: [^\n]*-->\n```bash\n(.*?)```", DOC.read_text(), re.S)
    assert len(found) == 2, found
    return found


def _run_block(block: str, url: str, folder: Path, env: dict[str, str]) -> str:
    script = (block.replace("ws://127.0.0.1:8765", url)
              .replace("sqlite:///ladder.db", f"sqlite:///{folder / 'ladder.db'}")
              .replace(".venv/bin/yard ", shlex.join(yard_argv()) + " "))
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=240 * SCALE,
                          check=False)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_the_getting_started_commands_work_as_written(tmp_path: Path) -> None:
    assert f"```bash\n{SERVE}\n```" in DOC.read_text()
    python_block, js_block = _marked_blocks()
    home = tmp_path / "home"
    home.mkdir()
    slim_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    slim_env |= {"HOME": str(home), "PYTHON": sys.executable}  # PYTHON: build-wheel's
    with ladder_server(tmp_path, "--accounts", "--open-registration") as url:
        said = _run_block(python_block, url, tmp_path, slim_env)
        assert "3 passed" in said and "passed: 4 of 4 in-process checks" in said
        assert "connected as my-bot" in said
        token = home / ".my-bot.token"
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        standing = said.split("my-bot on http://", 1)[1]
        assert "grid5: rank " in standing and "forfeits: none" in standing
        assert standing.count("/#/games/") == 4

        said = _run_block(js_block, url, tmp_path, {**os.environ, "HOME": str(home)})
        assert "connected as js-bot" in said
        js = fetch_standing(url, "js-bot")["ladders"][0]
    assert (js["games"], js["forfeits"]) == (2, {})
