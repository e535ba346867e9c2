"""Plain records shared by the server, the database layer, the ratings and the tournament
code: below all of them (imports only :mod:`game`; no SQLAlchemy, no sockets).

* :mod:`records.game` — a finished game: :class:`GameRecord`, its seats, turns and the
  server's :class:`MatchLog`.
* :mod:`records.rows` — what the database stores and reads back beside game records:
  schedule entries, game summaries, result rows, tournaments, compute, accounts, pool games.
"""

from __future__ import annotations

from records.game import GameRecord, MatchLog, SeatRecord, TurnRecord
from records.rows import (
    AccountInfo,
    ComputeRow,
    GameSummary,
    PoolGame,
    ResultRow,
    ScheduledGame,
    TournamentInfo,
)

__all__ = ["AccountInfo", "ComputeRow", "GameRecord", "GameSummary", "MatchLog", "PoolGame",
           "ResultRow", "ScheduledGame", "SeatRecord", "TournamentInfo", "TurnRecord"]
