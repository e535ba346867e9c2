"""`yard play`, `yard rules`, `yard bench engine` through the command's entry point
(yard.cli.main, in this process; one of them as a real subprocess); the README example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.yard_cli import yard_here

ROOT = Path(__file__).resolve().parents[2]
YARD = str(Path(sys.executable).parent / "yard")
PLAY_KEYS = {"games", "mrx_wins", "detective_wins", "mean_moves", "games_per_s"}


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    """``yard ARGS`` in this process (a ``yard`` process costs about a CPU second to start)."""
    return yard_here(*args, cwd=ROOT)


def yard_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([YARD, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def play_json(*args: str, run: Callable[..., subprocess.CompletedProcess[str]] = yard
              ) -> dict[str, object]:
    out = run("play", "--json", *args)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_play_json_keys_and_consistency() -> None:
    data = play_json("--rules", "grid5", "--mrx", "run", "--detectives", "rush,random",
                     "--games", "20", "--seed", "3", run=yard_process)  # the real command
    assert set(data) >= PLAY_KEYS
    assert data["games"] == 20
    assert data["mrx_wins"] + data["detective_wins"] == 20  # type: ignore[operator]
    assert 0 < data["mean_moves"] <= 15  # type: ignore[operator]


def test_same_seed_same_results() -> None:
    args = ("--rules", "classic", "--mrx", "greedy", "--detectives", "rush", "--games", "6",
            "--seed", "11")
    first, second = play_json(*args), play_json(*args)
    for data in (first, second):
        del data["games_per_s"]
    assert first == second


def test_play_text_summary() -> None:
    out = yard("play", "--rules", "warwick", "--mrx", "run2", "--detectives", "greedy",
               "--games", "5", "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert "Mister X wins" in out.stdout and "95% CI" in out.stdout
    assert "games/s" in out.stdout


def test_play_with_a_ruleset_file(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text('extends = "dash"\nname = "short"\nmax_moves = 5\nreveal_moves = [3]\n')
    data = play_json("--rules", str(path), "--games", "4")
    assert data["rules"] == "short" and data["mean_moves"] <= 5  # type: ignore[operator]


@pytest.mark.parametrize(("args", "message"), [
    (["--rules", "chess"], "unknown ruleset 'chess'"),
    (["--mrx", "nobody"], "unknown bot 'nobody'"),
    (["--mrx", "rush"], "'rush' cannot play mrx"),
    (["--detectives", "random,run"], "'run' cannot play detectives"),
    (["--option", "rush"], "BOT:key=value"),
    (["--option", "random:depth=3"], "has no option 'depth'"),
    (["--option", "rush:x=1"], "not playing: rush"),
    (["--rules", "missing.toml"], "cannot read ruleset file"),
])
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    out = yard("play", "--games", "2", *args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


@pytest.mark.parametrize(("files", "message"), [
    ({"bad.toml": "name = ["}, "invalid TOML"),
    ({"r.toml": 'extends = "classic"\nname = "r"\nreveal_moves = [0]\n'}, "reveal moves must lie"),
    ({"r.toml": 'extends = "classic"\nname = "r"\nboard = "m.json"\n', "m.json": "{oops"},
     "not valid JSON"),
    ({"r.toml": 'extends = "classic"\nname = "r"\nboard = "m.json"\n',
      "m.json": '{"name": "m", "stations": 2, "edges": {"taxi": [[1, 7]]}}'}, "outside 1..2"),
])
def test_malformed_files_exit_2(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    ruleset = next(name for name in files if name.endswith(".toml"))
    out = yard("play", "--games", "1", "--rules", str(tmp_path / ruleset))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


def test_rules_lists_the_five_rulesets() -> None:
    out = yard("rules", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [r["name"] for r in data] == ["classic", "bristol", "dash", "warwick", "grid5"]
    assert all({"board", "detectives", "reveal_moves", "max_moves", "source"} <= set(r)
               for r in data)
    table = yard("rules")
    assert table.returncode == 0 and "warwick" in table.stdout and "grid5x5" in table.stdout


def test_bench_engine_json() -> None:
    out = yard("bench", "engine", "--rules", "grid5", "--seconds", "0.4", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in ("legal_move_generations_per_s", "applies_per_s", "random_games_per_s",
                "arena_games_per_s"):
        assert data[key] > 0


def test_readme_engine_example_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The engine in Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert block, "README's engine section has no python example"
    out = subprocess.run([sys.executable, "-c", block.group(1)], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "illegal" in out.stdout or "State(" in out.stdout
