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
from bots.dqn.policy import load_weights
from game import Winner, load_ruleset
from tests.yard_cli import yard_here
from yard.reproduce import EXPERIMENTS, run_experiment
from yard.reproduce.gains import difference_interval, gains
from yard.reproduce.model import (
    Cell,
    ChunkResult,
    ReproduceError,
    make,
    merge,
    verdict,
    with_iterations,
)
from yard.reproduce.progress import ProgressLine, format_duration
from yard.reproduce.report import header

ROOT = Path(__file__).resolve().parents[2]
YARD = str(Path(sys.executable).parent / "yard")
NAMES = ["warwick", "brno", "nijssen-lc", "nijssen-cr", "dash", "bristol"]
REPORT_KEYS = {"experiment", "title", "source", "quick", "budget", "seed", "workers", "games",
               "date", "machine", "notes", "cells", "plot", "training", "train_games",
               "eval_games", "training_runs", "gains"}
CELL_KEYS = {"key", "label", "rules", "mrx", "detectives", "metric", "subject", "n", "seeds",
             "wins", "mrx_wins", "detective_wins", "rate", "ci95", "published",
             "published_source", "verdict", "differs", "command", "mean_moves", "cpu_seconds",
             "training", "train_cpu_seconds"}
RUN_KEYS = {"variant", "label", "arch", "hidden", "rewards", "opponents", "seed", "games",
            "eval_every", "eval_games", "eps_decay_games", "comparisons", "evals", "kept_eval",
            "weights", "command", "seconds", "cpu_seconds"}
#: brno's trained cells train a few games only in the shape tests (the quick budget is 300),
#: evaluated on a few games (the quick budget is 50 an evaluation).
TINY_TRAINING = {"brno": ["--train-games", "2", "--eval-games", "3"]}
#: The London MCTS experiments are played on two of their cells (one game costs seconds).
SAMPLE_CELLS = {"nijssen-lc": ["basic-mcts-vs-greedy", "basic-mcts-vs-greedy-lc"],
                "nijssen-cr": ["basic-mcts-r0.0", "greedy-mcts+lc-r0.25"]}


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    """``yard reproduce ARGS`` in this process: the games are the command's work, starting
    a process and importing yard (torch for some experiments) would cost seconds a call.
    The real command runs in :func:`test_list_names_the_six` and where a test replays a
    report's recorded command."""
    return yard_here("reproduce", *args, cwd=ROOT)


def yard_process(*args: str) -> subprocess.CompletedProcess[str]:
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
    by_key = {c["key"]: c for c in report["cells"]}
    for gain in report["gains"]:
        cell, base = by_key[gain["key"]], by_key[gain["baseline"]]
        assert gain["gain"] == pytest.approx(cell["rate"] - base["rate"])
        lo, hi = gain["ci95"]
        assert -1 <= lo <= gain["gain"] <= hi <= 1
        assert gain["significant"] in {"gain", "loss", "no significant change"}


def test_list_names_the_six() -> None:
    out = yard_process("--list")
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
    out = yard(name, "--quick", "--games", "1", "--json", *cells, *TINY_TRAINING.get(name, []))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    check_shape(report, 1)
    assert report["quick"] is True and report["experiment"] == name
    if name in SAMPLE_CELLS:
        assert [c["key"] for c in report["cells"]] == SAMPLE_CELLS[name]
    else:
        assert len(report["cells"]) == len(EXPERIMENTS[name].cells)
    # Only nijssen-lc's sample holds a baseline (without LC) and its enhanced cell.
    assert [g["key"] for g in report["gains"]] == (
        ["basic-mcts-vs-greedy-lc"] if name == "nijssen-lc" else [])


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


