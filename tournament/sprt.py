"""SPRT tournaments: the test's state from stored games, and the runner's live monitor.

A tournament whose spec has an ``sprt`` entry (``yard tournament run --sprt ...``) is a test
of its first player ``A`` against its second ``B`` (the mathematics is in
:mod:`ratings.sprt`). Its schedule holds ``pairs`` role-swapped pairs, the most the test may
use; the runner stops starting games as soon as the complete pairs stored give a decision,
lets the games already running finish, and records the final state (computed from every
stored game, exactly as :func:`sprt_state` does) in the tournament's ``state``:
``{"sprt": {...}, "finished": true}``. A resume of a decided test plays nothing; the unplayed
entries of its schedule stay unplayed.

A pair counts once both of its games are decided (aborted games are replayed by a resume;
forfeits count as decided).

>>> game_points("a", mrx="a", detectives="b", winner="mrx")
1.0
>>> game_points("a", mrx="b", detectives="a", winner="mrx")
0.0
>>> game_points("a", mrx="b", detectives="a", winner=None) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from db.store import Database
from game import Outcome
from ratings.sprt import PairTally, SprtError, SprtSpec, SprtState, evaluate
from records import ResultRow, ScheduledGame

#: Key of the SPRT in a tournament's stored state.
STATE_KEY = "sprt"


def game_points(player: str, mrx: str, detectives: str, winner: object) -> float | None:
    """``player``'s points in one game (1 for a win, 0 for a loss), ``None`` when the
    game was not decided. ``winner`` is ``"mrx"``, ``"detectives"``, a ``game.Winner`` or
    ``None``."""
    side = getattr(winner, "value", winner)
    if side is None:
        return None
    if side not in ("mrx", "detectives"):
        raise SprtError(f"unknown winner {winner!r}")
    won_as = mrx if side == "mrx" else detectives
    return 1.0 if won_as == player else 0.0


def spec_of(tournament_spec: dict[str, Any]) -> tuple[SprtSpec, str, str, int] | None:
    """``(test, A, B, max pairs)`` of a stored tournament spec, ``None`` without SPRT."""
    data = tournament_spec.get("sprt")
    if not data:
        return None
    bots = list(tournament_spec.get("bots") or [])
    if len(bots) != 2:
        raise SprtError(f"an SPRT needs exactly two players, the tournament has {len(bots)}")
    return SprtSpec.from_dict(data), str(bots[0]), str(bots[1]), int(tournament_spec["pairs"])


class SprtMonitor:
    """The live test of one tournament: starts from its stored games, then takes each
    game the runner finishes. Keys match :meth:`Database.results` (pair key prefixed with
    the tournament id, game keyed by schedule id)."""

    def __init__(self, tournament_id: str, test: SprtSpec, player: str, opponent: str,
                 max_pairs: int) -> None:
        """A test of ``player`` against ``opponent`` stopping after ``max_pairs``."""
        self.tournament_id = tournament_id
        self.test = test
        self.players = (player, opponent)
        self.max_pairs = max_pairs
        self.tally = PairTally()
        self._cached: tuple[tuple[int, ...], SprtState] | None = None

    @classmethod
    def load(cls, db: Database, tournament_id: str) -> SprtMonitor | None:
        """The monitor of a stored tournament with its stored games counted; ``None`` when
        the tournament is no SPRT."""
        found = spec_of(db.get_tournament(tournament_id).spec)
        if found is None:
            return None
        monitor = cls(tournament_id, *found)
        monitor.add_results(db.results(tournament_id=tournament_id))
        return monitor

    def add_results(self, rows: Iterable[ResultRow]) -> None:
        """Count stored games (rows without a schedule pair are not part of the test)."""
        for row in rows:
            if row.pair_key is None or row.schedule_id is None:
                continue
            points = game_points(self.players[0], row.mrx_player, row.detective_player,
                                 row.winner)
            if points is not None:
                self.tally.add(row.pair_key, str(row.schedule_id), points)

    def add(self, entry: ScheduledGame, outcome: Outcome) -> None:
        """Count one game the runner has just finished (and the server stored)."""
        points = game_points(self.players[0], entry.mrx, entry.detectives, outcome.winner)
        if points is not None and entry.schedule_id is not None:
            self.tally.add(f"{self.tournament_id}/{entry.pair_key}", str(entry.schedule_id),
                           points)

    def state(self) -> SprtState:
        """The test after the games counted so far."""
        key = (*self.tally.counts, self.tally.incomplete)
        if self._cached is None or self._cached[0] != key:
            self._cached = key, evaluate(self.test, self.tally.counts, self.max_pairs,
                                         self.players, self.tally.incomplete)
        return self._cached[1]

    @property
    def decided(self) -> bool:
        """True once the counted pairs give a final decision."""
        return self.state().decision.final


def sprt_state(db: Database, tournament_id: str) -> SprtState | None:
    """The SPRT of a tournament recomputed from its stored games (``None``: the tournament
    is no SPRT). :class:`~db.errors.TournamentError` for an unknown tournament."""
    monitor = SprtMonitor.load(db, tournament_id)
    return None if monitor is None else monitor.state()


def stored_sprt_state(db: Database, tournament_id: str) -> dict[str, Any] | None:
    """The SPRT state the runner last recorded (:meth:`SprtState.to_dict` form), if any."""
    value = db.get_tournament(tournament_id).state.get(STATE_KEY)
    return dict(value) if isinstance(value, dict) else None


def store_state(db: Database, tournament_id: str, state: SprtState) -> None:
    """Record ``state`` with the tournament (``finished`` once it is decided)."""
    db.update_tournament_state(tournament_id, **{STATE_KEY: state.to_dict()},
                               finished=state.decision.final)


def record_state(db: Database, tournament_id: str) -> SprtState | None:
    """Recompute the test from the stored games and record it with the tournament;
    returns it, ``None`` when the tournament is no SPRT."""
    state = sprt_state(db, tournament_id)
    if state is not None:
        store_state(db, tournament_id, state)
    return state


__all__ = ["STATE_KEY", "SprtMonitor", "game_points", "record_state", "spec_of",
           "sprt_state", "store_state", "stored_sprt_state"]
