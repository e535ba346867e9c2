"""Rich tables for leaderboards and win-rate matrices, and the matrix heatmap image.

>>> from ratings.outcomes import GameOutcome
>>> from ratings.matrix import win_rate_matrix
>>> table = matrix_table(win_rate_matrix([GameOutcome("rush", "random", False, None, "g")]))
>>> table.row_count
1
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ratings.leaderboard import Leaderboard, LeaderboardRow, Role
from ratings.matrix import Cell, Matrix


def _elo(value: float | None) -> str:
    return "—" if value is None else f"{value:+.0f}"


def _ci(value: float, ci: tuple[float, float] | None) -> str:
    if ci is None:
        return f"{value:+.0f}"
    return f"{value:+.0f} [{ci[0]:+.0f}, {ci[1]:+.0f}]"


def _wins(games: int, wins: int) -> str:
    return f"{wins}/{games}" if games else "—"


def leaderboard_caption(board: Leaderboard) -> str:
    """One line: ruleset, anchor, Mister X advantage, games and bootstrap settings."""
    adv = _ci(board.mrx_advantage, board.mrx_advantage_ci)
    excluded = f", {board.excluded} aborted excluded" if board.excluded else ""
    return (f"{board.ruleset}: anchor {board.anchor} = 0, Mister X advantage {adv} Elo, "
            f"{board.games} games{excluded}; 95% CI by bootstrap over pairs "
            f"({board.samples} samples, seed {board.seed}); LOS = P(stronger than next row)")


def leaderboard_table(board: Leaderboard) -> Table:
    """The leaderboard as a rich table."""
    title = f"Leaderboard · {board.ruleset}"
    if board.role is not None:
        title += f" · sorted by Elo as {board.role.value}"
    table = Table(title=title, caption=leaderboard_caption(board))
    for name in ("#", "player", "Elo [95% CI]", "Elo as Mr X", "Elo as det.", "games",
                 "wins as Mr X", "wins as det.", "LOS"):
        table.add_column(name, justify="left" if name == "player" else "right")
    for row in board.rows:
        table.add_row(*_leaderboard_cells(row, board.role, row.player == board.anchor))
    return table


def _leaderboard_cells(row: LeaderboardRow, role: Role | None, anchor: bool) -> list[str]:
    elo = "0 (anchor)" if anchor else _ci(row.elo, row.ci)
    mrx, det = _elo(row.elo_mrx), _elo(row.elo_det)
    if role is Role.MRX and row.elo_mrx is not None:
        mrx = _ci(row.elo_mrx, row.ci_mrx)
    if role is Role.DETECTIVES and row.elo_det is not None:
        det = _ci(row.elo_det, row.ci_det)
    los = "" if row.superiority is None else f"{row.superiority:.2f}"
    return [str(row.rank), row.player, elo, mrx, det, str(row.games),
            _wins(row.as_mrx.games, row.as_mrx.wins), _wins(row.as_det.games, row.as_det.wins),
            los]


def cell_text(cell: Cell) -> str:
    """``"0.62 [0.48–0.74] n=40"``, ``"·"`` without games; ``"*"`` marks self-play."""
    if cell.games == 0 or cell.rate is None or cell.ci is None:
        return "·"
    mark = "*" if cell.self_play else ""
    return f"{cell.rate:.2f} [{cell.ci[0]:.2f}–{cell.ci[1]:.2f}] n={cell.games}{mark}"


def matrix_table(matrix: Matrix) -> Table:
    """The matrix as a rich table: detectives down, Mister X across."""
    title = "Detectives' win rate" + (f" · {matrix.ruleset}" if matrix.ruleset else "")
    caption = "rows: detectives, columns: Mister X; Wilson 95% interval; n = games"
    if matrix.has_self_play:
        caption += "; * = self-play"
    table = Table(title=title, caption=caption)
    table.add_column("det. \\ Mr X", justify="left")
    for column in matrix.columns:
        table.add_column(column, justify="right")
    for row in matrix.rows:
        cells = [matrix.cell(row, column) for column in matrix.columns]
        table.add_row(row, *(_styled(c) for c in cells))
    return table


def _styled(cell: Cell) -> str:
    text = cell_text(cell)
    return f"[bold]{text}[/bold]" if cell.self_play and cell.games else text


def save_heatmap(matrix: Matrix, path: str | Path) -> Path:
    """Write the matrix as a heatmap image (format from the suffix, PNG usually); cells are
    annotated with rate and game count, self-play cells outlined."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rates = np.array([[_rate(matrix.cell(r, c)) for c in matrix.columns] for r in matrix.rows])
    width = 1.6 + 1.3 * max(1, len(matrix.columns))
    height = 1.4 + 0.8 * max(1, len(matrix.rows))
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(np.ma.masked_invalid(rates), cmap="RdYlBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(matrix.columns)), labels=list(matrix.columns), rotation=30,
                  ha="right")
    ax.set_yticks(range(len(matrix.rows)), labels=list(matrix.rows))
    ax.set_xlabel("Mister X")
    ax.set_ylabel("detectives")
    title = "Detectives' win rate" + (f" ({matrix.ruleset})" if matrix.ruleset else "")
    ax.set_title(title)
    for i, row in enumerate(matrix.rows):
        for j, column in enumerate(matrix.columns):
            _annotate(ax, i, j, matrix.cell(row, column))
    fig.colorbar(image, ax=ax, label="detectives' win rate")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def _rate(cell: Cell) -> float:
    return float("nan") if cell.rate is None else cell.rate


def _annotate(ax: object, i: int, j: int, cell: Cell) -> None:
    from matplotlib.axes import Axes
    from matplotlib.patches import Rectangle

    assert isinstance(ax, Axes)
    text = "–" if cell.rate is None else f"{cell.rate:.2f}\nn={cell.games}"
    ax.text(j, i, text, ha="center", va="center", fontsize=9)
    if cell.self_play and cell.games:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, linewidth=2,
                               edgecolor="black"))
