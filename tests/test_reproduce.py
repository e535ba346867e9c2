"""`yard reproduce`: the six experiments run (tiny budgets) and report the documented shape.

Shape only: every cell has n, a rate inside its 95% interval and the command that reruns it;
the numbers themselves are never checked here (they live in docs/reproductions.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bots.arena import play_game
from game import Winner, load_ruleset
from yard.reproduce import EXPERIMENTS, run_experiment
from yard.reproduce.model import Cell, ChunkResult, ReproduceError, make, merge, verdict
from yard.reproduce.report import header

ROOT = Path(__file__).resolve().parent.parent
YARD = str(Path(sys.executable).parent / "yard")
NAMES = ["warwick", "brno", "nijssen-lc", "nijssen-cr", "dash", "bristol"]
REPORT_KEYS = {"experiment", "title", "source", "quick", "budget", "seed", "workers", "games",
               "date", "machine", "notes", "cells", "plot", "training"}
CELL_KEYS = {"key", "label", "rules", "mrx", "detectives", "metric", "subject", "n", "seeds",
             "wins", "mrx_wins", "detective_wins", "rate", "ci95", "published",
             "published_source", "verdict", "differs", "command", "mean_moves", "cpu_seconds"}
#: The London MCTS experiments are played on two of their cells (one game costs seconds).
SAMPLE_CELLS = {"nijssen-lc": ["basic-mcts-vs-greedy", "basic-mcts-vs-greedy-lc"],
                "nijssen-cr": ["basic-mcts-r0.0", "greedy-mcts+lc-r0.25"]}


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([YARD, "reproduce", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def check_shape(report: dict[str, Any], games: int) -> None:
    assert set(report) >= REPORT_KEYS
    assert report["cells"]
    for cell in report["cells"]:
        assert set(cell) >= CELL_KEYS
        assert cell["n"] == games
        assert cell["mrx_wins"] + cell["detective_wins"] <= games
        lo, hi = cell["ci95"]
        assert 0 <= lo <= cell["rate"] <= hi <= 1
        assert cell["command"].startswith(f"yard reproduce {report['experiment']} --cell ")
        assert cell["verdict"] in {"agrees", "beats", "falls short", "higher", "lower", "-"}
        assert (cell["verdict"] == "-") == (cell["published"] is None)


def test_list_names_the_six() -> None:
    out = yard("--list")
    assert out.returncode == 0, out.stderr
    listed = [line.split()[0] for line in out.stdout.splitlines()]
    assert listed == NAMES


def test_every_cell_spec_makes_a_bot_for_its_ruleset() -> None:
    for exp in EXPERIMENTS.values():
        keys = [c.key for c in exp.cells]
        assert len(set(keys)) == len(keys), exp.name
        for cell in exp.cells:
            load_ruleset(cell.rules)
            for quick in (False, True):
                mrx, detectives = cell.specs(quick)
                for spec in (mrx, *detectives):
                    assert make(spec, 1).name == spec.partition(":")[0]
            assert cell.games >= cell.quick_games >= 1


@pytest.mark.parametrize("name", NAMES)
def test_tiny_quick_run_has_the_documented_shape(name: str) -> None:
    cells = [a for key in SAMPLE_CELLS.get(name, []) for a in ("--cell", key)]
    out = yard(name, "--quick", "--games", "1", "--json", *cells)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    check_shape(report, 1)
    assert report["quick"] is True and report["experiment"] == name
    if name in SAMPLE_CELLS:
        assert [c["key"] for c in report["cells"]] == SAMPLE_CELLS[name]
    else:
        assert len(report["cells"]) == len(EXPERIMENTS[name].cells)


def test_text_table_says_quick_and_shows_published_numbers() -> None:
    out = yard("warwick", "--quick", "--games", "3")
    assert out.returncode == 0, out.stderr
    assert "QUICK run" in out.stdout
    assert "26.0%" in out.stdout  # the published random-vs-random rate, beside ours
    assert "verdict" in out.stdout


def test_published_game_count_is_called_a_full_run_and_fewer_a_reduced_one() -> None:
    exp = EXPERIMENTS["warwick"].select(["rush-random"])
    assert exp.cells[0].games == 100
    full = run_experiment(exp, games=100)
    reduced = run_experiment(exp, games=7)
    assert full["full_size"] and not reduced["full_size"]
    assert "full run: 100 games per cell" in header(full)[2]
    assert header(reduced)[2].startswith("REDUCED run: 7 games per cell")
    assert header(run_experiment(exp, quick=True, games=3))[2].startswith("QUICK run")


def test_workers_do_not_change_results() -> None:
    exp = EXPERIMENTS["brno"].select(["alpha-beta-vs-dqn", "dqn-vs-random"])
    one = run_experiment(exp, quick=True, games=23, seed=5, workers=1)
    two = run_experiment(exp, quick=True, games=23, seed=5, workers=2)

    def strip(report: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in c.items() if k != "cpu_seconds"} for c in report["cells"]]

    assert strip(one) == strip(two)
    assert one["cells"][0]["seeds"] == [5, 27]


def test_cell_is_its_games_replayed() -> None:
    # A cell's count is exactly the games of seeds seed..seed+n-1 with fresh bots.
    exp = EXPERIMENTS["warwick"].select(["rush-run"])
    report = run_experiment(exp, games=7, seed=40)
    cell = exp.cells[0]
    wins = 0
    for game_seed in range(40, 47):
        result = play_game(cell.rules, make(cell.mrx), [make(cell.detectives[0])], game_seed)
        wins += result.outcome.winner is Winner.DETECTIVES
    assert report["cells"][0]["detective_wins"] == wins


def test_out_writes_markdown_json_and_png(tmp_path: Path) -> None:
    out = yard("dash", "--quick", "--games", "2", "--out", str(tmp_path / "res"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "res" / "dash-quick.md").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "res" / "dash-quick.json").read_text(encoding="utf-8"))
    png = (tmp_path / "res" / "dash-quick.png").read_bytes()
    check_shape(data, 2)
    assert png.startswith(b"\x89PNG")
    assert md.count("| `yard reproduce dash --cell ") == len(data["cells"])
    assert set(data["training"]) == {"dash-mrx", "dash-detective"}


@pytest.mark.parametrize("args", [("nope",), ("warwick", "--cell", "nope"),
                                  ("warwick", "--games", "0"), ()])
def test_bad_input_is_one_line_exit_2(args: tuple[str, ...]) -> None:
    out = yard(*args)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "error" in out.stderr.lower()
    assert "Traceback" not in out.stderr


def test_merge_refuses_overlapping_chunks_and_verdicts() -> None:
    a = ChunkResult("c", 0, 10, 3, 7, 100, 0.1)
    b = ChunkResult("c", 5, 10, 3, 7, 100, 0.1)
    with pytest.raises(ReproduceError):
        merge([a, b])
    assert merge([a, ChunkResult("c", 10, 5, 1, 4, 50, 0.1)])["seeds"] == [0, 14]
    cell = Cell("k", "l", "grid5", "random", ("random",), "detectives", 10, 1, 0.6,
                subject="mrx")
    assert verdict(cell, 0.4, 0.5) == "beats"  # Mister X holds the detectives lower
    assert verdict(cell, 0.65, 0.7) == "falls short"
    assert verdict(cell, 0.55, 0.7) == "agrees"


def test_dqn_safe_mrx_never_steps_into_reach_when_it_need_not() -> None:
    rules = load_ruleset("grid5")
    dist = rules.board.distances()
    safe, plain = make("dqn:safe=true"), make("dqn")
    differed = 0
    for game_seed in range(30):
        result = play_game(rules, safe, [make("random")], game_seed)
        state = result.start
        for seat, move in result.moves:
            if seat == 0:
                view, legal = state.view(0), state.legal_moves()
                reach = [dist[m.destination, list(view.detectives)].min() for m in legal]
                if max(reach) >= 2:
                    assert dist[move.destination, list(view.detectives)].min() >= 2
                plain.begin(rules, [0], 1)
                differed += plain.choose(view, legal) != move
            state = state.apply_unchecked(move)
    assert differed > 0  # the option changes some choices of the plain network
