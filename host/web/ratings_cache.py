"""Cached ratings for the web pages.

Fitting and bootstrapping a large database takes seconds. :class:`RatingsCache` keeps each
ruleset's leaderboard and matrix keyed by ``(ruleset, tournament, games stored)``, so a
request costs one ``GROUP BY`` count while no game is added, and the numbers are exactly
those of ``yard leaderboard --json`` / ``yard matrix --json`` (same functions, same
defaults) over the games that are not withheld (:mod:`db.store.queries`: a game whose
paired game is still to be played is rated once that one is over too).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from db.store import Database
from db.store.queries import WithheldCache, game_counts
from ratings.matrix import win_rate_matrix
from ratings.outcomes import from_results

EMPTY_BOARD: dict[str, Any] = {"anchor": None, "mrx_advantage": None, "games": 0, "rows": []}
EMPTY_MATRIX: dict[str, Any] = {"rows": [], "columns": [], "cells": []}


@dataclass(frozen=True)
class _Ratings:
    """One ruleset's cached ratings (``None``: only aborted games)."""

    leaderboard: dict[str, Any] | None
    matrix: dict[str, Any] | None


class RatingsCache:
    """Leaderboards and matrices per (ruleset, tournament, games stored).

    Thread-safe: concurrent requests for the same missing key compute it once; while newer
    numbers are being computed, other requests get the previous ones at once.
    """

    def __init__(self, store: Database, engine: Engine, max_entries: int = 64,
                 withheld: WithheldCache | None = None) -> None:
        """An empty cache of at most ``max_entries`` rating tables."""
        self.store = store
        self.engine = engine
        self.withheld = withheld or WithheldCache(engine)
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str | None, int], _Ratings] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[str, str | None, int], threading.Lock] = {}
        self._latest: dict[tuple[str, str | None], _Ratings] = {}
        self.computed = 0  # cache misses, for tests and benchmarks

    def counts(self, tournament_id: str | None) -> dict[str, int]:
        """Games stored and not withheld per ruleset (the cache key's last part)."""
        return game_counts(self.engine, tournament_id, self.withheld.get())

    def ratings(self, ruleset: str, tournament_id: str | None, stored: int) -> _Ratings:
        """The cached ratings of one ruleset, computed on a miss."""
        key = (ruleset, tournament_id, stored)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
            key_lock = self._key_locks.setdefault(key, threading.Lock())
            older = self._latest.get((ruleset, tournament_id))
        if older is not None and not key_lock.acquire(blocking=False):
            # Another request is computing the newer numbers (a tournament is adding
            # games): answer with the previous ones instead of queueing behind it.
            return older
        if older is not None:
            key_lock.release()
        with key_lock:
            with self._lock:
                hit = self._entries.get(key)
            if hit is not None:
                return hit
            value = self._compute(ruleset, tournament_id)
            with self._lock:
                self.computed += 1
                self._entries[key] = value
                self._latest[(ruleset, tournament_id)] = value
                self._key_locks.pop(key, None)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            return value

    def _compute(self, ruleset: str, tournament_id: str | None) -> _Ratings:
        # numpy comes with the fit: a server that is never asked for ratings starts without
        # it (every `yard serve` and tournament run starts one).
        from ratings.bootstrap import DEFAULT_SAMPLES
        from ratings.elo import fit_elo
        from ratings.leaderboard import leaderboard as build_leaderboard

        withheld = self.withheld.get().ids
        data = from_results([row for row in self.store.results(ruleset, tournament_id)
                             if row.game_id not in withheld])
        if not data.games:
            return _Ratings(None, None)
        board = build_leaderboard(data.games, samples=DEFAULT_SAMPLES, seed=0,
                                  excluded=data.excluded_by_ruleset.get(ruleset, 0))
        fit = fit_elo(data.games)
        order = sorted(fit.players, key=lambda p: (-fit.ratings[p], p))
        return _Ratings(json_safe(board.to_dict()),
                        json_safe(win_rate_matrix(data.games, order).to_dict()))

    def sections(self, ruleset: str | None, tournament_id: str | None,
                 which: str) -> dict[str, Any]:
        """``yard leaderboard --json`` (``which="leaderboard"``) or ``yard matrix --json``
        (``which="matrix"``) for the selection."""
        if tournament_id is not None:
            self.store.get_tournament(tournament_id)  # unknown: TournamentError
        counts = self.counts(tournament_id)
        names = [ruleset] if ruleset is not None else sorted(counts)
        sections = []
        for name in names:
            if not counts.get(name):
                continue
            cached = self.ratings(name, tournament_id, counts[name])
            section = cached.leaderboard if which == "leaderboard" else cached.matrix
            if section is not None:
                sections.append(section)
        if ruleset is not None:
            empty = EMPTY_BOARD if which == "leaderboard" else EMPTY_MATRIX
            return sections[0] if sections else {"ruleset": ruleset, **empty}
        return {"rulesets": sections}


def json_safe(value: Any) -> Any:
    """JSON-safe: NaN and infinities become ``null`` (browsers reject them in JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
