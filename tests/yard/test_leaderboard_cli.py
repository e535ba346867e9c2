"""``yard leaderboard``, ``yard matrix`` and ``yard export`` on a real SQLite file holding a
small tournament of real engine games: through the command's entry point (yard.cli.main, in
this process), and as a real subprocess in test_leaderboard_json_matches_stored_games."""

from __future__ import annotations

import csv
import dataclasses
import fcntl
import io
import json
import os
import random
import struct
import subprocess
import termios
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import Outcome, Termination, Winner
from ratings.render import output_width
from records import ComputeRow
from tests.yard.commands import yard, yard_process
from tournament.compute import compute_summary
from tournament.report import tournament_report
from tournament.schedule import make_schedule, mrx_bot, team_members

BOTS = ["random", "greedy", "greedy+random"]


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


# Tables at 80 columns (a default terminal, a pipe, a log file): a pool of seven players with
# long names, decided by a fixed strength order with some upsets.
POOL = ["dqn+alphabeta", "alphabeta", "run2/rush", "mcts", "greedy+random", "greedy", "random"]


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yard.db with a grid5 round robin of :data:`POOL` (3 pairs a pairing: 126 games),
    stored as decided games without moves (the runner's forfeit records); ``tid.txt``."""
    path = tmp_path_factory.mktemp("pool")
    draw = random.Random(5)
    with Database.connect(f"sqlite:///{path / 'yard.db'}") as store:
        tid = store.create_tournament({"rules": "grid5", "bots": POOL, "pairs": 3})
        for entry in store.schedule(tid, make_schedule(POOL, pairs=3, seed=1)):
            gap = POOL.index(entry.detectives) - POOL.index(entry.mrx)  # > 0: Mr X stronger
            mrx_wins = draw.random() < 1 / (1 + 10 ** (-0.6 * gap - 0.2))
            store.record_forfeit(tid, entry, Outcome(Winner.MRX, Termination.SURVIVED)
                                 if mrx_wins else Outcome(Winner.DETECTIVES, Termination.CAUGHT))
    (path / "tid.txt").write_text(tid)
    return path


def interval(elo: float, ci: list[float]) -> str:
    """``+866 [786,946]``: how the tables print an Elo and its 95% interval."""
    return f"{round(elo):+d} [{round(ci[0])},{round(ci[1])}]"


def row_lines(text: str, names: list[str]) -> dict[str, str]:
    """The one table line of each player: a cell that is exactly its name."""
    lines = {name: [line for line in text.splitlines()
                    if name in (cell.strip() for cell in line.split("│"))] for name in names}
    assert all(len(found) == 1 for found in lines.values()), lines
    return {name: found[0] for name, found in lines.items()}


def no_line_over(text: str, width: int) -> None:
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, too_long


NO_COLUMNS = {k: v for k, v in os.environ.items() if k not in ("YARD_DB", "COLUMNS")}


def test_leaderboard_fits_80_columns_and_shows_more_when_wider(pool: Path) -> None:
    args = ("leaderboard", "--rules", "grid5", "--samples", "60", "--seed", "2")
    rows = run_json(*args, cwd=pool)["rows"]
    assert isinstance(rows, list) and rows[0]["player"] == "dqn+alphabeta"
    narrow = yard(*args, cwd=pool, env=NO_COLUMNS)        # output is a pipe: 80 columns
    assert narrow.returncode == 0, narrow.stderr
    no_line_over(narrow.stdout, 80)
    lines = row_lines(narrow.stdout, POOL)
    for row in rows:   # whole name, and the interval on the name's line
        shown = "0 (anchor)" if row["player"] == "random" else interval(row["elo"], row["ci95"])
        assert shown in lines[row["player"]]
        assert f" {row['games']} " in lines[row["player"]]
    assert any(r["ci95"][1] - r["elo"] > 400 for r in rows)   # wide, 4-digit intervals
    assert "Elo Mr X" not in narrow.stdout and "LOS" in narrow.stdout
    assert "Mister X advantage" in narrow.stdout and "anchor random = 0" in narrow.stdout

    wide = yard(*args, cwd=pool, env=NO_COLUMNS | {"COLUMNS": "120"})
    no_line_over(wide.stdout, 120)
    assert "Elo Mr X" in wide.stdout and "Elo det." in wide.stdout
    lines = row_lines(wide.stdout, POOL)
    for row in rows:
        if row["elo_mrx"] is not None and row["player"] != "random":
            assert f"{round(row['elo_mrx']):+d}" in lines[row["player"]]

    by_role = run_json(*args, "--role", "mrx", cwd=pool)["rows"]
    assert isinstance(by_role, list)
    role = yard(*args, "--role", "mrx", cwd=pool, env=NO_COLUMNS)
    no_line_over(role.stdout, 80)
    lines = row_lines(role.stdout, POOL)
    for row in by_role:       # sorted by it: the role's Elo keeps its interval at 80
        assert interval(row["elo_mrx"], row["ci95_mrx"]) in lines[row["player"]]


def test_matrix_fits_80_columns_with_a_column_legend(pool: Path) -> None:
    cells = run_json("matrix", "--rules", "grid5", cwd=pool)["cells"]
    assert isinstance(cells, list)
    narrow = yard("matrix", "--rules", "grid5", cwd=pool, env=NO_COLUMNS)
    assert narrow.returncode == 0, narrow.stderr
    no_line_over(narrow.stdout, 80)
    legend = " ".join(narrow.stdout.split("Mister X: ")[1].split())
    assert legend == ", ".join(f"{i}={name}" for i, name in enumerate(POOL, 1))
    lines = row_lines(narrow.stdout, POOL)          # row labels: whole names
    for row in cells:
        rates = [f"{c['rate']:.2f}" if c["games"] else "·" for c in row]
        assert lines[row[0]["detectives"]].split("│")[2:-1] == [f" {r:>4} " for r in rates]

    wide = yard("matrix", "--rules", "grid5", cwd=pool, env=NO_COLUMNS | {"COLUMNS": "200"})
    no_line_over(wide.stdout, 200)
    assert "Mister X: " not in wide.stdout and all(f" {name} ┃" in wide.stdout for name in POOL)
    assert " n=3" in wide.stdout


def test_end_report_fits_80_columns(pool: Path) -> None:
    tid = (pool / "tid.txt").read_text()
    compute = compute_summary([ComputeRow("dqn+alphabeta", "1", 40, 8.0, 0, 0, 90_000, 40,
                                          200, 40),
                               ComputeRow("mcts", "1", 40, 8.0, 400_000, 40),
                               ComputeRow("run2/rush", None, 40, 0.04)])
    with Database.connect(f"sqlite:///{pool / 'yard.db'}", create=False) as store:
        report = dataclasses.replace(tournament_report(store, tid, samples=40),
                                     compute=compute)
    texts = {}
    for width in (80, 130):
        out = io.StringIO()
        report.render(Console(file=out, width=width))
        texts[width] = out.getvalue()
        no_line_over(texts[width], width)
    assert report.board is not None
    leaderboard, matrix = texts[80].split("Detectives' win rate")
    lines = row_lines(leaderboard, POOL)
    for row in report.board.rows:
        assert row.ci is not None
        shown = "0 (anchor)" if row.player == "random" else interval(row.elo, list(row.ci))
        assert shown in lines[row.player]
    assert row_lines(matrix.split("Compute per move")[0], POOL)
    compute_lines = row_lines(matrix.split("Compute per move")[1], list(compute))
    assert "2,250" in compute_lines["dqn+alphabeta"] and "0.200 s" in compute_lines["mcts"]
    assert "10,000" in compute_lines["mcts"] and "0.001 s" in compute_lines["run2/rush"]
    assert "playouts/move" in texts[130] and "Elo Mr X" in texts[130]
    assert "Elo Mr X" not in texts[80]


def test_output_width_pipe_columns_and_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_width(io.StringIO()) == 80
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 132, 0, 0))
    with os.fdopen(side, "w") as terminal:
        assert output_width(terminal) == 132
        monkeypatch.setenv("COLUMNS", "100")
        assert output_width(terminal) == output_width(io.StringIO()) == 100
    os.close(main)


def test_games_table_fits_80_columns(pool: Path) -> None:
    out = yard("games", "--limit", "5", cwd=pool, env=NO_COLUMNS)
    assert out.returncode == 0, out.stderr
    no_line_over(out.stdout, 80)
    with Database.connect(f"sqlite:///{pool / 'yard.db'}", create=False) as store:
        newest = store.list_games(limit=5)
    for game in newest:     # ids whole (yard replay takes them), players on the same line
        line = next(line for line in out.stdout.splitlines() if f" {game.game_id} " in line)
        assert f" {game.mrx_player} " in line and f" {game.detective_player} " in line
    wide = yard("games", "--limit", "5", cwd=pool, env=NO_COLUMNS | {"COLUMNS": "150"})
    assert "finished (UTC)" in wide.stdout and "tournament" in wide.stdout
