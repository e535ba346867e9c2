"""A tournament's leaderboard and win-rate matrix, computed from its stored games."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from db.store import Database
from ratings.bootstrap import DEFAULT_SAMPLES
from ratings.leaderboard import Leaderboard, leaderboard
from ratings.matrix import Matrix, win_rate_matrix
from ratings.outcomes import from_results
from ratings.render import leaderboard_view, matrix_view, output_console
from tournament.compute import BotCompute, compute_summary, compute_view

#: Bootstrap replicates for the live "current leader" line (cheap) and the final table.
LIVE_SAMPLES = 0
FINAL_SAMPLES = DEFAULT_SAMPLES


@dataclass(frozen=True)
class TournamentReport:
    """The end-of-tournament summary (``yard tournament run --json``)."""

    tournament_id: str
    games: int
    scheduled: int
    board: Leaderboard | None
    matrix: Matrix | None
    compute: dict[str, BotCompute] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object: keys tournament_id, games, leaderboard, matrix, compute."""
        return {"tournament_id": self.tournament_id, "games": self.games,
                "scheduled": self.scheduled,
                "leaderboard": None if self.board is None else self.board.to_dict(),
                "matrix": None if self.matrix is None else self.matrix.to_dict(),
                "compute": {bot: row.to_dict() for bot, row in self.compute.items()}}

    def render(self, console: Console | None = None) -> None:
        """Print the tables: leaderboard, win-rate matrix, compute per bot, each fitted to
        the console's width (see :mod:`ratings.render`); default console: standard output
        at :func:`ratings.render.output_width`."""
        if console is None:
            console = output_console()
        console.print(f"tournament {self.tournament_id}: {self.games}/{self.scheduled} games")
        width = console.width
        if self.board is None or self.matrix is None:
            console.print("no decided games to rate")
        else:
            console.print(leaderboard_view(self.board, width))
            console.print(matrix_view(self.matrix, width))
        if self.compute:
            console.print(compute_view(self.compute, width))


def tournament_report(db: Database, tournament_id: str,
                      samples: int = FINAL_SAMPLES) -> TournamentReport:
    """Rate the stored games of one tournament."""
    info = db.get_tournament(tournament_id)
    converted = from_results(db.results(tournament_id=tournament_id))
    compute = compute_summary(db.compute(tournament_id))
    if not converted.games:
        return TournamentReport(tournament_id, info.played, info.scheduled, None, None,
                                compute)
    board = leaderboard(converted.games, samples=samples, seed=0,
                        excluded=converted.excluded)
    matrix = win_rate_matrix(converted.games, order=[row.player for row in board.rows])
    return TournamentReport(tournament_id, info.played, info.scheduled, board, matrix,
                            compute)


def leader_line(db: Database, tournament_id: str) -> str:
    """``leader: NAME (+123 Elo)`` for the live progress display."""
    games = from_results(db.results(tournament_id=tournament_id)).games
    if not games:
        return ""
    top = leaderboard(games, samples=LIVE_SAMPLES).rows[0]
    return f"leader: {top.player} ({top.elo:+.0f} Elo)"
