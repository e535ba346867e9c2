"""The games list and tournaments as the web API shows them (read-only, synchronous: the
HTTP layer calls them through ``asyncio.to_thread``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from db.records import TournamentInfo
from db.store.queries import games_page
from game import Termination
from server.web.errors import WebError
from server.web.ratings_cache import json_safe

RESULTS = ("mrx", "detectives", "none")
MAX_LIMIT = 500


@dataclass(frozen=True)
class GameFilter:
    """Filters of the games list (all optional)."""

    ruleset: str | None = None
    tournament_id: str | None = None
    player: str | None = None
    result: str | None = None
    termination: str | None = None
    limit: int = 50
    offset: int = 0

    def check(self) -> None:
        """Raise :class:`WebError` on a value that cannot match anything sensible."""
        if self.result is not None and self.result not in RESULTS:
            raise WebError(f"result must be one of {', '.join(RESULTS)}")
        if self.termination is not None and self.termination not in {
                t.value for t in Termination}:
            raise WebError(f"unknown termination {self.termination!r:.60}")
        if not 1 <= self.limit <= MAX_LIMIT or self.offset < 0:
            raise WebError(f"limit must be 1..{MAX_LIMIT} and offset >= 0")


def list_games(engine: Engine, flt: GameFilter) -> dict[str, Any]:
    """One page of stored games, newest first, with the total count of the selection."""
    flt.check()
    total, games = games_page(engine, ruleset=flt.ruleset, tournament_id=flt.tournament_id,
                              player=flt.player, result=flt.result,
                              termination=flt.termination, limit=flt.limit, offset=flt.offset)
    return {"total": total, "limit": flt.limit, "offset": flt.offset, "games": games}


def tournament_dict(info: TournamentInfo, running: bool) -> dict[str, Any]:
    """A tournament as the API shows it, with ``status``: ``running`` (games being played
    on this server now or seconds ago), ``finished`` (every scheduled game stored, or ended
    early by the runner) or ``incomplete`` (not running here: stopped, or played elsewhere)."""
    status = "running" if running else "finished" if info.finished else "incomplete"
    spec = info.spec
    state = getattr(info, "state", None) or {}
    return {"finished_early": bool(state.get("finished")) and info.played < info.scheduled,
            "tournament_id": info.tournament_id, "rules": spec.get("rules"),
            "bots": list(spec.get("bots") or []), "format": spec.get("format"),
            "pairs": spec.get("pairs"), "scheduled": info.scheduled, "played": info.played,
            "status": status, "created_at": info.created_at.isoformat(), "spec": spec}


def sprt_state(info: TournamentInfo) -> dict[str, Any] | None:
    """The SPRT state the tournament runner stored with the tournament (``None``: no
    SPRT), in :meth:`ratings.sprt.SprtState.to_dict` form."""
    state = getattr(info, "state", None) or {}
    sprt = state.get("sprt")
    return json_safe(sprt) if isinstance(sprt, dict) else None
