"""Games being played on this server now, read on the event loop from the running
server's matches: only the spectators' snapshot (the detectives' perspective) and the
moves so far as spectators were sent them (:func:`public_moves`), never hidden
information."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from game import MRX, Move, seat_name
from game.rules import Ruleset
from game.views import TICKET_NAME_LIST, detective_log, rules_from_definition
from host.web.boards import board_drawing
from host.web.errors import NotFound
from protocol import to_json


class LiveSource(Protocol):
    """The running server's matches (``server.core.Core`` has ``matches``)."""

    @property
    def matches(self) -> dict[str, Any]:
        """The spectators' snapshot of the matches running, by game id."""


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
    perspective) plus the board drawing and ``moves``, every move so far as the
    spectators' ``update`` messages showed it (:func:`public_moves`), so a page opened
    mid-game shows the game from move 1."""
    match = None if source is None else source.matches.get(game_id)
    if match is None:
        raise NotFound(f"no running game {game_id!r:.60}")
    snap: dict[str, Any] = to_json(match.watching())
    snap["moves"] = public_moves(match)
    rules = getattr(match.spec, "rules", None)
    board = rules.board if isinstance(rules, Ruleset) else \
        rules_from_definition(snap["rules"]).board
    snap["board"] = board_drawing(board)  # cached per board: the match keeps its own
    snap["tournament_id"] = getattr(match.spec, "tournament_id", None)
    return snap


def public_moves(match: Any) -> list[dict[str, Any]]:
    """The moves played so far in running ``match`` as spectators' ``update`` messages
    showed them (``turn``, ``seat``, ``move``): a detective's move as played, Mister X's as
    his tickets only, with the station on reveal moves only (his travel log as the
    detectives see it). The refereed moves (``match.turns``) give each Mister X turn its
    number of legs; the texts come from the detectives' log, never from his true move."""
    shown = detective_log(match.state)
    names = TICKET_NAME_LIST
    out: list[dict[str, Any]] = []
    used = 0  # log entries of Mister X's moves listed so far
    for turn in list(match.turns):
        if turn.move is None:  # a turn that ended in a fault without a move
            continue
        if turn.seat == MRX:
            legs = 2 if Move.parse(turn.move).ticket2 is not None else 1
            entries, used = shown[used:used + legs], used + legs
            text = "+".join(names[e.ticket] if e.station is None
                            else f"{names[e.ticket]}:{e.station}" for e in entries)
        else:
            text = turn.move
        out.append({"turn": turn.index, "seat": seat_name(turn.seat), "move": text})
    return out


def live_boards(source: LiveSource | None) -> set[str]:
    """The names of the boards of the games being played on this server."""
    if source is None:
        return set()
    names = set()
    for match in list(source.matches.values()):
        rules = getattr(match.spec, "rules", None)
        if isinstance(rules, Ruleset):
            names.add(rules.board.name)
    return names


def running_tournaments(source: LiveSource | None) -> set[str]:
    """Ids of tournaments with a game running on this server."""
    if source is None:
        return set()
    ids: Iterable[Any] = (getattr(m.spec, "tournament_id", None)
                          for m in list(source.matches.values()))
    return {i for i in ids if i}
