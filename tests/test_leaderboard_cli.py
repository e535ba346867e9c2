"""``yard leaderboard``, ``yard matrix`` and ``yard export`` on a real SQLite file holding a
small tournament of real engine games: through the command's entry point (yard.cli.main, in
this process), and as a real subprocess in test_leaderboard_json_matches_stored_games."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from yard_cli import yard_here

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import Outcome, Termination, Winner
from tournament.schedule import make_schedule, mrx_bot, team_members

YARD = str(Path(sys.executable).with_name("yard"))
BOTS = ["random", "greedy", "greedy+random"]


def yard(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``yard ARGS`` in this process (a ``yard`` process costs about a CPU second to start)."""
    full_env = {k: v for k, v in os.environ.items() if k != "YARD_DB"} | (env or {})
    return yard_here(*args, cwd=cwd, env=full_env)


def yard_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return subprocess.run([YARD, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yard.db with a grid5 round robin (3 players, one a team; 2 pairs: 12 games), one
    aborted grid5 game
    and one warwick game outside any tournament; ``tid.txt`` holds the tournament id."""
    path = tmp_path_factory.mktemp("ratings")
    with Database.connect(f"sqlite:///{path / 'yard.db'}") as store:
        tid = store.create_tournament({"rules": "grid5", "bots": BOTS, "pairs": 2})
        for entry in store.schedule(tid, make_schedule(BOTS, pairs=2, seed=3)):
            assert entry.seed is not None
            detectives = [make_bot(name) for name in team_members(entry.detectives)]
            result = play_game("grid5", make_bot(mrx_bot(entry.mrx)), detectives,
                               seed=entry.seed)
            record = record_from_moves(f"t-{entry.index}", result.start, result.moves,
                                       {0: entry.mrx, 1: entry.detectives}, result.outcome,
                                       seed=entry.seed)
            record.schedule_id = entry.schedule_id
            store.save_game(record)
        for game_id, rules, outcome in [("aborted", "grid5", Outcome(None, Termination.ABORTED)),
                                        ("other", "warwick", None)]:
            result = play_game(rules, make_bot("run"), [make_bot("rush")], seed=1)
            store.save_game(record_from_moves(game_id, result.start, result.moves,
                                              {0: "run", 1: "rush"},
                                              outcome or result.outcome, seed=1))
    (path / "tid.txt").write_text(tid)
    return path


def stored_results(folder: Path) -> list[tuple[str, str, Winner | None]]:
    with Database.connect(f"sqlite:///{folder / 'yard.db'}") as store:
        return [(r.mrx_player, r.detective_player, r.winner)
                for r in store.results("grid5")]


def run_json(*args: str, cwd: Path,
             run: Callable[..., subprocess.CompletedProcess[str]] = yard) -> dict[str, object]:
    out = run(*args, "--json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_leaderboard_json_matches_stored_games(folder: Path) -> None:
    board = run_json("leaderboard", "--rules", "grid5", "--samples", "50", cwd=folder,
                     run=yard_process)
    results = [r for r in stored_results(folder) if r[2] is not None]
    assert board["ruleset"] == "grid5" and board["anchor"] == "random"
    assert board["games"] == len(results) == 12 and board["excluded_games"] == 1
    assert isinstance(board["mrx_advantage"], float)
    rows = board["rows"]
    assert isinstance(rows, list)
    assert sorted(r["player"] for r in rows) == sorted(BOTS)
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["elo"] for r in rows] == sorted((r["elo"] for r in rows), reverse=True)
    for row in rows:
        name = row["player"]
        assert row["mrx_wins"] == sum(m == name and w is Winner.MRX for m, _, w in results)
        assert row["detective_wins"] == sum(d == name and w is Winner.DETECTIVES
                                            for _, d, w in results)
        assert row["games"] == sum(name in (m, d) for m, d, _ in results)
        low, high = row["ci95"]
        assert low <= row["elo"] <= high or name == "random"
    assert next(r for r in rows if r["player"] == "random")["elo"] == 0.0


def test_leaderboard_is_reproducible_and_role_sorted(folder: Path) -> None:
    args = ("leaderboard", "--rules", "grid5", "--samples", "30", "--seed", "4")
    assert run_json(*args, cwd=folder) == run_json(*args, cwd=folder)
    by_role = run_json(*args, "--role", "detectives", cwd=folder)
    rows = by_role["rows"]
    assert isinstance(rows, list) and by_role["role"] == "detectives"
    ratings = [r["elo_detectives"] for r in rows]
    assert ratings == sorted(ratings, reverse=True)


def test_leaderboard_sections_and_table(folder: Path) -> None:
    data = run_json("leaderboard", "--samples", "20", cwd=folder)
    sections = data["rulesets"]
    assert isinstance(sections, list)
    assert [s["ruleset"] for s in sections] == ["grid5", "warwick"]
    tid = (folder / "tid.txt").read_text()
    out = yard("leaderboard", "--tournament", tid, "--samples", "20", cwd=folder)
    assert out.returncode == 0, out.stderr
    assert "Leaderboard · grid5" in out.stdout and "anchor random = 0" in out.stdout
    assert "warwick" not in out.stdout and "12 games" in out.stdout


def test_matrix_json_cells_and_png(folder: Path, tmp_path: Path) -> None:
    png = tmp_path / "m.png"
    matrix = run_json("matrix", "--rules", "grid5", "--png", str(png), cwd=folder)
    results = [r for r in stored_results(folder) if r[2] is not None]
    counts = Counter((d, m) for m, d, _ in results)
    det_wins = Counter((d, m) for m, d, w in results if w is Winner.DETECTIVES)
    cells = matrix["cells"]
    assert isinstance(cells, list)
    assert sum(c["games"] for row in cells for c in row) == len(results)
    for row in cells:
        for cell in row:
            key = (cell["detectives"], cell["mrx"])
            assert (cell["games"], cell["detective_wins"]) == (counts[key], det_wins[key])
    assert png.read_bytes()[:4] == b"\x89PNG"
    table = yard("matrix", "--rules", "grid5", cwd=folder)
    assert "Detectives' win rate · grid5" in table.stdout and "n=" in table.stdout


def test_export_games_turns_ratings(folder: Path, tmp_path: Path) -> None:
    games = yard("export", "--what", "games", "--format", "csv", cwd=folder)
    rows = list(csv.DictReader(io.StringIO(games.stdout)))
    assert len(rows) == 14 and {r["winner"] for r in rows} >= {"", "mrx", "detectives"}
    turns_file = tmp_path / "turns.json"
    out = yard("export", "--what", "turns", "--format", "json", "--rules", "warwick",
               "--out", str(turns_file), cwd=folder)
    assert out.returncode == 0, out.stderr
    turns = json.loads(turns_file.read_text())
    with Database.connect(f"sqlite:///{folder / 'yard.db'}") as store:
        assert len(turns) == len(store.load_game("other").turns)
    assert turns[0]["game_id"] == "other" and turns[0]["seat"] == 0
    dash = yard("export", "--what", "turns", "--format", "json", "--rules", "warwick",
                "--out", "-", cwd=folder)
    assert json.loads(dash.stdout) == turns and not (folder / "-").exists()
    ratings = yard("export", "--what", "ratings", "--format", "csv", "--samples", "20",
                   cwd=folder)
    rated = list(csv.DictReader(io.StringIO(ratings.stdout)))
    assert [r["ruleset"] for r in rated].count("grid5") == 3
    assert float(next(r for r in rated if r["player"] == "random"
                      and r["ruleset"] == "grid5")["elo"]) == 0.0


def test_empty_database_is_a_clear_message(tmp_path: Path) -> None:
    Database.connect(f"sqlite:///{tmp_path / 'yard.db'}").close()
    out = yard("leaderboard", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == ""
    assert "no decided games in sqlite:///yard.db" in out.stderr
    assert json.loads(yard("matrix", "--json", cwd=tmp_path).stdout) == {"rulesets": []}
    empty = json.loads(yard("leaderboard", "--json", "--rules", "dash", cwd=tmp_path).stdout)
    assert empty["rows"] == [] and empty["ruleset"] == "dash"


@pytest.mark.parametrize("args", [
    ("leaderboard", "--tournament", "nosuch"),
    ("matrix", "--tournament", "nosuch"),
    ("export", "--what", "games", "--tournament", "nosuch"),
])
def test_unknown_tournament_is_one_line_error(folder: Path, args: tuple[str, ...]) -> None:
    out = yard(*args, cwd=folder)
    assert out.returncode == 2
    assert out.stderr.startswith("error: no tournament 'nosuch'")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_missing_database_and_unknown_anchor_are_errors(tmp_path: Path, folder: Path) -> None:
    out = yard("leaderboard", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: no database file")
    out = yard("leaderboard", "--rules", "grid5", "--anchor", "rush", cwd=folder)
    assert out.returncode == 2 and out.stderr.startswith("error: anchor 'rush' played")
