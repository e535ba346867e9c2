"""Rich tables for leaderboards, win-rate matrices and per-bot compute, and the matrix
heatmap image.

Every table takes the console ``width`` it will be printed at and keeps to it by dropping or
compacting its less important columns (never by cutting player names or breaking an Elo
interval over lines): ``None`` shows everything. The ``*_view`` functions add the notes
below a table as word-wrapped lines, and :func:`output_width` is the width the CLI prints
at (80 when the output is no terminal, so logs and pipes are stable).

>>> from ratings.outcomes import GameOutcome
>>> from ratings.matrix import win_rate_matrix
>>> table = matrix_table(win_rate_matrix([GameOutcome("rush", "random", False, None, "g")]))
>>> table.row_count
1
>>> elo_interval(1196.2, (1171.4, 1298.0))
'+1196 [1171,1298]'
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from rich.console import Console, Group, JustifyMethod
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ratings.leaderboard import Leaderboard, LeaderboardRow, Role
from ratings.matrix import Cell, Matrix

#: Width for output that goes to no terminal (a pipe, a log file), unless ``COLUMNS`` is set.
PIPE_WIDTH = 80


def output_width(stream: TextIO | None = None) -> int:
    """The width to print tables at: ``$COLUMNS`` when set, else the terminal's width when
    ``stream`` (default standard output) is a terminal, else :data:`PIPE_WIDTH`. (Rich alone
    would take the width of whichever standard stream is a terminal, so ``yard leaderboard >
    log`` would depend on the terminal it was started from)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    out = sys.stdout if stream is None else stream
    try:
        if out.isatty():
            return os.get_terminal_size(out.fileno()).columns or PIPE_WIDTH
    except (AttributeError, ValueError, OSError):
        pass
    return PIPE_WIDTH


def output_console(stream: TextIO | None = None) -> Console:
    """A console for ``stream`` (default standard output) at :func:`output_width`."""
    return Console(file=stream, width=output_width(stream))


def _number(value: float) -> str:
    text = f"{value:.0f}"
    return "0" if text == "-0" else text


def _signed(value: float) -> str:
    text = _number(value)
    return text if text.startswith("-") or text == "0" else "+" + text


def elo_interval(value: float, ci: tuple[float, float] | None) -> str:
    """An Elo with its 95% interval in one short token: ``+866 [786,946]``."""
    if ci is None:
        return _signed(value)
    return f"{_signed(value)} [{_number(ci[0])},{_number(ci[1])}]"


def _wins(games: int, wins: int) -> str:
    return f"{wins}/{games}" if games else "—"


@lru_cache(maxsize=1)
def _measuring_console() -> Console:
    return Console(width=100_000, file=io.StringIO())


def natural_width(table: Table) -> int:
    """Columns ``table`` takes when nothing in it wraps."""
    console = _measuring_console()
    return Measurement.get(console, console.options, table).maximum


def first_fitting(layouts: Sequence[Callable[[], Table]], width: int | None) -> Table:
    """The first layout whose table fits ``width`` (the first when ``width`` is None), else
    the last (narrowest) one."""
    table = layouts[0]()
    if width is None:
        return table
    for layout in layouts[1:]:
        if natural_width(table) <= width:
            return table
        table = layout()
    return table


def table_view(table: Table) -> Group:
    """The table, then its caption as left-aligned lines wrapped at the console's width (a
    rich caption would wrap at the table's width)."""
    caption = table.caption
    table.caption = None
    if not caption:
        return Group(table)
    return Group(table, Text(str(caption), style="table.caption"))


def leaderboard_caption(board: Leaderboard) -> str:
    """Short lines: anchor, Mister X advantage, games; how intervals and LOS are computed."""
    adv = elo_interval(board.mrx_advantage, board.mrx_advantage_ci)
    excluded = f" ({board.excluded} aborted excluded)" if board.excluded else ""
    return (f"{board.ruleset}: anchor {board.anchor} = 0 · Mister X advantage {adv} Elo · "
            f"{board.games} games{excluded}\n"
            f"95% CI: pair bootstrap ({board.samples} samples, seed {board.seed}) · "
            "LOS: P(stronger than next row)")


