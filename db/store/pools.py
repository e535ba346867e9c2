"""Standing groups of games: a ladder's or the Play page's games on one ruleset, stored
under a tournament-like row of their own (``format`` ``ladder`` or ``play``, no schedule)
so that ``yard leaderboard``, ``matrix``, ``export`` and ``replay`` work on them as on any
tournament; and their results in the order they were played, from which the server
rebuilds its live ratings when it starts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from db.models import GameRow, TournamentRow
from db.store.base import Connection, opt_str
from game import Termination, Winner
from records import PoolGame


class Pools(Connection):
    """Creating and reading standing groups of games."""

    def ensure_group(self, group_id: str, spec: dict[str, Any]) -> None:
        """Create the group ``group_id`` with ``spec`` unless it exists (its spec is then
        left as it is)."""
        with self._write("create game group") as session:
            if session.get(TournamentRow, group_id) is not None:
                return
            session.add(TournamentRow(id=group_id, created_at=datetime.now(UTC), spec=spec,
                                      rules=opt_str(spec.get("rules")),
                                      format=opt_str(spec.get("format"))))
            try:
                session.flush()
            except IntegrityError:  # another server made it meanwhile
                session.rollback()

    def group_games(self, group_id: str) -> list[PoolGame]:
        """Every stored game of group ``group_id``, in the order they finished."""
        query = (sa.select(GameRow.id, GameRow.mrx_player, GameRow.detective_player,
                           GameRow.winner, GameRow.termination, GameRow.fault_seat,
                           GameRow.finished_at)
                 .where(GameRow.tournament_id == group_id)
                 .order_by(GameRow.finished_at, GameRow.id))
        with self._read("read game group") as session:
            return [PoolGame(gid, mrx, det, None if winner is None else Winner(winner),
                             Termination(term), seat, finished)
                    for gid, mrx, det, winner, term, seat, finished in session.execute(query)]
