"""``yard new-bot NAME`` (and ``yard-bot new-bot``): a starter bot that passes ruff, its own
test and ``yard-bot check``, with a README of the commands; bad names and files that are
there already are one-line mistakes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import SCALE
from tests.yard_cli import yard_here

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120 * SCALE, check=False)


def test_a_starter_bot_passes_ruff_its_test_and_the_check(tmp_path: Path) -> None:
    out = yard_here("new-bot", "my-bot", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "my-bot"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "my_bot.py",
                                                        "test_my_bot.py"]
    assert "yard-bot check my_bot.py:MyBot" in out.stdout
    bot = (folder / "my_bot.py").read_text()
    assert 'name = "my-bot"' in bot and "class MyBot(Bot):" in bot
    readme = (folder / "README.md").read_text()
    assert "--ladder grid5 --register --token-file" in readme
    assert "yard-bot standing my-bot" in readme
    lint = _run(str(BIN / "ruff"), "check", "--no-cache", "--isolated", "--select",
                "E,F,W,I,B,UP,SIM", "--line-length", "100", ".", cwd=folder)
    assert lint.returncode == 0, lint.stdout
    tested = _run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                  "test_my_bot.py", cwd=folder)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout
    checked = _run(sys.executable, "-m", "bots.cli", "check", "my_bot.py:MyBot",
                   "--games", "2", cwd=folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASS ") == 4  # grid5 and classic, both roles


def test_the_slim_command_writes_the_same_files(tmp_path: Path) -> None:
    assert yard_here("new-bot", "Zed", "--dir", "full", cwd=tmp_path).returncode == 0
    slim = _run(sys.executable, "-m", "bots.cli", "new-bot", "Zed", "--dir", "slim",
                cwd=tmp_path)
    assert slim.returncode == 0, slim.stderr
    for name in ("zed.py", "test_zed.py", "README.md"):
        assert (tmp_path / "slim" / name).read_text() == \
            (tmp_path / "full" / name).read_text()


def test_mistakes_are_one_line(tmp_path: Path) -> None:
    bad = yard_here("new-bot", "9lives", cwd=tmp_path)
    assert bad.returncode == 2 and "start with a letter" in bad.stderr
    assert yard_here("new-bot", "twice", cwd=tmp_path).returncode == 0
    (tmp_path / "twice" / "twice.py").write_text("# mine\n")
    again = yard_here("new-bot", "twice", cwd=tmp_path)
    assert again.returncode == 2 and "there already (--force overwrites)" in again.stderr
    assert (tmp_path / "twice" / "twice.py").read_text() == "# mine\n"
    assert yard_here("new-bot", "twice", "--force", cwd=tmp_path).returncode == 0
    assert "class Twice(Bot)" in (tmp_path / "twice" / "twice.py").read_text()
