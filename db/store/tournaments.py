"""Tournaments: their spec, the runner's state and their progress, the lease of the
runner playing one, deleting one; the record of a scheduled game that could not be played
(a forfeit); tournaments and schedules read from an export."""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.orm import Session

from db.errors import TournamentError
from db.models import (
    GameRecordRow,
    GameRow,
    GameSeatRow,
    ScheduledGameRow,
    TournamentRow,
    TurnRow,
)
from db.store.base import Connection, aware, opt_str, utc
from db.store.leases import ABORTED_LEASE
from db.store.schedule import schedule_row
from game import Outcome, new_game, to_text
from records import GameRecord, ScheduledGame, SeatRecord, TournamentInfo

#: The key of a tournament's state that holds the lease of the runner playing it:
#: ``{"host", "pid", "expires"}`` (runtime only: never exported).
RUNNER_KEY = "runner"


class DeletedTournament(NamedTuple):
    """What :meth:`Tournaments.delete_tournament` removed."""

    games: int
    scheduled: int


class HasGamesError(TournamentError):
    """A tournament to delete has stored games and the caller did not say they go too."""

    def __init__(self, message: str, games: int, scheduled: int) -> None:
        """Refuse with ``message``, carrying the tournament's game counts."""
        super().__init__(message)
        self.games = games
        self.scheduled = scheduled


