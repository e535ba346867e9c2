"""The win-rate matrix: cells equal the counts of the games given, self-play diagonal,
ordering, JSON form, rich table and heatmap image."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from rich.console import Console

from ratings.matrix import win_rate_matrix
from ratings.outcomes import GameOutcome
from ratings.render import cell_text, matrix_table, save_heatmap
from ratings.stats import wilson_interval


def random_games(seed: int, n: int = 200) -> list[GameOutcome]:
    rng = random.Random(seed)
    names = ["random", "rush", "greedy", "dqn+greedy"]
    return [GameOutcome(rng.choice(names[:3]), rng.choice(names), rng.random() < 0.4,
                        None, "grid5") for _ in range(n)]


def test_cells_equal_counts_of_the_games() -> None:
    data = random_games(1)
    matrix = win_rate_matrix(data)
    assert set(matrix.columns) == {"random", "rush", "greedy"}
    assert set(matrix.rows) == {"random", "rush", "greedy", "dqn+greedy"}
    total = 0
    for det, mrx in itertools.product(matrix.rows, matrix.columns):
        cell = matrix.cell(det, mrx)
        played = [g for g in data if g.detectives == det and g.mrx == mrx]
        assert cell.games == len(played)
        assert cell.detective_wins == sum(not g.mrx_won for g in played)
        if played:
            assert cell.ci == wilson_interval(cell.detective_wins, cell.games)
        total += cell.games
    assert total == len(data)


def test_self_play_diagonal_is_marked() -> None:
    data = [GameOutcome("a", "b", False, None, "g"), GameOutcome("b", "a", True, None, "g")]
    assert not win_rate_matrix(data).has_self_play
    data.append(GameOutcome("a", "a", False, None, "g"))
    matrix = win_rate_matrix(data)
    assert matrix.has_self_play
    assert matrix.cell("a", "a").self_play and not matrix.cell("a", "b").self_play
    assert cell_text(matrix.cell("a", "a")).endswith("n=1*")
    assert cell_text(matrix.cell("b", "b")) == "·"


def test_order_is_kept_and_unknown_players_follow() -> None:
    data = random_games(2, 60)
    matrix = win_rate_matrix(data, order=["rush", "random"])
    assert matrix.columns == ("rush", "random", "greedy")
    assert matrix.rows[:2] == ("rush", "random")


def test_to_dict_and_table() -> None:
    data = [GameOutcome("rush", "random", False, None, "grid5")] * 3 + \
        [GameOutcome("rush", "random", True, None, "grid5")]
    matrix = win_rate_matrix(data)
    cell = matrix.to_dict()["cells"][0][0]
    assert (cell["games"], cell["detective_wins"], cell["rate"]) == (4, 3, 0.75)
    assert matrix.to_dict()["ruleset"] == "grid5"
    console = Console(width=120, record=True)
    console.print(matrix_table(matrix))
    assert "0.75 [0.30–0.95] n=4" in console.export_text()


def test_heatmap_png(tmp_path: Path) -> None:
    data = [*random_games(3, 80), GameOutcome("rush", "rush", True, None, "grid5")]
    out = save_heatmap(win_rate_matrix(data), tmp_path / "matrix.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 5000
