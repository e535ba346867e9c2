"""Tournaments: their spec, the runner's state and their progress; the record of a
scheduled game that could not be played (a forfeit)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from db.errors import TournamentError
from db.models import GameRow, ScheduledGameRow, TournamentRow
from db.records import GameRecord, ScheduledGame, SeatRecord, TournamentInfo
from db.store.base import Connection, aware, opt_str, utc
from game import Outcome, new_game, to_text


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