class Tournaments(Connection):
    """Creating, reading and updating tournaments."""

    def create_tournament(self, spec: dict[str, Any], tournament_id: str | None = None) -> str:
        """Store a new tournament with its ``spec`` (JSON-ready: rules, bots, format,
        pairs, seed, move time, self-play...); returns its id."""
        try:
            spec = json.loads(json.dumps(spec))
        except (TypeError, ValueError) as exc:
            raise TournamentError(f"tournament spec is not JSON-ready: {exc}") from None
        tid = tournament_id or uuid.uuid4().hex[:12]
        row = TournamentRow(id=tid, created_at=datetime.now(UTC), spec=spec,
                            rules=opt_str(spec.get("rules")),
                            format=opt_str(spec.get("format")))
        with self._write("create tournament") as session:
            if session.get(TournamentRow, tid) is not None:
                raise TournamentError(f"tournament {tid!r} already exists")
            session.add(row)
        return tid

    def get_tournament(self, tournament_id: str) -> TournamentInfo:
        """A stored tournament with its progress; :class:`TournamentError` if unknown."""
        with self._read("read tournament") as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            return self._info(session, row)

    def list_tournaments(self) -> list[TournamentInfo]:
        """All tournaments, newest first."""
        query = sa.select(TournamentRow).order_by(TournamentRow.created_at.desc())
        with self._read("list tournaments") as session:
            return [self._info(session, row) for row in session.scalars(query)]

    @staticmethod
    def _info(session: Session, row: TournamentRow) -> TournamentInfo:
        total = session.scalar(sa.select(sa.func.count()).select_from(ScheduledGameRow)
                               .where(ScheduledGameRow.tournament_id == row.id)) or 0
        played = session.scalar(sa.select(sa.func.count()).select_from(GameRow)
                                .join(ScheduledGameRow, GameRow.schedule_id == ScheduledGameRow.id)
                                .where(ScheduledGameRow.tournament_id == row.id)) or 0
        return TournamentInfo(row.id, dict(row.spec), aware(row.created_at), total, played,
                              dict(row.state or {}))

    def update_tournament_state(self, tournament_id: str, **values: Any) -> dict[str, Any]:
        """Merge ``values`` (JSON-ready) into a tournament's runner state; returns the new
        state. :class:`TournamentError` if the tournament is unknown."""
        try:
            values = json.loads(json.dumps(values, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise TournamentError(f"tournament state is not JSON-ready: {exc}") from None
        with self._write("update tournament state") as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            row.state = {**(row.state or {}), **values}
            return dict(row.state)

    def hold_runner(self, tournament_id: str, lease_s: float) -> None:
        """Record that this process (host and pid) plays the tournament for the next
        ``lease_s`` seconds (the runner renews it; :meth:`release_runner` gives it up)."""
        expires = datetime.now(UTC) + timedelta(seconds=lease_s)
        lease = {"host": socket.gethostname(), "pid": os.getpid(),
                 "expires": expires.isoformat()}
        with self._write("hold the runner lease") as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            row.state = {**(row.state or {}), RUNNER_KEY: lease}

    def release_runner(self, tournament_id: str) -> None:
        """Give up this process's runner lease on the tournament (another's is kept)."""
        with self._write("release the runner lease") as session:
            row = session.get(TournamentRow, tournament_id)
            lease = (row.state or {}).get(RUNNER_KEY) if row is not None else None
            if row is not None and isinstance(lease, dict) and \
                    (lease.get("host"), lease.get("pid")) == (socket.gethostname(),
                                                              os.getpid()):
                row.state = {k: v for k, v in (row.state or {}).items() if k != RUNNER_KEY}

    def playing(self, tournament_id: str) -> str | None:
        """Who plays the tournament now (a live runner's lease, cluster workers' leases on
        its games), as a phrase for messages; ``None`` when nobody does."""
        with self._read("read tournament leases") as session:
            return _playing(session, tournament_id)

    def delete_tournament(self, tournament_id: str, *,
                          with_games: bool = False) -> DeletedTournament:
        """Delete a tournament with its schedule and, with ``with_games``, its stored games
        (seats, turns, records), all in one transaction. Refuses (:class:`TournamentError`)
        an unknown tournament and one that a runner or cluster worker is playing, and
        (:class:`HasGamesError`) one with stored games unless ``with_games``."""
        with self._write("delete tournament") as session:
            row = session.scalars(sa.select(TournamentRow)
                                  .where(TournamentRow.id == tournament_id)
                                  .with_for_update()).first()
            if row is None:
                raise TournamentError(f"no tournament {tournament_id!r} in database "
                                      f"{self.url}")
            if (who := _playing(session, tournament_id)) is not None:
                raise TournamentError(f"tournament {tournament_id} is being played ({who}); "
                                      f"stop it before deleting it")
            entries = sa.select(ScheduledGameRow.id).where(
                ScheduledGameRow.tournament_id == tournament_id)
            games = sa.select(GameRow.id).where(sa.or_(
                GameRow.tournament_id == tournament_id, GameRow.schedule_id.in_(entries)))
            game_ids = list(session.scalars(games))
            scheduled = session.scalar(sa.select(sa.func.count()).select_from(
                entries.subquery())) or 0
            if game_ids and not with_games:
                raise HasGamesError(f"tournament {tournament_id} has {len(game_ids)} stored "
                                    f"game{'s' if len(game_ids) != 1 else ''}; deleting it "
                                    f"deletes them too",
                                    len(game_ids), int(scheduled))
            chosen = GameRow.id.in_(games)
            for table in (TurnRow, GameSeatRow, GameRecordRow):
                session.execute(sa.delete(table).where(table.game_id.in_(games)))
            session.execute(sa.delete(GameRow).where(chosen))
            session.execute(sa.delete(ScheduledGameRow).where(
                ScheduledGameRow.tournament_id == tournament_id))
            session.execute(sa.delete(TournamentRow).where(TournamentRow.id == tournament_id))
            return DeletedTournament(len(game_ids), int(scheduled))


def _playing(session: Session, tournament_id: str) -> str | None:
    now = datetime.now(UTC)
    state = session.scalar(sa.select(TournamentRow.state)
                           .where(TournamentRow.id == tournament_id)) or {}
    lease = state.get(RUNNER_KEY) if isinstance(state, dict) else None
    if isinstance(lease, dict) and _live(lease, now):
        return (f"a runner on {lease.get('host')} (process {lease.get('pid')}) holds it "
                f"until {lease.get('expires')}")
    played = sa.select(GameRow.id).where(GameRow.schedule_id == ScheduledGameRow.id)
    held = session.scalar(
        sa.select(sa.func.count(ScheduledGameRow.id))
        .where(ScheduledGameRow.tournament_id == tournament_id, ~played.exists(),
               ScheduledGameRow.lease_owner.is_not(None),
               ScheduledGameRow.lease_owner != ABORTED_LEASE,
               ScheduledGameRow.lease_expires >= now)) or 0
    if held:
        return f"cluster workers hold leases on {held} of its games"
    return None


def _live(lease: dict[str, Any], now: datetime) -> bool:
    """Whether a runner lease is live: not expired, and on this host its process exists."""
    try:
        expires = utc(datetime.fromisoformat(str(lease.get("expires"))))
    except ValueError:
        return False
    if expires <= now:
        return False
    pid = lease.get("pid")
    if lease.get("host") == socket.gethostname() and isinstance(pid, int):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False  # the runner died without giving its lease up
        except PermissionError:
            return True  # someone else's process
    return True


def forfeit_record(tournament_id: str, entry: ScheduledGame, outcome: Outcome, detail: str,
                   rules: str | None, detectives: int | None = None,
                   game_id: str | None = None) -> GameRecord:
    """A zero-move :class:`GameRecord` for a schedule entry that was never played (dealt
    as it would have been: ``entry.seed`` and ``entry.mrx_seed``)."""
    if rules is None:
        raise TournamentError(f"tournament {tournament_id}: spec has no 'rules'; pass rules=")
    start = new_game(rules, entry.seed, detectives, mrx_seed=entry.mrx_seed)
    names = entry.detectives.split("+")
    seats = [SeatRecord(0, entry.mrx)] + [SeatRecord(i, names[(i - 1) % len(names)])
                                          for i in range(1, start.n_detectives + 1)]
    now = datetime.now(UTC)
    return GameRecord(
        game_id=game_id or f"{tournament_id}-{entry.index}-forfeit", ruleset=start.rules.name,
        ruleset_definition=start.rules.definition(), seed=entry.seed,
        start_position=to_text(start), seats=seats, outcome=outcome, turns=[],
        mrx_path=[start.mrx_station], started_at=now, finished_at=now, moves=0,
        tournament_id=tournament_id, schedule_id=entry.schedule_id,
        transcripts={"detail": [{"forfeit": detail}]} if detail else {},
        mrx_seed=entry.mrx_seed)


def ensure_tournament(session: Session, info: TournamentInfo) -> str:
    """The id of an imported game's tournament, created (spec, creation time) if missing."""
    if session.get(TournamentRow, info.tournament_id) is None:
        spec = info.spec
        session.add(TournamentRow(id=info.tournament_id, created_at=utc(info.created_at),
                                  spec=spec, rules=opt_str(spec.get("rules")),
                                  format=opt_str(spec.get("format"))))
        session.flush()
    return info.tournament_id



def import_tournament(session: Session, info: TournamentInfo,
                      entries: Sequence[ScheduledGame]) -> None:
    """Store a tournament read from an export (``info``: id, spec, creation time, runner
    state) with its whole schedule ``entries``, before its games are imported.

    A tournament this database lacks is created; one it has keeps its spec (gaining the
    deal ``secret`` when it lacked it and ``info`` has it) and its state (gaining the keys
    it lacks). Missing schedule entries are created; an existing entry must have the same
    players and pair (:class:`TournamentError` otherwise), and gains the seed it lacked
    (withheld by an export made before the tournament was finished).
    """
    state = {k: v for k, v in info.state.items() if k != RUNNER_KEY}
    row = session.get(TournamentRow, info.tournament_id)
    if row is None:
        spec = info.spec
        session.add(TournamentRow(id=info.tournament_id, created_at=utc(info.created_at),
                                  spec=spec, rules=opt_str(spec.get("rules")),
                                  format=opt_str(spec.get("format")), state=state or None))
        session.flush()
    else:
        secret = info.spec.get("secret")
        if secret is not None and row.spec.get("secret") is None and \
                {k: v for k, v in row.spec.items() if k != "secret"} == \
                {k: v for k, v in info.spec.items() if k != "secret"}:
            row.spec = {**row.spec, "secret": secret}
        merged = {**state, **(row.state or {})}
        if merged != (row.state or {}):
            row.state = merged
    rows = {r.game_index: r for r in session.scalars(
        sa.select(ScheduledGameRow).where(ScheduledGameRow.tournament_id == info.tournament_id))}
    for entry in entries:
        found = rows.get(entry.index)
        if found is None:
            session.add(schedule_row(info.tournament_id, entry))
            continue
        if (found.pair_index, found.pair_key, found.mrx_player, found.detective_player) != \
                (entry.pair_index, entry.pair_key, entry.mrx, entry.detectives) or \
                (None not in (found.seed, entry.seed) and found.seed != entry.seed):
            raise TournamentError(f"schedule entry {entry.index} of tournament "
                                  f"{info.tournament_id} differs in this database "
                                  f"({found.mrx_player} vs {found.detective_player}, seed "
                                  f"{found.seed})")
        if found.seed is None and entry.seed is not None:
            found.seed = entry.seed
    session.flush()
