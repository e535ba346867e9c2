"""A tournament's schedule: stored whole before its first game; an entry is done exactly
when a game with its ``schedule_id`` is stored."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from db.errors import TournamentError
from db.models import GameRow, ScheduledGameRow, TournamentRow
from db.store.base import Connection
from records import ScheduledGame


class Schedule(Connection):
    """Storing and reading schedules."""

    def schedule(self, tournament_id: str, games: Sequence[ScheduledGame]) -> list[ScheduledGame]:
        """Store a tournament's whole schedule at once (before its first game); returns the
        entries with their ``schedule_id``. A tournament is scheduled only once."""
        _check_entries(games)
        with self._write("store schedule") as session:
            if session.get(TournamentRow, tournament_id) is None:
                raise TournamentError(f"no tournament {tournament_id!r}")
            if session.scalar(sa.select(ScheduledGameRow.id).where(
                    ScheduledGameRow.tournament_id == tournament_id).limit(1)) is not None:
                raise TournamentError(f"tournament {tournament_id} already has a schedule")
            rows = [schedule_row(tournament_id, g) for g in games]
            session.add_all(rows)
            session.flush()
            return [to_entry(row) for row in rows]

    def scheduled(self, tournament_id: str) -> list[ScheduledGame]:
        """Every schedule entry of a tournament, by index."""
        return self._entries(tournament_id, pending_only=False)

    def pending(self, tournament_id: str) -> list[ScheduledGame]:
        """Schedule entries without a stored game, by index: what a resume still plays."""
        return self._entries(tournament_id, pending_only=True)

    def _entries(self, tournament_id: str, pending_only: bool) -> list[ScheduledGame]:
        query = sa.select(ScheduledGameRow).where(
            ScheduledGameRow.tournament_id == tournament_id).order_by(ScheduledGameRow.game_index)
        if pending_only:
            played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
            query = query.where(~played.exists())
        with self._read("read schedule") as session:
            if session.get(TournamentRow, tournament_id) is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            return [to_entry(row) for row in session.scalars(query)]


def ensure_entry(session: Session, tournament_id: str, entry: ScheduledGame,
                 game_id: str) -> int:
    """The id of the entry an imported game ``game_id`` played, created when missing (an
    entry without a seed gains the game's); :class:`TournamentError` if it exists with
    other players or seed, or was played."""
    row = session.scalar(sa.select(ScheduledGameRow).where(
        ScheduledGameRow.tournament_id == tournament_id,
        ScheduledGameRow.game_index == entry.index))
    if row is None:
        row = schedule_row(tournament_id, entry)
        session.add(row)
        session.flush()
        return row.id
    if row.seed is None and row.pair_key == entry.pair_key:
        row.seed = entry.seed  # withheld by an export made before the game was played
    if (row.pair_index, row.pair_key, row.mrx_player, row.detective_player, row.seed) != \
            (entry.pair_index, entry.pair_key, entry.mrx, entry.detectives, entry.seed):
        raise TournamentError(f"game {game_id}: schedule entry {entry.index} of tournament "
                              f"{tournament_id} differs in this database "
                              f"({row.mrx_player} vs {row.detective_player}, seed {row.seed})")
    played = session.scalar(sa.select(GameRow.id).where(GameRow.schedule_id == row.id))
    if played is not None:
        raise TournamentError(f"game {game_id}: schedule entry {entry.index} of tournament "
                              f"{tournament_id} was already played as game {played}")
    return row.id


def _check_entries(games: Sequence[ScheduledGame]) -> None:
    seen: set[int] = set()
    for game in games:
        if game.index in seen:
            raise TournamentError(f"schedule has index {game.index} twice")
        seen.add(game.index)
        if not game.mrx or not game.detectives:
            raise TournamentError(f"schedule entry {game.index} needs mrx and detectives")


def schedule_row(tournament_id: str, game: ScheduledGame) -> ScheduledGameRow:
    """A new row for schedule entry ``game``."""
    return ScheduledGameRow(tournament_id=tournament_id, game_index=game.index,
                            pair_index=game.pair_index, pair_key=game.pair_key,
                            mrx_player=game.mrx,
                            detective_player=game.detectives, seed=game.seed)


def to_entry(row: ScheduledGameRow) -> ScheduledGame:
    """A stored schedule entry, with its ``schedule_id``."""
    return ScheduledGame(row.game_index, row.pair_index, row.mrx_player, row.detective_player,
                         row.seed, row.id, row.pair_key)

