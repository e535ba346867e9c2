"""Ratings: Elo by maximum likelihood with a Mister X advantage and per-role ratings,
bootstrap intervals over role-swapped pairs, win-rate matrices, and their views.

Pure functions over :class:`GameOutcome` values; the commands in :mod:`yard.cli.ratings` read the
database. The tournament runner calls ``ratings.leaderboard.leaderboard`` and
``ratings.matrix.win_rate_matrix`` and prints them with :mod:`ratings.render` (the function
``leaderboard`` is not re-exported here, so it cannot shadow its module).
"""

from ratings.elo import EloFit, fit_elo
from ratings.leaderboard import Leaderboard, LeaderboardRow, Role
from ratings.matrix import Cell, Matrix, win_rate_matrix
from ratings.outcomes import (
    Conversion,
    GameOutcome,
    RatingsError,
    from_results,
    split_by_ruleset,
)
from ratings.stats import wilson_interval

__all__ = ["Cell", "Conversion", "EloFit", "GameOutcome", "Leaderboard", "LeaderboardRow",
           "Matrix", "RatingsError", "Role", "fit_elo", "from_results", "split_by_ruleset",
           "wilson_interval", "win_rate_matrix"]
