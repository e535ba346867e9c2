"""Board drawings for the SVG board: stations with positions and edges by transport.

``/api/boards/NAME`` draws only the boards that a ruleset on this server can use
(:class:`BoardCache`): the boards of the built-in rulesets, of the games being played and of
the rulesets of stored games. Any other name is a 404 answered without building anything, so
a client asking for grid after grid cannot make the server build boards; a drawing is built
once (by the caller, off the event loop) and kept encoded.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from functools import cache, lru_cache
from typing import Any

from game import YardError, load_board
from game.board import TRANSPORT_NAMES, Board, Transport
from game.rules import builtin_rulesets
from host.web.errors import NotFound

BOARD_NAME = re.compile(r"^(london|grid[1-9][0-9]{0,3}x[1-9][0-9]{0,3})$")
"""The board names ``/api/boards/NAME`` may ask for (packaged map, grids)."""


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
    a file path. Builds the board: the web API asks :class:`BoardCache` instead."""
    if not BOARD_NAME.match(name):
        raise NotFound(f"no board {name!r:.40}")
    try:
        return board_drawing(load_board(name))
    except YardError as exc:
        raise NotFound(str(exc)) from None


@cache
def builtin_boards() -> frozenset[str]:
    """The names of the built-in rulesets' boards."""
    return frozenset(rules.board.name for rules in builtin_rulesets())


class BoardCache:
    """Encoded drawings (JSON bytes) of boards by name, built on first use.

    :meth:`get` is cheap (for the event loop); :meth:`build` does the work (for a worker
    thread). ``max_entries`` bounds what is kept (least recently used goes first).
    """

    def __init__(self, max_entries: int = 32) -> None:
        """An empty cache of at most ``max_entries`` drawings."""
        self.max_entries = max_entries
        self._bodies: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.built = 0  # drawings built, for tests

    def get(self, name: str) -> bytes | None:
        """The encoded drawing of board ``name`` if it was built already."""
        with self._lock:
            body = self._bodies.get(name)
            if body is not None:
                self._bodies.move_to_end(name)
            return body

    def build(self, name: str) -> bytes:
        """Build (or find) the encoded drawing of board ``name``, which the caller has
        checked may be drawn; :class:`NotFound` if it does not load."""
        body = self.get(name)
        if body is not None:
            return body
        body = json.dumps(board_by_name(name), separators=(",", ":")).encode()
        with self._lock:
            self.built += 1
            self._bodies[name] = body
            while len(self._bodies) > self.max_entries:
                self._bodies.popitem(last=False)
        return body
