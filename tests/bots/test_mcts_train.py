"""``yard train lc`` end to end (real subprocess), and its weights feeding the bot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bots.mcts.lc import load_weights

YARD = [sys.executable, "-c", "from yard.cli import main; main()"]


def test_train_lc_writes_loadable_weights(tmp_path: Path) -> None:
    out = tmp_path / "lc.json"
    done = subprocess.run([*YARD, "train", "lc", "--rules", "grid5", "--games", "3",
                           "--seed", "4", "--iterations", "20", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "grid5: 3 games" in done.stdout
    data = json.loads(out.read_text())
    entry = data["rulesets"]["grid5"]
    assert sum(entry["hits"]) > 0 and entry["games"] == 3
    assert load_weights("grid5", str(out)) == tuple(entry["weights"])


def test_train_lc_bad_ruleset_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([*YARD, "train", "lc", "--rules", "nope", "--games", "1",
                           "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_train_lc_learns_how_a_given_mister_x_hides(tmp_path: Path) -> None:
    out = tmp_path / "lc.json"
    args = [*YARD, "train", "lc", "--rules", "grid5", "--games", "3", "--seed", "4",
            "--mrx", "random", "--detectives", "mcts:iterations=20,time=0", "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    entry = json.loads(out.read_text())["rulesets"]["grid5"]
    assert entry["mrx"] == "random" and entry["detectives"] == "mcts:iterations=20,time=0"
    tuned = tmp_path / "tuned.json"
    subprocess.run([*YARD, "train", "lc", "--rules", "grid5", "--games", "3", "--seed", "4",
                    "--iterations", "20", "--out", str(tuned)], check=True, capture_output=True)
    # A random Mister X hides differently from the tuned MCTS one: other counts.
    assert entry["hits"] != json.loads(tuned.read_text())["rulesets"]["grid5"]["hits"]


def test_train_lc_bad_bot_spec_is_one_line_before_any_game(tmp_path: Path) -> None:
    done = subprocess.run([*YARD, "train", "lc", "--mrx", "nobot:x=1", "--out",
                           str(tmp_path / "x.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr and not (tmp_path / "x.json").exists()
