"""What the web pages read with their own engine (``host.web``): games stored per
ruleset (the ratings cache's key), one filtered page of the games list, which games are
withheld (:class:`WithheldCache`), and the boards of stored games.

Withheld games: both games of a role-swapped pair start from the same deal (Mister X's
start included, with ``same-deal`` pairing), so the record of one game must not be public
while the other is still to be played. A stored game is **withheld** while its tournament
is not finished early (the runner's ``state["finished"]``) and some schedule entry of its
pair (same tournament, same ``pair_key``) has no stored game yet. A game stored without a
schedule entry but with a tournament (an aborted game: its entry stays pending for a
resume, which plays the same deal again) is paired with the pending entries of its
tournament that have its seed (every pending entry when either seed is unknown). Games
outside tournaments are never withheld. Everything is decided from the database, so a
``yard web`` reading the database of a tournament run elsewhere withholds the same games.

Read-only and synchronous; the web layer opens the engine with :func:`open_read_engine` and
wraps calls in :func:`db_errors`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, aliased

from db.engine import check_exists, create_engine, parse_url
from db.errors import DatabaseError
from db.models import (
    BotRow,
    GameRecordRow,
    GameRow,
    GameSeatRow,
    ScheduledGameRow,
    TournamentRow,
)
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


def finished_early(session: Session) -> list[str]:
    """Ids of the tournaments the runner marked finished (``state["finished"]``: ended
    early, e.g. on an SPRT decision): their games are never withheld."""
    rows = session.execute(sa.select(TournamentRow.id, TournamentRow.state)).all()
    return sorted(tid for tid, state in rows if isinstance(state, dict) and state.get("finished"))


def withheld_select(early: Sequence[str],
                    tournament_id: str | None = None) -> sa.CompoundSelect[tuple[str]]:
    """The ids of the withheld games (see the module's docstring), as a select for
    ``IN``; ``early``: :func:`finished_early`; ``tournament_id``: only that tournament's.

    Written as ``IN`` lists of (tournament, pair key) and (tournament, seed), which the
    databases build once (SQLite: an ephemeral index), so the cost grows with the schedule
    plus the games, not with their product."""
    entry, played = aliased(ScheduledGameRow), aliased(GameRow)
    pending = sa.select(entry.tournament_id, entry.pair_key, entry.seed).where(
        ~sa.select(played.id).where(played.schedule_id == entry.id).exists())
    if early:
        pending = pending.where(entry.tournament_id.not_in(early))
    if tournament_id is not None:
        pending = pending.where(entry.tournament_id == tournament_id)
    pairs = pending.with_only_columns(entry.tournament_id, entry.pair_key)
    seeds = pending.with_only_columns(entry.tournament_id, entry.seed).where(
        entry.seed.is_not(None))
    unseeded = pending.with_only_columns(entry.tournament_id).where(entry.seed.is_(None))
    anything = pending.with_only_columns(entry.tournament_id)
    own = aliased(ScheduledGameRow)
    scheduled = sa.select(GameRow.id).join(own, GameRow.schedule_id == own.id).where(
        sa.tuple_(own.tournament_id, own.pair_key).in_(pairs))
    unscheduled = sa.select(GameRow.id).where(
        GameRow.schedule_id.is_(None), GameRow.tournament_id.is_not(None),
        sa.or_(sa.tuple_(GameRow.tournament_id, GameRow.seed).in_(seeds),
               GameRow.tournament_id.in_(unseeded),
               sa.and_(GameRow.seed.is_(None), GameRow.tournament_id.in_(anything))))
    if tournament_id is not None:
        scheduled = scheduled.where(own.tournament_id == tournament_id)
        unscheduled = unscheduled.where(GameRow.tournament_id == tournament_id)
    return sa.union(scheduled, unscheduled)


@dataclass(frozen=True)
class Withheld:
    """The games withheld at one moment: their ids, and how many per (ruleset,
    tournament)."""

    ids: frozenset[str] = frozenset()
    counts: dict[tuple[str, str | None], int] = field(default_factory=dict)


MAX_LISTED_IDS = 10_000
"""Withheld ids passed as a list of parameters at most (SQLite allows 32766 in all)."""


class WithheldCache:
    """Which games are withheld (:func:`withheld_select`), computed again only when that
    can have changed: when a game was stored (the ``games`` count changed: games are never
    deleted) or a runner marked a tournament finished. Thread-safe."""

    def __init__(self, engine: Engine) -> None:
        """A cache over ``engine``, computed on first use."""
        self.engine = engine
        self._lock = threading.Lock()
        self._key: tuple[int, tuple[str, ...]] | None = None
        self._value = Withheld()
        self.computed = 0  # for tests and benchmarks

    def get(self) -> Withheld:
        """The games withheld now."""
        with Session(self.engine) as session:
            # The key is read first: a game stored meanwhile makes the value newer than
            # its key, never older, so the next call computes again.
            early = finished_early(session)
            key = (int(session.scalar(sa.select(sa.func.count()).select_from(GameRow)) or 0),
                   tuple(early))
            with self._lock:
                if key == self._key:
                    return self._value
            rows = session.execute(sa.select(GameRow.id, GameRow.ruleset, GameRow.tournament_id)
                                   .where(GameRow.id.in_(withheld_select(early)))).all()
        counts: Counter[tuple[str, str | None]] = Counter(
            (ruleset, tournament) for _, ruleset, tournament in rows)
        value = Withheld(frozenset(game_id for game_id, _, _ in rows), dict(counts))
        with self._lock:
            self._key, self._value = key, value
            self.computed += 1
        return value

    def condition(self, session: Session, tournament_id: str | None = None) -> Any:
        """A condition on ``games`` that leaves the withheld games out (``None``: none
        is withheld now)."""
        withheld = self.get()
        if not withheld.ids:
            return None
        if len(withheld.ids) <= MAX_LISTED_IDS:
            return GameRow.id.not_in(sorted(withheld.ids))
        return GameRow.id.not_in(withheld_select(finished_early(session), tournament_id))


def game_counts(engine: Engine, tournament_id: str | None = None,
                withheld: Withheld | None = None) -> dict[str, int]:
    """Games stored per ruleset (of one tournament), less the ``withheld`` ones: what the
    pages rate."""
    query = sa.select(GameRow.ruleset, sa.func.count()).group_by(GameRow.ruleset)
    if tournament_id is not None:
        query = query.where(GameRow.tournament_id == tournament_id)
    with Session(engine) as session:
        counts = {name: int(n) for name, n in session.execute(query).all()}
    for (ruleset, tournament), n in (withheld.counts if withheld else {}).items():
        if tournament_id is None or tournament == tournament_id:
            counts[ruleset] = counts.get(ruleset, 0) - n
    return {name: n for name, n in counts.items() if n > 0}


def stored_boards(engine: Engine) -> set[str]:
    """The names of the boards that the rulesets of stored games use, as
    :func:`game.load_board` knows them (one record read per ruleset name: a ruleset name
    used with two boards gives the first one)."""
    out: set[str] = set()
    with Session(engine) as session:
        for name in session.scalars(sa.select(GameRow.ruleset).distinct()).all():
            record = session.scalar(
                sa.select(GameRecordRow.record).join(GameRow, GameRow.id == GameRecordRow.game_id)
                .where(GameRow.ruleset == name).limit(1))
            board = _board_name(record)
            if board is not None:
                out.add(board)
    return out


def _board_name(record: Any) -> str | None:
    """The board name in a stored record (current form: ``board.name``; otherwise a
    ruleset definition's ``board`` when it names one)."""
    if not isinstance(record, dict):
        return None
    board = record.get("board")
    if isinstance(board, dict) and isinstance(board.get("name"), str):
        return str(board["name"])
    for key in ("ruleset", "ruleset_definition", "rules"):
        rules = record.get(key)
        if isinstance(rules, dict) and isinstance(rules.get("board"), str):
            return str(rules["board"])
    return None


def games_page(engine: Engine, *, ruleset: str | None = None,
               tournament_id: str | None = None, player: str | None = None,
               result: str | None = None, termination: str | None = None, limit: int = 50,
               offset: int = 0, withheld: WithheldCache) -> tuple[int, list[dict[str, Any]]]:
    """The number of stored games that match, and ``limit`` of them from ``offset``, newest
    first, as the games list shows them (less the games ``withheld`` now). ``player``: a
    bot of either side (a team's name or one of its seats) or a tournament's player as the
    leaderboard names it (its schedule entry's name, e.g. ``run2/rush``: Mister X played by
    ``run2``, the detectives by ``rush``); ``result``: ``mrx``, ``detectives`` or ``none``
    (no winner). Each game also names its sides' ``entrants``: the tournament players
    (as rated), or the bots outside a schedule."""
    where: list[Any] = []
    if ruleset is not None:
        where.append(GameRow.ruleset == ruleset)
    if tournament_id is not None:
        where.append(GameRow.tournament_id == tournament_id)
    if player is not None:
        seat_bot = sa.select(GameSeatRow.game_id).join(BotRow).where(
            GameSeatRow.game_id == GameRow.id, BotRow.name == player)
        own = aliased(ScheduledGameRow)  # not the listing's own join of the entries
        entry = sa.select(own.id).where(
            own.id == GameRow.schedule_id,
            sa.or_(own.mrx_player == player, own.detective_player == player))
        where.append(sa.or_(GameRow.mrx_player == player,
                            GameRow.detective_player == player, seat_bot.exists(),
                            entry.exists()))
    if result == "none":
        where.append(GameRow.winner.is_(None))
    elif result is not None:
        where.append(GameRow.winner == result)
    if termination is not None:
        where.append(GameRow.termination == termination)
    with Session(engine) as session:
        excluded = withheld.condition(session, tournament_id)
        if excluded is not None:
            where.append(excluded)
        query = sa.select(GameRow, ScheduledGameRow.mrx_player,
                          ScheduledGameRow.detective_player).outerjoin(
            ScheduledGameRow, ScheduledGameRow.id == GameRow.schedule_id).where(
            *where).order_by(GameRow.started_at.desc(), GameRow.id)
        total = session.scalar(sa.select(sa.func.count()).select_from(GameRow).where(*where))
        rows = session.execute(query.limit(limit).offset(offset)).all()
        return int(total or 0), [_game_summary(row, mrx, detectives)
                                 for row, mrx, detectives in rows]


def _game_summary(row: GameRow, mrx_entrant: str | None,
                  detective_entrant: str | None) -> dict[str, Any]:
    return {"game_id": row.id, "ruleset": row.ruleset, "mrx_player": row.mrx_player,
            "detective_player": row.detective_player, "winner": row.winner,
            "termination": row.termination,
            "fault_seat": None if row.fault_seat is None else seat_name(row.fault_seat),
            "moves": row.moves, "started_at": _iso(row.started_at),
            "finished_at": _iso(row.finished_at), "tournament_id": row.tournament_id,
            "entrants": {"mrx": mrx_entrant or row.mrx_player,
                         "detectives": detective_entrant or row.detective_player}}


def _iso(moment: datetime) -> str:
    text = moment.isoformat()
    return text if moment.tzinfo is not None else text + "+00:00"
