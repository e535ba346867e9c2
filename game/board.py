"""Boards: the London map and N×M grids, as adjacency tables with precomputed distances.

Stations are numbered ``1..n``. Each edge has a :class:`Transport`. A board is immutable
and shared by every state that uses it.

>>> board = load_board("london")
>>> board.n_stations, board.distance(1, 8)
(199, 1)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from game.errors import BoardError


class Transport(IntEnum):
    """A kind of connection between two stations."""

    TAXI = 0
    BUS = 1
    UNDERGROUND = 2
    FERRY = 3


TRANSPORT_NAMES = {t: t.name.lower() for t in Transport}


@dataclass(frozen=True, eq=False)
class Board:
    """An undirected multigraph of stations ``1..n_stations`` with typed edges.

    ``adjacency[t][s]`` is the sorted tuple of stations reachable from ``s`` by transport
    ``t``. Index 0 of every table is unused so station numbers index directly.
    """

    name: str
    n_stations: int
    adjacency: tuple[tuple[tuple[int, ...], ...], ...]
    detective_starts: tuple[int, ...]
    mrx_starts: tuple[int, ...]
    width: int = 0
    height: int = 0
    positions: dict[int, tuple[int, int]] = field(default_factory=dict)
    _dist: list[Any] = field(default_factory=list, repr=False)
    _digest: list[str] = field(default_factory=list, repr=False)
    _rows: dict[int, tuple[int, ...]] = field(default_factory=dict, repr=False)

    @property
    def stations(self) -> range:
        """All station numbers."""
        return range(1, self.n_stations + 1)

    @property
    def is_grid(self) -> bool:
        """True for boards made by :func:`grid_board`."""
        return self.width > 0

    def neighbours(self, station: int, transport: Transport) -> tuple[int, ...]:
        """Stations one ``transport`` edge away from ``station``."""
        return self.adjacency[transport][station]

    def edge_count(self, transport: Transport) -> int:
        """Number of undirected edges of one transport."""
        return sum(len(n) for n in self.adjacency[transport]) // 2

    def without_transport(self, transport: Transport) -> Board:
        """A copy of this board with every edge of ``transport`` removed."""
        tables = list(self.adjacency)
        tables[transport] = tuple(() for _ in range(self.n_stations + 1))
        return Board(self.name, self.n_stations, tuple(tables), self.detective_starts,
                     self.mrx_starts, self.width, self.height, self.positions)

    def distances(self) -> Any:
        """All-pairs shortest path lengths (numpy int16 array, index 0 unused).

        Distances count moves over taxi, bus and underground edges (the ferry is excluded:
        only Mister X may use it, and only with a secret ticket). Computed once per board.
        Unreachable pairs get ``n_stations + 1``.
        """
        if not self._dist:
            self._dist.append(_all_pairs(self))
        return self._dist[0]

    def distance(self, a: int, b: int) -> int:
        """Shortest path length from ``a`` to ``b`` on land transport (as :meth:`distances`;
        without numpy, as in the slim client ``yard-client``, from a breadth-first search
        of ``a``'s row, kept)."""
        if self._dist or _has_numpy():
            return int(self.distances()[a, b])
        row = self._rows.get(a)
        if row is None:
            row = self._rows[a] = tuple(_breadth_first(_land(self), a))
        return row[b]


@cache
def _has_numpy() -> bool:
    return importlib.util.find_spec("numpy") is not None


def _all_pairs(board: Board) -> Any:
    import numpy as np

    land = _land(board)
    dist = np.full((board.n_stations + 1, board.n_stations + 1), board.n_stations + 1,
                   dtype=np.int16)
    for source in board.stations:
        dist[source] = _breadth_first(land, source)
    dist.setflags(write=False)
    return dist


def _land(board: Board) -> list[list[int]]:
    """Each station's neighbours by taxi, bus or underground (index 0 unused)."""
    return [sorted({d for t in (0, 1, 2) for d in board.adjacency[t][s]})
            for s in range(board.n_stations + 1)]


def _breadth_first(land: list[list[int]], source: int) -> list[int]:
    """Moves from ``source`` to every station over ``land`` (``len(land)`` if none)."""
    row = [len(land)] * len(land)
    row[source] = 0
    queue = deque([source])
    while queue:
        here = queue.popleft()
        step = row[here] + 1
        for there in land[here]:
            if row[there] > step:
                row[there] = step
                queue.append(there)
    return row


def _build_adjacency(n: int, edges: dict[Transport, list[tuple[int, int]]]) -> tuple[
        tuple[tuple[int, ...], ...], ...]:
    tables: list[tuple[tuple[int, ...], ...]] = []
    for transport in Transport:
        sets: list[set[int]] = [set() for _ in range(n + 1)]
        for a, b in edges.get(transport, []):
            sets[a].add(b)
            sets[b].add(a)
        tables.append(tuple(tuple(sorted(s)) for s in sets))
    return tuple(tables)


def board_from_dict(data: dict[str, Any], source: str = "<dict>") -> Board:
    """Build a board from the JSON map format (see ``game/data/london.json``).

    Raises :class:`BoardError` naming ``source`` and the offending entry.
    """
    try:
        name = str(data["name"])
        n = int(data["stations"])
        raw_edges = data["edges"]
    except (KeyError, TypeError, ValueError) as exc:
        raise BoardError(f"{source}: missing or invalid field {exc}") from None
    if n < 2:
        raise BoardError(f"{source}: 'stations' must be at least 2, got {n}")
    if not isinstance(raw_edges, dict):
        raise BoardError(f"{source}: 'edges' must be an object keyed by transport")
    edges: dict[Transport, list[tuple[int, int]]] = {}
    for key, pairs in raw_edges.items():
        try:
            transport = Transport[key.upper()]
        except KeyError:
            raise BoardError(f"{source}: unknown transport {key!r}") from None
        if not isinstance(pairs, list):
            raise BoardError(f"{source}: edges.{key} must be a list of station pairs")
        edges[transport] = [_checked_edge(p, n, source, key) for p in pairs]
    det = _checked_stations(data.get("detective_starts", []), n, source, "detective_starts")
    mrx = _checked_stations(data.get("mrx_starts", []), n, source, "mrx_starts")
    positions = _checked_positions(data.get("positions", {}), source)
    board = Board(name, n, _build_adjacency(n, edges), det, mrx, positions=positions)
    isolated = [s for s in board.stations if not any(board.adjacency[t][s] for t in Transport)]
    if isolated:
        raise BoardError(f"{source}: stations without any edge: {isolated[:10]}")
    return board


def board_to_dict(board: Board) -> dict[str, Any]:
    """The board in the JSON map format, loadable again by :func:`board_from_dict`.

    Edges are listed once per transport as sorted ``[low, high]`` pairs; drawing
    ``positions`` are kept when the board has them.
    """
    data: dict[str, Any] = {
        "name": board.name, "stations": board.n_stations,
        "edges": {TRANSPORT_NAMES[t]: _edge_pairs(board, t) for t in Transport
                  if board.edge_count(t)},
        "detective_starts": list(board.detective_starts),
        "mrx_starts": list(board.mrx_starts),
    }
    if board.positions:
        data["positions"] = {str(s): list(xy) for s, xy in sorted(board.positions.items())}
    return data


def _edge_pairs(board: Board, transport: Transport) -> list[list[int]]:
    return [[a, b] for a in board.stations for b in board.adjacency[transport][a] if a < b]


def board_digest(board: Board) -> str:
    """A SHA-256 hex digest of what the rules use: station count, edges by transport and
    start stations (not the name or drawing positions). Two boards with the same digest play
    the same games."""
    if board._digest:
        return board._digest[0]
    content = {"stations": board.n_stations,
               "edges": {TRANSPORT_NAMES[t]: _edge_pairs(board, t) for t in Transport},
               "detective_starts": list(board.detective_starts),
               "mrx_starts": list(board.mrx_starts)}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    board._digest.append(hashlib.sha256(text.encode()).hexdigest())
    return board._digest[0]


def _checked_edge(pair: Any, n: int, source: str, key: str) -> tuple[int, int]:
    if not (isinstance(pair, list | tuple) and len(pair) == 2
            and all(isinstance(x, int) for x in pair)):
        raise BoardError(f"{source}: {key} edge {pair!r} is not a pair of station numbers")
    a, b = pair
    if not (1 <= a <= n and 1 <= b <= n) or a == b:
        raise BoardError(f"{source}: {key} edge {pair!r} names a station outside 1..{n} "
                         "or is a loop")
    return a, b


def _checked_positions(raw: Any, source: str) -> dict[int, tuple[int, int]]:
    try:
        return {int(k): (int(v[0]), int(v[1])) for k, v in raw.items()}
    except (AttributeError, TypeError, ValueError, IndexError, KeyError):
        raise BoardError(f"{source}: 'positions' must map station numbers to [x, y]") from None


def _checked_stations(values: Any, n: int, source: str, key: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and 1 <= v <= n
                                               for v in values):
        raise BoardError(f"{source}: {key} must be a list of stations in 1..{n}")
    if len(set(values)) != len(values):
        raise BoardError(f"{source}: {key} has duplicate stations")
    return tuple(values)


def load_board_file(path: str | Path) -> Board:
    """Load a board from a JSON map file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BoardError(f"{path}: cannot read map file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BoardError(f"{path}: not a UTF-8 text file") from None
    except json.JSONDecodeError as exc:
        raise BoardError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise BoardError(f"{path}: a map file must hold a JSON object")
    return board_from_dict(data, str(path))


def grid_board(width: int, height: int) -> Board:
    """An ``width``×``height`` grid, 4-neighbour moves, taxi edges only.

    Station ``s`` sits at row ``(s - 1) // width``, column ``(s - 1) % width``.
    """
    if width < 2 or height < 2 or width * height > 10_000:
        raise BoardError(f"grid {width}x{height}: each side must be at least 2 "
                         "and the grid at most 10000 cells")
    edges: list[tuple[int, int]] = []
    for r in range(height):
        for c in range(width):
            s = r * width + c + 1
            if c + 1 < width:
                edges.append((s, s + 1))
            if r + 1 < height:
                edges.append((s, s + width))
    cells = tuple(range(1, width * height + 1))
    positions = {s: ((s - 1) % width, (s - 1) // width) for s in cells}
    return Board(f"grid{width}x{height}", width * height,
                 _build_adjacency(width * height, {Transport.TAXI: edges}), cells, cells,
                 width=width, height=height, positions=positions)


_GRID = re.compile(r"^grid:?(\d+)x(\d+)$")


@cache
def load_board(spec: str) -> Board:
    """A board by name: ``london`` (packaged map), ``gridWxH`` / ``grid:WxH``, or a JSON path."""
    match = _GRID.match(spec)
    if match:
        return grid_board(int(match.group(1)), int(match.group(2)))
    if spec.endswith(".json"):
        return load_board_file(spec)
    try:
        text = resources.files("game").joinpath("data", f"{spec}.json").read_text()
    except FileNotFoundError:
        raise BoardError(f"unknown board {spec!r}: use 'london', 'gridWxH' or a .json path") \
            from None
    return board_from_dict(json.loads(text), f"game/data/{spec}.json")
