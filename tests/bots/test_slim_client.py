"""The slim client end to end: ``client/build-wheel`` builds ``yard-client``, which
installs into a fresh venv with websockets as its only dependency (a few MB, no numpy or
orjson); from there ``yard-bot new-bot`` makes a starter bot that plays 4 games on a ladder
server of the full install without a forfeit, and ``yard-bot standing`` reads them back.

The install takes websockets from the package index pip is set up with (PyPI, or a
mirror): the same as a bot author's ``pip install``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from game import Termination
from tests import SCALE
from tests.bots.ladder_helpers import ladder_server

ROOT = Path(__file__).resolve().parents[2]
MAX_MB = 25
FORFEITS = {t.value for t in (Termination.TIMEOUT, Termination.ILLEGAL_MOVE,
                              Termination.BOT_ERROR, Termination.DISCONNECTED,
                              Termination.PROTOCOL_VIOLATION)}


def _run(*argv: str | Path, cwd: Path, timeout: float = 120) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of ours
    env["PYTHON"] = sys.executable  # client/build-wheel builds with this one's setuptools
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout * SCALE, check=False)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done.stdout


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What ``client/build-wheel DIST`` printed (built once for this module's tests)."""
    dist = tmp_path_factory.mktemp("dist")
    return _run("bash", ROOT / "client" / "build-wheel", dist, cwd=dist)


def test_the_wheel_holds_the_sdk_protocol_and_engine_only(built: str) -> None:
    wheel = Path(built.strip().splitlines()[-1])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name == f"yard_client-{version}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("yard_client-")}
    assert tops == {"bots", "game", "protocol", "ratings"}
    assert "bots/sdk.py" in names and "game/data/london.json" in names
    assert "protocol/schema/http/ladder.json" in names
    heavy = ("bots/mcts/", "bots/dqn/", "bots/alphabeta", "bots/greedy.py", "ratings/elo.py")
    assert not [n for n in names if n.startswith(heavy)]
    metadata = zipfile.ZipFile(wheel).read(f"yard_client-{version}.dist-info/METADATA")
    requires = [line for line in metadata.decode().splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert requires == ["Requires-Dist: websockets<18,>=17"]


def test_a_starter_bot_from_the_slim_client_plays_a_ladder(built: str, tmp_path: Path
                                                          ) -> None:
    [wheel] = built.split()
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel,
         cwd=tmp_path, timeout=300)
    installed = _run(python, "-c", "import importlib.metadata as m; "
                     "print(sorted(d.metadata['Name'] for d in m.distributions()))",
                     cwd=tmp_path)
    assert installed.strip() == "['websockets', 'yard-client']"
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert _size_mb(site) <= MAX_MB
    where = _run(python, "-c", "import sys, bots.sdk, protocol.codec as c; print("
                 "bots.sdk.__file__, c.HAVE_ORJSON, [m for m in ('numpy', 'orjson', "
                 "'click') if m in sys.modules])", cwd=tmp_path)
    assert where.split(maxsplit=1) == [str(site / "bots" / "sdk.py"), "False []\n"]

    _run(venv / "bin" / "yard-bot", "new-bot", "slim-bot", cwd=tmp_path)
    folder = tmp_path / "slim-bot"
    with ladder_server(tmp_path) as url:
        played = _run(python, "slim_bot.py", "--url", url, "--ladder", "grid5", "--games",
                      "4", cwd=folder)
        assert played.startswith("connected as slim-bot")
        standing = json.loads(_run(venv / "bin" / "yard-bot", "standing", "slim-bot",
                                   "--url", url, "--json", cwd=tmp_path))
    [row] = standing["ladders"]
    assert row["rules"] == "grid5" and row["games"] == 4
    assert row["forfeits"] == {} and row["paused"] is None
    assert len(row["recent"]) == 4
    assert not [g for g in row["recent"] if g["termination"] in FORFEITS]
