"""What the web pages read with their own engine (``server.web``): games stored per
ruleset (the ratings cache's key) and one filtered page of the games list.

Read-only and synchronous; the web layer opens the engine with :func:`open_read_engine` and
wraps calls in :func:`db_errors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from db.engine import check_exists, create_engine, parse_url
from db.errors import DatabaseError
from db.models import BotRow, GameRow, GameSeatRow
from game import seat_name


def open_read_engine(url: str) -> Engine:
    """A second engine on the database for the web's own read queries."""
    parsed = parse_url(url)
    check_exists(parsed)
    try:
        return create_engine(parsed)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise DatabaseError(f"cannot open database: {exc}") from None


@contextmanager
def db_errors(action: str) -> Iterator[None]:
    """SQLAlchemy errors of these queries as :class:`DatabaseError`."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        reason = getattr(exc, "orig", None) or exc
        raise DatabaseError(f"cannot {action}: {str(reason).splitlines()[0]}") from None


def game_counts(engine: Engine, tournament_id: str | None = None) -> dict[str, int]:
    """Games stored per ruleset (of one tournament)."""
    query = sa.select(GameRow.ruleset, sa.func.count()).group_by(GameRow.ruleset)
    if tournament_id is not None:
        query = query.where(GameRow.tournament_id == tournament_id)
    with Session(engine) as session:
        return {name: int(n) for name, n in session.execute(query).all()}


def games_page(engine: Engine, *, ruleset: str | None = None,
               tournament_id: str | None = None, player: str | None = None,
               result: str | None = None, termination: str | None = None, limit: int = 50,
               offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """The number of stored games that match, and ``limit`` of them from ``offset``, newest
    first, as the games list shows them. ``player``: a bot of either side (a team's name or
    one of its seats); ``result``: ``mrx``, ``detectives`` or ``none`` (no winner)."""
    where: list[Any] = []
    if ruleset is not None:
        where.append(GameRow.ruleset == ruleset)
    if tournament_id is not None:
        where.append(GameRow.tournament_id == tournament_id)
    if player is not None:
        seat_bot = sa.select(GameSeatRow.game_id).join(BotRow).where(
            GameSeatRow.game_id == GameRow.id, BotRow.name == player)
        where.append(sa.or_(GameRow.mrx_player == player,
                            GameRow.detective_player == player, seat_bot.exists()))
    if result == "none":
        where.append(GameRow.winner.is_(None))
    elif result is not None:
        where.append(GameRow.winner == result)
    if termination is not None:
        where.append(GameRow.termination == termination)
    query = sa.select(GameRow).where(*where).order_by(GameRow.started_at.desc(), GameRow.id)
    with Session(engine) as session:
        total = session.scalar(sa.select(sa.func.count()).select_from(GameRow).where(*where))
        rows = session.scalars(query.limit(limit).offset(offset)).all()
        return int(total or 0), [_game_summary(row) for row in rows]


def _game_summary(row: GameRow) -> dict[str, Any]:
    return {"game_id": row.id, "ruleset": row.ruleset, "mrx_player": row.mrx_player,
            "detective_player": row.detective_player, "winner": row.winner,
            "termination": row.termination,
            "fault_seat": None if row.fault_seat is None else seat_name(row.fault_seat),
            "moves": row.moves, "started_at": _iso(row.started_at),
            "finished_at": _iso(row.finished_at), "tournament_id": row.tournament_id}


def _iso(moment: datetime) -> str:
    text = moment.isoformat()
    return text if moment.tzinfo is not None else text + "+00:00"