@dataclass(frozen=True)
class _Column:
    header: str
    cell: Callable[[LeaderboardRow], str]
    justify: JustifyMethod = "right"


def _leaderboard_columns(board: Leaderboard) -> dict[str, _Column]:
    def elo(row: LeaderboardRow) -> str:
        return "0 (anchor)" if row.player == board.anchor else elo_interval(row.elo, row.ci)

    def role_elo(role: Role) -> Callable[[LeaderboardRow], str]:
        def cell(row: LeaderboardRow) -> str:
            value, ci = ((row.elo_mrx, row.ci_mrx) if role is Role.MRX
                         else (row.elo_det, row.ci_det))
            if value is None:
                return "—"
            return elo_interval(value, ci) if board.role is role else _signed(value)
        return cell

    def interval(role: Role) -> str:
        return " [95% CI]" if board.role is role else ""

    def wins(row: LeaderboardRow) -> str:
        return _wins(row.as_mrx.games + row.as_det.games, row.as_mrx.wins + row.as_det.wins)

    return {
        "rank": _Column("#", lambda row: str(row.rank)),
        "player": _Column("player", lambda row: escape(row.player), "left"),
        "elo": _Column("Elo [95% CI]", elo),
        "mrx": _Column("Elo Mr X" + interval(Role.MRX), role_elo(Role.MRX)),
        "det": _Column("Elo det." + interval(Role.DETECTIVES), role_elo(Role.DETECTIVES)),
        "games": _Column("games", lambda row: str(row.games)),
        "mrx_wins": _Column("Mr X wins", lambda row: _wins(row.as_mrx.games, row.as_mrx.wins)),
        "det_wins": _Column("det. wins", lambda row: _wins(row.as_det.games, row.as_det.wins)),
        "wins": _Column("wins", wins),
        "los": _Column("LOS", lambda row: "" if row.superiority is None
                       else f"{row.superiority:.2f}"),
    }


#: Leaderboard layouts, widest first: per-role Elo, then wins per role, then LOS go first.
LEADERBOARD_LAYOUTS: tuple[tuple[str, ...], ...] = (
    ("rank", "player", "elo", "mrx", "det", "games", "mrx_wins", "det_wins", "los"),
    ("rank", "player", "elo", "games", "mrx_wins", "det_wins", "los"),
    ("rank", "player", "elo", "games", "wins", "los"),
    ("rank", "player", "elo", "games"),
)
#: Layouts of a leaderboard sorted by one role's Elo (``ROLE``: that role's columns); the
#: overall Elo goes before that role's Elo, wins and LOS (which compares role Elos).
ROLE_LAYOUTS: tuple[tuple[str, ...], ...] = (
    LEADERBOARD_LAYOUTS[0],
    ("rank", "player", "ROLE", "elo", "games", "ROLE_wins", "los"),
    ("rank", "player", "ROLE", "games", "ROLE_wins", "los"),
    ("rank", "player", "ROLE", "games"),
)


def leaderboard_table(board: Leaderboard, width: int | None = None) -> Table:
    """The leaderboard as a rich table that fits ``width`` columns (all columns when
    ``None``): rank, full player name, Elo with its 95% interval on one line, and games
    always; wins, LOS and the per-role Elo as room allows. With ``board.role`` that role's
    Elo (with its interval) is the one always shown. The caption is
    :func:`leaderboard_caption`."""
    title = f"Leaderboard · {board.ruleset}"
    if board.role is not None:
        title += f" · sorted by Elo as {board.role.value}"
    columns = _leaderboard_columns(board)
    role = "mrx" if board.role is Role.MRX else "det"
    layouts = LEADERBOARD_LAYOUTS if board.role is None else tuple(
        tuple(key.replace("ROLE", role) for key in keys) for keys in ROLE_LAYOUTS)

    def layout(keys: tuple[str, ...]) -> Callable[[], Table]:
        def build() -> Table:
            table = Table(title=title, caption=leaderboard_caption(board),
                          caption_justify="left")
            for key in keys:
                column = columns[key]
                table.add_column(column.header, justify=column.justify, no_wrap=True)
            for row in board.rows:
                table.add_row(*(columns[key].cell(row) for key in keys))
            return table
        return build

    return first_fitting([layout(keys) for keys in layouts], width)