def test_trained_cells_report_curves_plots_and_the_same_run_as_yard_train(
        tmp_path: Path) -> None:
    # Figures 6.4-6.5: each trained variant has a curve, a test cell and its weights; the
    # recorded `yard train dqn` command makes the same run (same evaluation curve).
    keys = ["trained-mlp", "trained-cnn", "trained-reward-shaping", "random-vs-dqn"]
    out = yard("brno", "--quick", "--games", "2", "--train-games", "3", "--eval-games", "4",
               "--json",
               "--out", str(tmp_path / "res"), *(a for k in keys for a in ("--cell", k)))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    check_shape(report, 2)
    runs = report["training_runs"]
    assert list(runs) == ["mlp", "cnn", "reward-shaping"]
    for run in runs.values():
        assert set(run) >= RUN_KEYS
        assert run["games"] == 3 and [e["games"] for e in run["evals"]] == [1, 2, 3]
        assert run["eval_games"] == 4 and "--eval-games 4" in run["command"]
        assert all(0 <= e["random"] <= 1 for e in run["evals"])
        assert Path(run["weights"]).is_file()
    assert runs["reward-shaping"]["rewards"]["mrx_far"] == 0.3
    assert (runs["cnn"]["arch"], runs["mlp"]["arch"]) == ("cnn", "mlp")
    trained = [c for c in report["cells"] if c["training"]]
    assert [c["training"] for c in trained] == list(runs)
    for cell in trained:
        assert cell["mrx"] == f"dqn:weights={runs[cell['training']]['weights']}"
        assert cell["published"] == 0.9665 and "--train-games 3" in cell["command"]
        assert "--eval-games 4" in cell["command"]
    res = tmp_path / "res"
    for plot in ("brno-quick-architecture.png", "brno-quick-reward.png", "brno-quick.png"):
        assert (res / plot).read_bytes().startswith(b"\x89PNG")
    assert "| trained variant |" in (res / "brno-quick.md").read_text(encoding="utf-8")
    # The same run from its recorded command.
    run = runs["reward-shaping"]
    command = run["command"].split()
    assert command[:3] == ["yard", "train", "dqn"] and "--reward-mrx-far" in command
    again = yard_here(*command[1:-1], str(tmp_path / "again.npz"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert load_weights(tmp_path / "again.npz")[0]["training"]["evals"] == run["evals"]


def test_trained_cells_do_not_depend_on_workers() -> None:
    exp = EXPERIMENTS["brno"].select(["trained-scorer", "trained-reward-terminal"])
    one = run_experiment(exp, quick=True, games=12, seed=3, workers=1, train_games=4,
                         eval_games=5)
    two = run_experiment(exp, quick=True, games=12, seed=3, workers=2, train_games=4,
                         eval_games=5)
    assert one["training_runs"]["scorer"]["seed"] == 3 + 2_000_000

    def strip(report: dict[str, Any]) -> list[Any]:
        runs = [{k: v for k, v in r.items() if k not in {"seconds", "cpu_seconds"}}
                for r in report["training_runs"].values()]
        cells = [{k: v for k, v in c.items()
                  if k not in {"cpu_seconds", "train_cpu_seconds", "mrx"}}
                 for c in report["cells"]]
        return [runs, cells]

    assert strip(one) == strip(two)
    assert one["training_runs"]["scorer"]["weights"] is None  # a temporary directory


@pytest.mark.parametrize("args", [("nope",), ("warwick", "--cell", "nope"),
                                  ("warwick", "--games", "0"), (),
                                  ("brno", "--cell", "trained-mlp", "--train-games", "0"),
                                  ("brno", "--cell", "trained-mlp", "--eval-games", "0")])
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


def _chunk(games: int) -> ChunkResult:
    return ChunkResult(cell="c", seed=1, games=games, mrx_wins=0, detective_wins=games,
                       moves=games, seconds=0.0)


def test_progress_off_a_terminal_writes_a_line_a_minute_with_time_left() -> None:
    now = [0.0]
    lines: list[str] = []
    progress = ProgressLine("brno", 100, live=False, interval=60, write=lines.append,
                            clock=lambda: now[0])
    now[0] = 30.0
    progress(_chunk(10))
    assert lines == []  # under a minute: nothing yet
    now[0] = 90.0
    progress(_chunk(20))
    assert lines == ["brno: 30/100 games (30%), 0.3 games/s, 1m30s elapsed, "
                     "about 3m30s left\n"]
    now[0] = 100.0
    progress(_chunk(10))
    assert len(lines) == 1  # the next line waits another minute
    now[0] = 120.0
    progress(_chunk(60))  # the end: one closing line, since the run was long enough to show
    assert lines[-1] == "brno: 100/100 games (100%), 0.8 games/s, 2m00s elapsed\n"


def test_progress_of_a_short_run_off_a_terminal_is_silent() -> None:
    lines: list[str] = []
    progress = ProgressLine("warwick", 20, live=False, write=lines.append, clock=lambda: 5.0)
    progress(_chunk(10))
    progress(_chunk(10))
    assert lines == []


def test_progress_on_a_terminal_rewrites_one_line() -> None:
    lines: list[str] = []
    progress = ProgressLine("dash", 20, live=True, write=lines.append)
    progress(_chunk(10))
    progress(_chunk(10))
    assert lines == ["\rdash: 10/20 games", "\rdash: 20/20 games\n"]
    assert [format_duration(s) for s in (0, 59.4, 61, 3600, 7385)] == [
        "0s", "59s", "1m01s", "1h00m", "2h03m"]


def _run_to(tmp_path: Path, name: str, *args: str) -> Path:
    out = yard("warwick", *args, "--out", str(tmp_path / name))
    assert out.returncode == 0, out.stderr
    return tmp_path / name / "warwick.json"


def test_merge_adds_up_runs_on_adjoining_seeds_exactly(tmp_path: Path) -> None:
    a = _run_to(tmp_path, "a", "--cell", "rush-run", "--cell", "random-random", "--games", "6")
    b = _run_to(tmp_path, "b", "--cell", "rush-run", "--games", "5", "--seed", "7")
    merged = yard("--merge", str(a), "--merge", str(b), "--json")
    assert merged.returncode == 0, merged.stderr
    report = json.loads(merged.stdout)
    whole = json.loads(yard("warwick", "--cell", "rush-run", "--cell", "random-random",
                            "--games", "11", "--json").stdout)
    random_random, rush = report["cells"]  # in the experiment's order, not the files'
    assert report["gains"] == []  # warwick's cells have no baseline series
    assert rush["key"] == "rush-run" and random_random["key"] == "random-random"
    assert random_random["n"] == 6 and random_random["seeds"] == [1, 6]

    def played(cell: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in cell.items() if k != "cpu_seconds"}

    whole_rush = next(c for c in whole["cells"] if c["key"] == "rush-run")
    assert played(rush) == played(whole_rush)  # n, wins, interval, verdict, command
    assert rush["command"] == "yard reproduce warwick --cell rush-run --games 11 --seed 1"
    assert [m["seed"] for m in report["merged_from"]] == [1, 7]
    assert report["full_size"] is False and report["games"] is None
    text = yard("--merge", str(a), "--merge", str(b), "--out", str(tmp_path / "merged"))
    assert "REDUCED" in text.stdout and "merged" in text.stdout
    # A merged report is a report: it merges again, with the next seeds.
    c = _run_to(tmp_path, "c", "--cell", "rush-run", "--games", "2", "--seed", "12")
    again = json.loads(yard("--merge", str(tmp_path / "merged" / "warwick.json"), "--merge",
                            str(c), "--json").stdout)
    assert [(x["key"], x["n"], x["seeds"]) for x in again["cells"]] == [
        ("random-random", 6, [1, 6]), ("rush-run", 13, [1, 13])]


def test_merge_refuses_what_does_not_add_up(tmp_path: Path) -> None:
    a = _run_to(tmp_path, "a", "--cell", "rush-run", "--games", "3")
    gap = _run_to(tmp_path, "gap", "--cell", "rush-run", "--games", "3", "--seed", "6")
    other = json.loads(a.read_text())
    other["cells"][0]["mrx"] = "random"
    other["cells"][0]["seeds"] = [4, 6]
    other_bots = tmp_path / "other.json"
    other_bots.write_text(json.dumps(other))
    trained = json.loads(a.read_text())
    trained["cells"][0]["training"] = "mlp"
    trained_path = tmp_path / "trained.json"
    trained_path.write_text(json.dumps(trained))
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    cases = {("--merge", str(a), "--merge", str(a)): "overlap",
             ("--merge", str(a), "--merge", str(gap)): "missing",
             ("--merge", str(a), "--merge", str(other_bots)): "different mrx",
             ("--merge", str(a), "--merge", str(trained_path)): "trains its own",
             ("--merge", str(a), "--merge", str(junk)): "not a yard reproduce report",
             ("--merge", str(a)): "at least two",
             ("brno", "--merge", str(a), "--merge", str(gap)): "not 'brno'",
             ("--merge", str(a), "--merge", str(gap), "--seed", "2"): "--seed"}
    for args, expected in cases.items():
        out = yard(*args)
        assert out.returncode == 2, (args, out.stdout)
        assert expected in out.stderr and out.stderr.count("\n") == 1, (args, out.stderr)


def test_iterations_sets_every_mcts_budget_and_says_so() -> None:
    assert with_iterations("mcts:iterations=10000,lc=true,time=0", 500) == (
        "mcts:iterations=500,lc=true,time=0")
    assert with_iterations("mcts", 7) == "mcts:iterations=7"
    assert with_iterations("greedy", 7) == "greedy"
    out = yard("nijssen-lc", "--cell", "basic-mcts-vs-greedy-lc", "--games", "2", "--seed", "3",
               "--iterations", "20", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    (cell,) = report["cells"]
    assert cell["detectives"] == ["mcts:iterations=20,time=0,lc=true"]
    assert cell["mrx"] == "greedy"
    assert cell["command"].endswith("--seed 3 --iterations 20")
    assert report["iterations"] == 20 and report["full_size"] is False
    assert "every MCTS bot at 20 iterations per move" in header(report)[2]
    # The row's command replays the cell: same games, same counts.
    again = json.loads(subprocess.run([YARD, *cell["command"].split()[1:], "--json"],
                                      capture_output=True, text=True, cwd=ROOT).stdout)
    assert [(c["mrx_wins"], c["detective_wins"], c["mean_moves"]) for c in again["cells"]] == [
        (cell["mrx_wins"], cell["detective_wins"], cell["mean_moves"])]
    # A cell without MCTS is not changed by it: full size, and no --iterations in its command.
    plain = run_experiment(EXPERIMENTS["warwick"].select(["rush-random"]), iterations=20)
    assert plain["full_size"] and "--iterations" not in plain["cells"][0]["command"]


def test_difference_interval_is_newcombes_method_10() -> None:
    from bots.arena import wilson_interval

    # Newcombe (1998), Statistics in Medicine 17:873, table II: 56/70 - 48/80.
    d, lo, hi = difference_interval(56, 70, wilson_interval(56, 70), 48, 80,
                                    wilson_interval(48, 80))
    assert d == pytest.approx(0.2)
    assert (round(lo, 4), round(hi, 4)) == (0.0524, 0.3339)


def _gain_row(key: str, series: str, x: float | None, wins: int, n: int,
              published: float | None) -> dict[str, Any]:
    from bots.arena import wilson_interval

    return {"key": key, "label": key.upper(), "series": series, "x": x, "wins": wins, "n": n,
            "ci95": list(wilson_interval(wins, n)), "published": published,
            "metric": "detectives", "subject": "detectives"}


def test_gains_compare_each_cell_with_its_series_baseline() -> None:
    rows = [_gain_row("a0", "A", 0.0, 500, 1000, 0.477),
            _gain_row("a1", "A", 0.375, 560, 1000, 0.540),
            _gain_row("a2", "A", 0.5, 470, 1000, None),
            _gain_row("b1", "B", 1.0, 900, 1000, 0.9),  # its baseline is not in the report
            _gain_row("c", "", None, 10, 20, None)]
    out = {g["key"]: g for g in gains(rows)}
    assert set(out) == {"a1", "a2"}
    assert out["a1"]["baseline"] == "a0" and out["a1"]["baseline_label"] == "A0"
    assert out["a1"]["gain"] == pytest.approx(0.06)
    assert out["a1"]["significant"] == "gain" and out["a1"]["ci95"][0] > 0
    assert out["a1"]["published"] == pytest.approx(0.063)
    assert out["a1"]["verdict"] == "agrees"
    assert out["a2"]["significant"] == "no significant change"
    assert out["a2"]["published"] is None and out["a2"]["verdict"] == "-"
    rows[2] = _gain_row("a2", "A", 0.5, 400, 1000, None)
    assert {g["key"]: g["significant"] for g in gains(rows)}["a2"] == "loss"


def test_merged_gains_are_recomputed_on_the_totals(tmp_path: Path) -> None:
    def part(name: str, seed: str) -> Path:
        out = yard("nijssen-cr", "--cell", "basic-mcts-r0.0", "--cell", "basic-mcts-r0.375",
                   "--iterations", "5", "--games", "2", "--seed", seed, "--out",
                   str(tmp_path / name))
        assert out.returncode == 0, out.stderr
        assert "change over the baseline" in out.stdout
        return tmp_path / name / "nijssen-cr.json"

    merged = yard("--merge", str(part("a", "1")), "--merge", str(part("b", "3")), "--out",
                  str(tmp_path / "m"))
    assert merged.returncode == 0, merged.stderr
    report = json.loads((tmp_path / "m" / "nijssen-cr.json").read_text())
    assert report["gains"] == gains(report["cells"])
    (gain,) = report["gains"]
    assert gain["key"] == "basic-mcts-r0.375" and gain["published"] == pytest.approx(0.063)
    md = (tmp_path / "m" / "nijssen-cr.md").read_text()
    assert "| change over |" in md and "| +6.3 |" in md
