"""The leaderboard of one ruleset: Elo with bootstrap 95% intervals, per-role Elo, games and
wins in each role, and the likelihood of superiority over the next row.

>>> from ratings.outcomes import GameOutcome
>>> games = [GameOutcome("rush", "random", True, "p0", "grid5"),
...          GameOutcome("random", "rush", False, "p0", "grid5")]
>>> board = leaderboard(games, samples=20)
>>> [row.player for row in board.rows], board.anchor
(['rush', 'random'], 'random')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ratings.bootstrap import (
    DEFAULT_SAMPLES,
    BootstrapSamples,
    bootstrap,
    interval,
    superiority,
)
from ratings.elo import DEFAULT_PRIOR_SD, FloatArray, fit_cells, ridge_for, tabulate
from ratings.elo import anchor_name as _anchor_name
from ratings.elo import resolve_anchor as _resolve_anchor
from ratings.outcomes import GameOutcome, players_of, single_ruleset


class Role(Enum):
    """A side of the game, for per-role views."""

    MRX = "mrx"
    DETECTIVES = "detectives"


@dataclass(frozen=True)
class RoleRecord:
    """Games and wins of one player in one role."""

    games: int = 0
    wins: int = 0


@dataclass(frozen=True)
class LeaderboardRow:
    """One player's line. Ratings are Elo points; an interval or per-role rating is
    ``None`` when there is nothing to estimate it from. ``superiority`` is the likelihood
    that this player is stronger than the next row's (``None`` on the last row)."""

    rank: int
    player: str
    elo: float
    ci: tuple[float, float] | None
    elo_mrx: float | None
    ci_mrx: tuple[float, float] | None
    elo_det: float | None
    ci_det: tuple[float, float] | None
    as_mrx: RoleRecord
    as_det: RoleRecord
    superiority: float | None

    @property
    def games(self) -> int:
        """Games played in either role."""
        return self.as_mrx.games + self.as_det.games

    def rating(self, role: Role | None) -> float | None:
        """The overall rating, or the rating in ``role``."""
        if role is None:
            return self.elo
        return self.elo_mrx if role is Role.MRX else self.elo_det

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"rank": self.rank, "player": self.player, "elo": self.elo,
                "ci95": _pair(self.ci), "elo_mrx": self.elo_mrx, "ci95_mrx": _pair(self.ci_mrx),
                "elo_detectives": self.elo_det, "ci95_detectives": _pair(self.ci_det),
                "games": self.games, "mrx_games": self.as_mrx.games,
                "mrx_wins": self.as_mrx.wins, "detective_games": self.as_det.games,
                "detective_wins": self.as_det.wins, "superiority_next": self.superiority}


@dataclass(frozen=True)
class Leaderboard:
    """Ratings of one ruleset. ``role`` set: rows are sorted by (and limited to players
    with) that role's rating."""

    ruleset: str
    anchor: str
    mrx_advantage: float
    mrx_advantage_ci: tuple[float, float] | None
    rows: tuple[LeaderboardRow, ...]
    games: int
    excluded: int
    samples: int
    seed: int
    role: Role | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (one ``yard leaderboard --json`` section)."""
        return {"ruleset": self.ruleset, "anchor": self.anchor,
                "mrx_advantage": self.mrx_advantage,
                "mrx_advantage_ci95": _pair(self.mrx_advantage_ci),
                "role": self.role.value if self.role else None, "games": self.games,
                "excluded_games": self.excluded,
                "bootstrap": {"samples": self.samples, "seed": self.seed, "unit": "pair"},
                "superiority": "bootstrap share of replicates rating a row above the next",
                "rows": [row.to_dict() for row in self.rows]}


def _pair(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [value[0], value[1]]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def role_records(games: Sequence[GameOutcome]) -> dict[str, tuple[RoleRecord, RoleRecord]]:
    """Per player: (games and wins as Mister X, games and wins as detectives)."""
    counts: dict[str, list[int]] = {p: [0, 0, 0, 0] for p in players_of(games)}
    for game in games:
        counts[game.mrx][0] += 1
        counts[game.mrx][1] += game.mrx_won
        counts[game.detectives][2] += 1
        counts[game.detectives][3] += not game.mrx_won
    return {p: (RoleRecord(c[0], c[1]), RoleRecord(c[2], c[3])) for p, c in counts.items()}


def leaderboard(games: Sequence[GameOutcome], *, role: Role | None = None,
                anchor: str | None = None, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                prior_sd: float = DEFAULT_PRIOR_SD, excluded: int = 0) -> Leaderboard:
    """Rate the games of one ruleset (see :mod:`ratings.elo` for the model and anchor)."""
    ruleset = single_ruleset(list(games))
    players = players_of(games)
    anchor_index = _resolve_anchor(players, anchor)
    raw = fit_cells(tabulate(games, players), len(players), anchor_index, ridge_for(prior_sd))
    boot = bootstrap(games, players, anchor_index, samples, seed, prior_sd)
    records = role_records(games)
    rows = [_row(i, p, raw.overall, raw.mrx, raw.det, boot, records[p])
            for i, p in enumerate(players)]
    ordered = _order(rows, role, boot, players)
    return Leaderboard(ruleset, _anchor_name(players, anchor_index), raw.advantage,
                       interval(boot.advantage), tuple(ordered), len(games), excluded,
                       samples, seed, role)


def _row(i: int, player: str, overall: FloatArray, mrx: FloatArray, det: FloatArray,
         boot: BootstrapSamples, record: tuple[RoleRecord, RoleRecord]) -> LeaderboardRow:
    return LeaderboardRow(0, player, float(overall[i]), interval(boot.overall[:, i]),
                          _finite(mrx[i]), interval(boot.mrx[:, i]), _finite(det[i]),
                          interval(boot.det[:, i]), record[0], record[1], None)


def _order(rows: list[LeaderboardRow], role: Role | None, boot: BootstrapSamples,
           players: list[str]) -> list[LeaderboardRow]:
    """Sort by the chosen rating (players without it dropped), rank, and attach the
    likelihood of superiority over the next row."""
    kept = [r for r in rows if r.rating(role) is not None]
    kept.sort(key=lambda r: (-(r.rating(role) or 0.0), r.player))
    columns = {None: boot.overall, Role.MRX: boot.mrx, Role.DETECTIVES: boot.det}[role]
    out: list[LeaderboardRow] = []
    for rank, row in enumerate(kept, start=1):
        los = None
        if rank < len(kept):
            here, below = players.index(row.player), players.index(kept[rank].player)
            los = superiority(columns[:, here], columns[:, below])
        out.append(replace(row, rank=rank, superiority=los))
    return out


__all__ = ["Leaderboard", "LeaderboardRow", "Role", "RoleRecord", "leaderboard",
           "role_records"]