def leaderboard_view(board: Leaderboard, width: int | None = None) -> Group:
    """:func:`leaderboard_table` with its caption below as lines wrapped at the console."""
    return table_view(leaderboard_table(board, width))


def cell_text(cell: Cell) -> str:
    """``"0.62 [0.48–0.74] n=40"``, ``"·"`` without games; ``"*"`` marks self-play."""
    if cell.games == 0 or cell.rate is None or cell.ci is None:
        return "·"
    mark = "*" if cell.self_play else ""
    return f"{cell.rate:.2f} [{cell.ci[0]:.2f}–{cell.ci[1]:.2f}] n={cell.games}{mark}"


def short_cell_text(cell: Cell) -> str:
    """``"0.62 n=40"`` (:func:`cell_text` without the interval)."""
    if cell.games == 0 or cell.rate is None:
        return "·"
    return f"{cell.rate:.2f} n={cell.games}{'*' if cell.self_play else ''}"


def _rate_text(cell: Cell) -> str:
    if cell.games == 0 or cell.rate is None:
        return "·"
    return f"{cell.rate:.2f}{'*' if cell.self_play else ''}"


#: Matrix cell styles, most informative first, with what the caption says of them.
_CELLS: dict[str, tuple[Callable[[Cell], str], str]] = {
    "full": (cell_text, "Wilson 95% interval; n = games"),
    "short": (short_cell_text, "n = games\n95% intervals: --json or a wider terminal"),
    "rate": (_rate_text, "rates only\ngames and 95% intervals: --json or a wider terminal"),
}


def matrix_table(matrix: Matrix, width: int | None = None) -> Table:
    """The matrix as a rich table (detectives down, Mister X across) that fits ``width``
    columns (everything when ``None``): cells lose their interval, then their game count,
    and the Mister X columns are headed by numbers explained in the caption, before any
    player name is cut."""
    layouts = [_matrix_layout(matrix, cells, numbered)
               for cells in _CELLS for numbered in (False, True)]
    return first_fitting(layouts, width)


def _matrix_layout(matrix: Matrix, cells: str, numbered: bool) -> Callable[[], Table]:
    text, note = _CELLS[cells]

    def build() -> Table:
        title = "Detectives' win rate" + (f" · {matrix.ruleset}" if matrix.ruleset else "")
        caption = f"rows: detectives, columns: Mister X; {note}"
        if matrix.has_self_play:
            caption += "; * = self-play"
        if numbered:
            caption += "\nMister X: " + ", ".join(
                f"{number}={name}" for number, name in enumerate(matrix.columns, 1))
        table = Table(title=title, caption=caption, caption_justify="left")
        table.add_column("det. \\ Mr X", justify="left", no_wrap=True)
        for number, column in enumerate(matrix.columns, 1):
            table.add_column(str(number) if numbered else escape(column), justify="right",
                             no_wrap=True)
        for row in matrix.rows:
            table.add_row(escape(row), *(_styled(matrix.cell(row, column), text)
                                         for column in matrix.columns))
        return table
    return build


def matrix_view(matrix: Matrix, width: int | None = None) -> Group:
    """:func:`matrix_table` with its caption (and column legend) below, wrapped at the
    console."""
    return table_view(matrix_table(matrix, width))


def _styled(cell: Cell, text: Callable[[Cell], str] = cell_text) -> str:
    shown = text(cell)
    return f"[bold]{shown}[/bold]" if cell.self_play and cell.games else shown


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
