"""bench/ladder.py, tiny: its model mode runs, its output has the documented shape, and the
ladder's and the round robin's rank correlations rise with games."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_model_mode_shape_and_correlation_rises() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ladder.py"), "--mode", "model", "--bots", "8",
         "--games", "240", "--seeds", "4", "--every", "40", "--seed", "3", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    summary = json.loads(out.stdout)
    assert summary["checkpoints"] == [40, 80, 120, 160, 200, 240]
    assert summary["seeds"] == 4
    corr = summary["correlation"]
    assert set(corr) == {"ladder", "ladder-elo", "rr", "rr-elo"}
    for series in corr.values():
        assert len(series) == 6
        assert all(c["lo"] <= c["mean"] <= c["hi"] <= 1 for c in series)
    for name in ("ladder", "rr"):
        assert corr[name][-1]["mean"] > corr[name][0]["mean"]
        assert corr[name][-1]["mean"] > 0.8
    assert set(summary["reach"]) == {"0.8", "0.9", "0.95"}
    assert summary["reach"]["0.8"]["ladder"]["reached"] == 4
    fair = summary["fairness"]
    assert fair["games_per_bot"]["mean"] == 2 * 240 / 8
    assert fair["games_per_pair"]["max"] >= fair["games_per_pair"]["min"]
    assert "seed 3" in out.stderr


def test_settle_mode_compares_the_page_orders_with_the_offline_fit() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ladder.py"), "--mode", "settle", "--games",
         "600", "--after", "300", "--every", "50", "--seeds", "2", "--samples", "20",
         "--max-games", "4", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    summary = json.loads(out.stdout)
    assert summary["polls_per_seed"] == 12 and summary["polls_after"] == 12
    table = summary["candidates"]
    assert set(table) == {"openskill", "openskill-mu", "openskill tau=0.02",
                          "openskill tau=0.005", "history", "history-fresh"}
    assert summary["los_polls"] > 0  # random and cautious are 250 Elo apart
    # refitted at every poll, the page's rank is the offline fit's order
    assert table["history-fresh"]["poll_agreement"] == 1.0
    for row in table.values():
        assert 0.0 <= row["best_first"] <= 1.0 and row["order_changes"] >= 0
    assert "seed 2" in out.stderr
