"""bench/ladder_load.py, tiny: its matchmaking CPU part runs and reports per size the CPU
per game and the candidates examined per proposal, which stay linear in the bots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_matchmaking_cpu_shape_and_linear_work() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ladder_load.py"), "--cpu-only", "--sizes",
         "10,80", "--cpu-games", "200", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    rows = json.loads(out.stdout)["matchmaking"]
    assert [row["bots"] for row in rows] == [10, 80]
    for row in rows:
        assert row["games"] >= 200
        assert row["cpu_ms_per_game"] >= row["propose_ms_per_game"] >= 0
        assert 0 < row["ops_per_bot_per_proposal"] < 6
    assert "candidates/proposal" in out.stderr
