"""Board drawings for the SVG board: stations with positions and edges by transport."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from game import YardError, load_board
from game.board import TRANSPORT_NAMES, Board, Transport
from server.web.errors import NotFound


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
