"""Stored games as self-contained records (docs/records.md) and record files read back.

:func:`record_lines` gives the JSON line of every selected stored game, with its tournament
and schedule entry, :func:`tournament_lines` the line of every selected tournament (its
whole schedule and runner state) and :func:`export_lines` both, as ``yard export --what
records`` writes them; :func:`game_from_file` finds one game in a records file; a file that
cannot be read is a :class:`~db.errors.RecordError`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, TextIO

from db.errors import GameNotFoundError, RecordError, TournamentError
from db.portable import PortableGame, from_portable, to_line, tournament_line
from db.store import Database
from db.store.tournaments import RUNNER_KEY
from records import GameRecord


def stored_game(store: Database, game_id: str) -> PortableGame:
    """A stored game with its tournament and schedule entry, ready for :func:`to_line`."""
    record = store.load_game(game_id)
    return PortableGame(record, *_context(store, record, {}))


def _context(store: Database, record: GameRecord, cache: dict[str, Any]) -> tuple[Any, Any]:
    if record.tournament_id is None:
        return None, None
    if record.tournament_id not in cache:
        try:
            info = store.get_tournament(record.tournament_id)
            entries = {e.schedule_id: e for e in store.scheduled(record.tournament_id)}
        except TournamentError:  # deleted since: the game is kept without it
            info, entries = None, {}
        cache[record.tournament_id] = (info, entries)
    info, entries = cache[record.tournament_id]
    if info is None:
        return None, None
    return info, entries.get(record.schedule_id)


def record_lines(store: Database, ruleset: str | None = None,
                 tournament_id: str | None = None) -> Iterator[str]:
    """The self-contained record of every selected game as a JSON line, oldest first."""
    cache: dict[str, Any] = {}
    for row in store.results(ruleset, tournament_id):
        record = store.load_game(row.game_id)
        yield to_line(record, *_context(store, record, cache))


def tournament_lines(store: Database, ruleset: str | None = None,
                     tournament_id: str | None = None) -> Iterator[str]:
    """The tournament line of every selected tournament (``tournament_id``, else those of
    ``ruleset``, else all), oldest first: its whole schedule and runner state
    (:func:`db.portable.tournament_to_portable`)."""
    if tournament_id is not None:
        infos = [store.get_tournament(tournament_id)]
    else:
        infos = [info for info in reversed(store.list_tournaments())
                 if ruleset is None or info.spec.get("rules") == ruleset]
    for info in infos:
        tid = info.tournament_id
        unplayed = {entry.schedule_id for entry in store.pending(tid)}
        state = {k: v for k, v in info.state.items() if k != RUNNER_KEY}  # runtime only
        yield tournament_line(replace(info, state=state), store.scheduled(tid), unplayed)


def export_lines(store: Database, ruleset: str | None = None,
                 tournament_id: str | None = None) -> Iterator[tuple[str, str]]:
    """What ``yard export --what records`` writes, as ``(kind, line)``: every selected
    game (``"game"``, oldest first), then every selected tournament (``"tournament"``:
    :func:`tournament_lines`, written after the games so that it tells their state)."""
    for line in record_lines(store, ruleset, tournament_id):
        yield "game", line
    for line in tournament_lines(store, ruleset, tournament_id):
        yield "tournament", line


def _open(file: str) -> TextIO:
    if file == "-":
        return sys.stdin
    try:
        return open(file, encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read {file}: {exc.strerror}") from None


def record_file_lines(file: str) -> list[str]:
    """The lines of a records file ('-' for standard input)."""
    handle = _open(file)
    try:
        return handle.read().splitlines()
    except UnicodeDecodeError:
        raise RecordError(f"{file}: not a UTF-8 text file") from None
    finally:
        if handle is not sys.stdin:
            handle.close()


def game_from_file(file: str, game_id: str) -> PortableGame:
    """Game ``game_id`` of the records file ``file`` ('-' for standard input)."""
    for number, line in enumerate(record_file_lines(file), start=1):
        try:
            data = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("game_id") == game_id:
            try:
                return from_portable(data)
            except RecordError as exc:
                raise RecordError(f"{file} line {number}: {exc}") from None
    raise GameNotFoundError(f"no game {game_id!r} in {file}")
