"""Leases on schedule entries: how cluster workers (and a local runner) claim the games
they play, renew them while playing and give them back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from db.models import GameRow, ScheduledGameRow
from db.store.base import Connection
from db.store.schedule import to_entry
from records import ScheduledGame

#: The lease owner of an entry whose game was aborted in the current cluster run.
ABORTED_LEASE = "aborted"


class Leases(Connection):
    """Claiming, renewing and releasing schedule entries."""

    def claim(self, tournament_id: str, owner: str, lease_s: float) -> ScheduledGame | None:
        """Claim the first pending entry nobody holds (or whose lease expired) for
        ``owner`` until ``lease_s`` seconds from now; ``None`` when there is none.

        PostgreSQL locks the row (``SELECT ... FOR UPDATE SKIP LOCKED``), so concurrent
        claimers on any machine get different entries; SQLite serialises writers with
        ``BEGIN IMMEDIATE`` (one machine only). Lease times are UTC from the claimer's
        clock: cluster nodes need synchronised clocks (NTP) to within the lease.
        """
        now = datetime.now(UTC)
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        query = (sa.select(ScheduledGameRow)
                 .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                        sa.or_(ScheduledGameRow.lease_owner.is_(None),
                               ScheduledGameRow.lease_expires < now))
                 .order_by(ScheduledGameRow.game_index).limit(1)
                 .with_for_update(skip_locked=True, of=ScheduledGameRow))
        with self._write("claim a game") as session:
            row = session.scalars(query).first()
            if row is None:
                return None
            row.lease_owner = owner
            row.lease_expires = now + timedelta(seconds=lease_s)
            return to_entry(row)

    def renew(self, schedule_id: int, owner: str, lease_s: float) -> bool:
        """Extend ``owner``'s lease on an entry; ``False`` if it no longer holds it."""
        until = datetime.now(UTC) + timedelta(seconds=lease_s)
        with self._write("renew a lease") as session:
            done = session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.id == schedule_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_expires=until))
            return bool(getattr(done, "rowcount", 0))

    def release(self, schedule_id: int, owner: str, *, aborted: bool = False) -> None:
        """Give up ``owner``'s lease on an entry. ``aborted``: its game was aborted, so
        the entry is parked (no worker of this run claims it again) until
        :meth:`unpark` (the next run or resume)."""
        with self._write("release a lease") as session:
            session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.id == schedule_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_owner=ABORTED_LEASE if aborted else None, lease_expires=None))

    def release_owner(self, tournament_id: str, owner: str) -> int:
        """Give up every lease ``owner`` holds in a tournament (a worker known to be dead
        or stopped: its games are claimable again at once); how many it held."""
        with self._write("release leases") as session:
            done = session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.tournament_id == tournament_id,
                       ScheduledGameRow.lease_owner == owner)
                .values(lease_owner=None, lease_expires=None))
            return int(getattr(done, "rowcount", 0))

    def unpark(self, tournament_id: str) -> None:
        """Make the entries parked by :meth:`release` (aborted games) claimable again."""
        with self._write("reset leases") as session:
            session.execute(
                sa.update(ScheduledGameRow)
                .where(ScheduledGameRow.tournament_id == tournament_id,
                       ScheduledGameRow.lease_owner == ABORTED_LEASE)
                .values(lease_owner=None, lease_expires=None))

    def held(self, tournament_id: str) -> int:
        """Pending entries that a worker holds a live lease on (being played now)."""
        now = datetime.now(UTC)
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        with self._read("read leases") as session:
            return int(session.scalar(
                sa.select(sa.func.count(ScheduledGameRow.id))
                .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                       ScheduledGameRow.lease_owner.is_not(None),
                       ScheduledGameRow.lease_owner != ABORTED_LEASE,
                       ScheduledGameRow.lease_expires >= now)) or 0)

    def claimable(self, tournament_id: str) -> int:
        """Pending entries that are not parked (claimable now or after a lease)."""
        played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
        with self._read("read leases") as session:
            return int(session.scalar(
                sa.select(sa.func.count(ScheduledGameRow.id))
                .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
                       sa.or_(ScheduledGameRow.lease_owner.is_(None),
                              ScheduledGameRow.lease_owner != ABORTED_LEASE))) or 0)

