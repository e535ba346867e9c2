"""Ratings: Elo by maximum likelihood with a Mister X advantage and per-role ratings,
bootstrap intervals over role-swapped pairs, win-rate matrices, and their views.

Pure functions over :class:`GameOutcome` values; the commands in :mod:`yard.cli.ratings` read the
database. The tournament runner calls ``ratings.leaderboard.leaderboard`` and
``ratings.matrix.win_rate_matrix`` and prints them with :mod:`ratings.render` (the function
``leaderboard`` is not re-exported here, so it cannot shadow its module).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Each name above and its module, imported on first use: ``from ratings.sprt import ...``
#: in a process that never fits Elo does not load numpy's linear algebra with the package.
_HOMES = {"EloFit": "elo", "fit_elo": "elo", "Leaderboard": "leaderboard",
          "LeaderboardRow": "leaderboard", "Role": "leaderboard", "Cell": "matrix",
          "Matrix": "matrix", "win_rate_matrix": "matrix", "Conversion": "outcomes",
          "GameOutcome": "outcomes", "RatingsError": "outcomes", "from_results": "outcomes",
          "split_by_ruleset": "outcomes", "wilson_interval": "stats"}

__all__ = ["Cell", "Conversion", "EloFit", "GameOutcome", "Leaderboard", "LeaderboardRow",
           "Matrix", "RatingsError", "Role", "fit_elo", "from_results", "split_by_ruleset",
           "wilson_interval", "win_rate_matrix"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ratings' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ratings.{home}"), name)
