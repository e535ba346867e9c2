"""What the web API reads: cached ratings, game and tournament lists, replays, live games.

Everything here is read-only and synchronous (the HTTP layer calls it through
``asyncio.to_thread``), except :class:`LiveGames`, which reads the running server's
matches on the event loop.

Ratings are the expensive part: fitting and bootstrapping a large database takes seconds.
:class:`RatingsCache` keeps each ruleset's leaderboard and matrix keyed by
``(ruleset, tournament, games stored)``, so a request costs one ``GROUP BY`` count while no
game is added, and the numbers are exactly those of ``yard leaderboard --json`` /
``yard matrix --json`` (same functions, same defaults).
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy.engine import Engine

from db.errors import ReplayError
from db.records import GameRecord, TournamentInfo, TurnRecord
from db.store import Database
from db.store.queries import game_counts, games_page
from game import Move, State, Termination, YardError, from_text, load_board, seat_name
from game.board import TRANSPORT_NAMES, Board, Transport
from game.moves import TICKET_NAMES
from game.rules import Ruleset, load_ruleset, ruleset_from_dict
from game.views import rules_from_definition
from protocol import to_json
from ratings.bootstrap import DEFAULT_SAMPLES
from ratings.elo import fit_elo
from ratings.leaderboard import leaderboard as build_leaderboard
from ratings.matrix import win_rate_matrix
from ratings.outcomes import from_results


class WebError(YardError):
    """A request the API cannot answer; ``status`` is the HTTP status to send."""

    status = 400
    code = "bad_request"


class NotFound(WebError):
    """No such page, game, tournament or live game."""

    status = 404
    code = "not_found"


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

    def __init__(self, store: Database, engine: Engine, max_entries: int = 64) -> None:
        self.store = store
        self.engine = engine
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str | None, int], _Ratings] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[str, str | None, int], threading.Lock] = {}
        self._latest: dict[tuple[str, str | None], _Ratings] = {}
        self.computed = 0  # cache misses, for tests and benchmarks

    def counts(self, tournament_id: str | None) -> dict[str, int]:
        """Games stored per ruleset (the cache key's last part)."""
        return game_counts(self.engine, tournament_id)

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
        data = from_results(self.store.results(ruleset, tournament_id))
        if not data.games:
            return _Ratings(None, None)
        board = build_leaderboard(data.games, samples=DEFAULT_SAMPLES, seed=0,
                                  excluded=data.excluded_by_ruleset.get(ruleset, 0))
        fit = fit_elo(data.games)
        order = sorted(fit.players, key=lambda p: (-fit.ratings[p], p))
        return _Ratings(_clean(board.to_dict()),
                        _clean(win_rate_matrix(data.games, order).to_dict()))

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


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become ``null`` (browsers reject them in JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


# ---------------------------------------------------------------------- games


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


# ---------------------------------------------------------------------- tournaments


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
    return _clean(sprt) if isinstance(sprt, dict) else None


# ---------------------------------------------------------------------- replays


PERSPECTIVES = ("all", "mrx", "detectives")


def record_rules(record: GameRecord) -> Ruleset:
    """The ruleset a stored game was played under."""
    try:
        if record.ruleset_definition:
            return ruleset_from_dict(dict(record.ruleset_definition),
                                     f"game {record.game_id} ruleset")
        return load_ruleset(record.ruleset)
    except YardError as exc:
        raise ReplayError(f"game {record.game_id}: cannot load its ruleset: {exc}") from None


def _states(record: GameRecord, rules: Ruleset) -> Iterator[tuple[TurnRecord | None, State]]:
    """The start state, then each turn with the state after it (a fault without a move
    leaves the state as it was)."""
    try:
        state = from_text(record.start_position, rules)
    except YardError as exc:
        raise ReplayError(f"game {record.game_id}: cannot rebuild the start: {exc}") from None
    yield None, state
    for turn in record.turns:
        if turn.move is not None:
            try:
                state = state.apply(Move.parse(turn.move))
            except YardError as exc:
                raise ReplayError(f"game {record.game_id}, turn {turn.index}: {exc}") from None
        yield turn, state


def replay(record: GameRecord, perspective: str = "all") -> dict[str, Any]:
    """Every state of a finished game from one perspective, ready for the replay page.

    ``all`` and ``mrx`` carry the truth (Mister X's station in every frame, his path, the
    seed); ``detectives`` is built from the detectives' views only: Mister X's stations
    appear only on reveal slots, his moves show tickets, his fault details are withheld.
    """
    if perspective not in PERSPECTIVES:
        raise WebError(f"perspective must be one of {', '.join(PERSPECTIVES)}")
    truth = perspective != "detectives"
    rules = record_rules(record)
    frames: list[dict[str, Any]] = []
    final: State | None = None
    before: State | None = None
    for turn, state in _states(record, rules):
        view = state.view(0 if truth else None).to_dict()
        frame = {k: view[k] for k in ("to_move", "move_number", "detectives", "tickets",
                                      "last_reveal", "possible", "outcome")}
        if truth:
            frame["mrx"] = view["mrx"]
        frame["turn"] = None if turn is None or before is None else _turn(turn, before, truth)
        frames.append(frame)
        before = final = state
    assert final is not None
    log = final.view(0 if truth else None).to_dict()["log"]
    for slot, entry in enumerate(log, start=1):
        entry["reveal"] = slot in rules.reveal_moves
    out: dict[str, Any] = {
        "game_id": record.game_id, "perspective": perspective, "ruleset": record.ruleset,
        "rules": rules.definition(),
        "players": {seat_name(s.seat): s.bot_name for s in sorted(record.seats,
                                                                  key=lambda s: s.seat)},
        "versions": {seat_name(s.seat): s.bot_version for s in record.seats},
        "outcome": record.outcome.to_dict() | {
            "seat": None if record.outcome.seat is None else seat_name(record.outcome.seat)},
        "moves": record.moves, "started_at": record.started_at.isoformat(),
        "finished_at": record.finished_at.isoformat(), "tournament_id": record.tournament_id,
        "board": board_drawing(rules.board), "log": log, "frames": frames,
    }
    if truth:
        out["mrx_path"] = list(record.mrx_path)
        out["seed"] = None if record.seed is None else str(record.seed)
    return _clean(out)  # type: ignore[no-any-return]


_TURN_FIELDS = {"index", "seat", "move", "time_used", "fault", "detail"}


def _turn(turn: TurnRecord, before: State, truth: bool) -> dict[str, Any]:
    """One turn as shown; Mister X's move is masked for the detectives."""
    hidden = turn.seat == 0 and not truth
    legs: list[dict[str, Any]] = []
    if turn.move is not None:
        move = Move.parse(turn.move)
        pairs = [(move.ticket, move.to)]
        if move.ticket2 is not None and move.to2 is not None:
            pairs.append((move.ticket2, move.to2))
        for slot, (ticket, station) in enumerate(pairs, start=before.move_number + 1):
            reveal = turn.seat == 0 and before.is_reveal(slot)
            shown = not hidden or reveal
            legs.append({"ticket": TICKET_NAMES[ticket], "station": station if shown else None,
                         "reveal": reveal})
    text = None if turn.move is None else "+".join(
        f"{leg['ticket']}:{leg['station'] if leg['station'] is not None else '?'}"
        for leg in legs)
    out: dict[str, Any] = {"index": turn.index, "seat": seat_name(turn.seat), "move": text,
                           "legs": legs, "time_used": turn.time_used, "fault": turn.fault,
                           "detail": None if hidden else turn.detail}
    # Fields later versions add to a turn (server-measured time, search effort...): shown
    # as they are, except that a hidden Mister X turn keeps only plain numbers.
    for name, value in dataclasses.asdict(turn).items():
        if name in _TURN_FIELDS or value is None:
            continue
        if not hidden or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[name] = value
    return out


@lru_cache(maxsize=16)
def _board_drawing_cached(board: Board) -> dict[str, Any]:
    edges: dict[str, list[list[int]]] = {}
    for transport, table in enumerate(board.adjacency):
        name = TRANSPORT_NAMES[Transport(transport)]
        pairs = [[a, b] for a in board.stations for b in table[a] if a < b]
        if pairs:
            edges[name] = pairs
    if board.positions:
        positions = {s: board.positions[s] for s in board.stations if s in board.positions}
    else:  # a map without drawing positions: stations on a circle
        n = board.n_stations
        positions = {s: (round(500 + 450 * math.cos(2 * math.pi * s / n)),
                         round(500 + 450 * math.sin(2 * math.pi * s / n)))
                     for s in board.stations}
    return {"name": board.name, "grid": board.is_grid, "width": board.width,
            "height": board.height,
            "stations": [[s, *positions.get(s, (0, 0))] for s in board.stations],
            "edges": edges}


def board_drawing(board: Board) -> dict[str, Any]:
    """Stations with drawing positions and edges by transport, for the SVG board."""
    return _board_drawing_cached(board)


def board_by_name(name: str) -> dict[str, Any]:
    """The drawing of a packaged board (``london``) or a grid (``gridWxH``) by name; never
    a file path."""
    if name != "london" and not (name.startswith("grid") and name[4:].replace("x", "", 1)
                                 .isdigit() and "x" in name):
        raise NotFound(f"no board {name!r:.40}")
    try:
        return board_drawing(load_board(name))
    except YardError as exc:
        raise NotFound(str(exc)) from None


# ---------------------------------------------------------------------- live games


class LiveMatch(Protocol):
    """What the web layer reads of a running match (``server.match.Match``)."""

    @property
    def game_id(self) -> str: ...

    @property
    def spec(self) -> Any: ...

    def watching(self) -> Any: ...


class LiveSource(Protocol):
    """The running server's matches (``server.core.Core`` has ``matches``)."""

    @property
    def matches(self) -> dict[str, Any]: ...


def live_list(source: LiveSource | None) -> list[dict[str, Any]]:
    """Games being played now, from the spectators' snapshot only (no hidden data)."""
    if source is None:
        return []
    out = []
    for match in list(source.matches.values()):
        snap = to_json(match.watching())
        view = snap["view"]
        out.append({"game_id": snap["game"], "ruleset": snap["rules"]["name"],
                    "players": snap["players"], "move_number": view["move_number"],
                    "to_move": view["to_move"],
                    "tournament_id": getattr(match.spec, "tournament_id", None)})
    out.sort(key=lambda g: g["game_id"])
    return out


def live_game(source: LiveSource | None, game_id: str) -> dict[str, Any]:
    """A running game's spectator snapshot (the protocol's ``watching``: detectives'
    perspective) plus the board drawing."""
    match = None if source is None else source.matches.get(game_id)
    if match is None:
        raise NotFound(f"no running game {game_id!r:.60}")
    snap: dict[str, Any] = to_json(match.watching())
    rules = rules_from_definition(snap["rules"])
    snap["board"] = board_drawing(rules.board)
    snap["tournament_id"] = getattr(match.spec, "tournament_id", None)
    return snap


# ---------------------------------------------------------------------- running


def running_tournaments(source: LiveSource | None) -> set[str]:
    """Ids of tournaments with a game running on this server."""
    if source is None:
        return set()
    ids: Iterable[Any] = (getattr(m.spec, "tournament_id", None)
                          for m in list(source.matches.values()))
    return {i for i in ids if i}


__all__ = ["GameFilter", "LiveSource", "NotFound", "RatingsCache", "WebError",
           "board_by_name", "board_drawing", "list_games", "live_game", "live_list",
           "replay", "sprt_state", "tournament_dict"]
