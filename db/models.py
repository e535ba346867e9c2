"""SQLAlchemy 2 typed ORM models: the *latest* schema (see :mod:`db.migrations`).

Tables: ``bots`` (name, version), ``tournaments`` (spec and runner state as JSON),
``scheduled_games`` (a tournament's whole schedule), ``games`` (one finished game: ruleset,
seed, start position, result, players, timing), ``game_seats`` (who played each seat, and
which process), ``turns`` (every refereed turn with its time, fault code and reported search
effort), ``game_records`` (the game's self-contained record as JSON, less what the other
tables hold: :func:`db.portable.to_stored`) and ``accounts`` (bot names bound to hashed
tokens).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    """Declarative base of the yard schema."""


class BotRow(Base):
    """A bot by name and version (get-or-create when a game is saved)."""

    __tablename__ = "bots"
    __table_args__ = (sa.UniqueConstraint("name", "version", name="uq_bots_name_version"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(200))
    version: Mapped[str] = mapped_column(sa.String(100))


class TournamentRow(Base):
    """A tournament and the spec it was started with."""

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True))
    rules: Mapped[str | None] = mapped_column(sa.String(200))
    format: Mapped[str | None] = mapped_column(sa.String(50))
    spec: Mapped[dict[str, Any]] = mapped_column(sa.JSON)
    #: What the runner records while it plays, e.g. ``{"sprt": {...}, "finished": true}``.
    state: Mapped[dict[str, Any] | None] = mapped_column(sa.JSON, nullable=True)


class ScheduledGameRow(Base):
    """One planned game of a tournament."""

    __tablename__ = "scheduled_games"
    __table_args__ = (sa.UniqueConstraint("tournament_id", "game_index",
                                          name="uq_schedule_index"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    tournament_id: Mapped[str] = mapped_column(
        sa.String(64), sa.ForeignKey("tournaments.id", ondelete="CASCADE"))
    game_index: Mapped[int] = mapped_column(sa.Integer)
    pair_index: Mapped[int] = mapped_column(sa.Integer)
    pair_key: Mapped[str] = mapped_column(sa.String(400))
    mrx_player: Mapped[str] = mapped_column(sa.String(400))
    detective_player: Mapped[str] = mapped_column(sa.String(400))
    seed: Mapped[int | None] = mapped_column(sa.BigInteger)
    #: Who is playing the entry now (a cluster worker's id) until ``lease_expires``; null
    #: when nobody holds it; ``"aborted"`` (no expiry) when its game was aborted in this run.
    lease_owner: Mapped[str | None] = mapped_column(sa.String(100))
    lease_expires: Mapped[datetime | None] = mapped_column(sa.DateTime(timezone=True))


class GameRow(Base):
    """A finished game (queryable columns; the full record is in :class:`GameRecordRow`)."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    ruleset: Mapped[str] = mapped_column(sa.String(200), index=True)
    seed: Mapped[int | None] = mapped_column(sa.BigInteger)
    start_position: Mapped[str] = mapped_column(sa.Text)
    winner: Mapped[str | None] = mapped_column(sa.String(20))
    termination: Mapped[str] = mapped_column(sa.String(40))
    fault_seat: Mapped[int | None] = mapped_column(sa.Integer)
    moves: Mapped[int] = mapped_column(sa.Integer)
    started_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True), index=True)
    finished_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True))
    mrx_player: Mapped[str] = mapped_column(sa.String(400))
    detective_player: Mapped[str] = mapped_column(sa.String(400))
    tournament_id: Mapped[str | None] = mapped_column(
        sa.String(64), sa.ForeignKey("tournaments.id", ondelete="SET NULL"), index=True)
    schedule_id: Mapped[int | None] = mapped_column(
        sa.Integer, sa.ForeignKey("scheduled_games.id", ondelete="SET NULL"), unique=True)

    seats: Mapped[list[GameSeatRow]] = relationship(
        order_by="GameSeatRow.seat", cascade="all, delete-orphan")
    turns: Mapped[list[TurnRow]] = relationship(
        order_by="TurnRow.turn_index", cascade="all, delete-orphan")


class GameSeatRow(Base):
    """Which bot played a seat of a game."""

    __tablename__ = "game_seats"

    game_id: Mapped[str] = mapped_column(
        sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    bot_id: Mapped[int] = mapped_column(sa.Integer, sa.ForeignKey("bots.id"))
    instance: Mapped[str | None] = mapped_column(sa.String(64))

    bot: Mapped[BotRow] = relationship(lazy="joined")


class TurnRow(Base):
    """One refereed turn: seat, move text (or none), time used, fault code and detail, and
    the search effort the bot reported (playouts, nodes, depth; null when not reported)."""

    __tablename__ = "turns"

    game_id: Mapped[str] = mapped_column(
        sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    turn_index: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    seat: Mapped[int] = mapped_column(sa.Integer)
    move: Mapped[str | None] = mapped_column(sa.String(40))
    time_used: Mapped[float] = mapped_column(sa.Float)
    fault: Mapped[str | None] = mapped_column(sa.String(40))
    detail: Mapped[str | None] = mapped_column(sa.Text)
    playouts: Mapped[int | None] = mapped_column(sa.BigInteger)
    nodes: Mapped[int | None] = mapped_column(sa.BigInteger)
    depth: Mapped[int | None] = mapped_column(sa.Integer)


class AccountRow(Base):
    """A bot account: the name a bot may connect under with ``yard serve --accounts``, and a
    salted scrypt hash of its token (:mod:`db.store.accounts`; the token itself is never
    stored). ``source``: ``cli`` (``yard accounts add``) or ``registration`` (a ``hello``
    with ``register`` on a server with open registration)."""

    __tablename__ = "accounts"

    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    token_hash: Mapped[str] = mapped_column(sa.String(200))
    source: Mapped[str] = mapped_column(sa.String(20))
    created_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True))
    last_used: Mapped[datetime | None] = mapped_column(sa.DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(sa.DateTime(timezone=True))


class GameRecordRow(Base):
    """A game's record as JSON (:func:`db.portable.to_stored`; rows of older yards are in
    the forms :mod:`db.legacy` reads)."""

    __tablename__ = "game_records"

    game_id: Mapped[str] = mapped_column(
        sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    record: Mapped[dict[str, Any]] = mapped_column(sa.JSON)
