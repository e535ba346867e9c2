"""The win-rate matrix: rows are detective players (bots or teams), columns Mister X
players; each cell holds the detectives' win rate with its Wilson 95% interval and the
number of games. Diagonal cells (same player in both roles) are self-play.

>>> from ratings.outcomes import GameOutcome
>>> m = win_rate_matrix([GameOutcome("rush", "random", False, None, "grid5")])
>>> m.cell("random", "rush").detective_wins, m.cell("random", "rush").games
(1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ratings.outcomes import GameOutcome, players_of
from ratings.stats import wilson_interval


@dataclass(frozen=True)
class Cell:
    """Detectives ``detectives`` against Mister X ``mrx``."""

    detectives: str
    mrx: str
    games: int
    detective_wins: int

    @property
    def self_play(self) -> bool:
        """True on the diagonal (the same player on both sides)."""
        return self.detectives == self.mrx

    @property
    def rate(self) -> float | None:
        """Detectives' win rate; ``None`` without games."""
        return self.detective_wins / self.games if self.games else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """Wilson 95% interval of :attr:`rate`."""
        return wilson_interval(self.detective_wins, self.games) if self.games else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        ci = self.ci
        return {"detectives": self.detectives, "mrx": self.mrx, "games": self.games,
                "detective_wins": self.detective_wins, "rate": self.rate,
                "ci95": None if ci is None else [ci[0], ci[1]], "self_play": self.self_play}


@dataclass(frozen=True)
class Matrix:
    """Cells by (detective player, Mister X player); every pairing of ``rows`` and
    ``columns`` is present (with 0 games when never played)."""

    ruleset: str | None
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], Cell]

    def cell(self, detectives: str, mrx: str) -> Cell:
        """The cell of detectives ``detectives`` against Mister X ``mrx``."""
        return self.cells[(detectives, mrx)]

    @property
    def has_self_play(self) -> bool:
        """True when any diagonal cell has games."""
        return any(c.self_play and c.games for c in self.cells.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: row and column names, and one list of cells per row."""
        return {"ruleset": self.ruleset, "rows": list(self.rows), "columns": list(self.columns),
                "value": "detectives' win rate", "self_play": self.has_self_play,
                "cells": [[self.cell(r, c).to_dict() for c in self.columns] for r in self.rows]}


def win_rate_matrix(games: Sequence[GameOutcome], order: Sequence[str] | None = None
                    ) -> Matrix:
    """The matrix of ``games``. ``order`` lists players in display order (for instance the
    leaderboard's); players missing from it follow in sorted order. Rows keep only players
    who played detectives, columns those who played Mister X."""
    known = list(order or [])
    everyone = known + [p for p in players_of(games) if p not in known]
    counts: dict[tuple[str, str], list[int]] = {}
    for game in games:
        cell = counts.setdefault((game.detectives, game.mrx), [0, 0])
        cell[0] += 1
        cell[1] += not game.mrx_won
    rows = tuple(p for p in everyone if any(g.detectives == p for g in games))
    columns = tuple(p for p in everyone if any(g.mrx == p for g in games))
    cells = {(r, c): Cell(r, c, *counts.get((r, c), [0, 0])) for r in rows for c in columns}
    rulesets = {g.ruleset for g in games}
    return Matrix(rulesets.pop() if len(rulesets) == 1 else None, rows, columns, cells)
