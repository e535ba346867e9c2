"""View encoders for the DQN bots (numpy only, no torch).

Two encoders, chosen by the board:

* :class:`GridEncoder` (grid boards): four planes of ``height × width`` cells plus a few
  scalars, and 4 actions (up, down, left, right) masked to the legal ones.
* :class:`GraphEncoder` (station graphs such as London): a state vector, and one feature row
  per legal move; the network scores each candidate and the bot plays the best.

Both encode only what the acting seat's view shows, so a detective's input never depends on
Mister X's hidden station.

>>> from game import new_game
>>> state = new_game("grid5", seed=3)
>>> enc = GridEncoder(state.rules)
>>> enc.encode(state.view(0)).shape
(329,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from game import MRX, Move, MrXView, Ruleset, Ticket, View

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass
class Obs:
    """What a model sees at one decision: the state vector, and either the legal-action mask
    (grid) or the candidate moves (graph: destinations and dense features)."""

    state: FloatArray
    mask: BoolArray | None = None
    dests: IntArray | None = None
    cands: FloatArray | None = None


class Role(Enum):
    """The side a model plays."""

    MRX = "mrx"
    DETECTIVE = "detective"

    @classmethod
    def of_seat(cls, seat: int) -> Role:
        """The role of a seat (0 is Mister X)."""
        return cls.MRX if seat == MRX else cls.DETECTIVE


class Direction(IntEnum):
    """Grid actions, in the order of the network's outputs."""

    UP = 0
    DOWN = 1
    LEFT = 2
    RIGHT = 3


def acting_station(view: View) -> int:
    """Station of the seat to move (Mister X's only from his own view)."""
    if view.to_move == MRX:
        if not isinstance(view, MrXView):
            raise ValueError("Mister X's station is only known from his own view")
        return view.mrx
    return view.detectives[view.to_move - 1]


def _rounds_scale(rules: Ruleset) -> float:
    reveals = sorted(rules.reveal_moves)
    gaps = [b - a for a, b in zip([0, *reveals], reveals, strict=False)]
    return float(max([*gaps, 1]))


class GridEncoder:
    """Planes for an N×M grid, centred on the acting piece (an egocentric frame).

    The frame is ``(2·height − 1) × (2·width − 1)`` cells, so every board cell fits whatever
    the acting piece's position; the acting piece (Mister X or the acting detective) is
    the centre cell, which marks it apart from the other detectives. Planes:

    * 0: Mister X — one-hot at his cell when the acting seat knows it (always for Mister
      X; for a detective only when the possible set is one cell, i.e. at a reveal),
      otherwise a probability over the possible-location set: uniform (version 1) or, from
      version 2, the random-walk posterior (see :meth:`walk_posterior`);
    * 1: the public possible-location set as a uniform probability;
    * 2: the detectives other than the acting one;
    * 3: the board (1 on cells that exist, 0 beyond the edges).

    Scalars: rounds to the next reveal, share of moves played, "acting seat is Mister X",
    size of the possible set relative to the board, and from version 2 the share of the
    detectives still to move after the acting one before Mister X moves again (the turn
    order inside a round). An egocentric frame makes "move towards the probability mass"
    the same function everywhere, which a small MLP learns far faster than from absolute
    planes. Weights files record the version (``features``); files without it are
    version 1.
    """

    n_planes = 4
    n_actions = len(Direction)
    versions = (1, 2)

    def __init__(self, rules: Ruleset, version: int = 2) -> None:
        """Encode states of ``rules`` (a grid board) with encoder ``version``."""
        board = rules.board
        if not board.is_grid:
            raise ValueError(f"board {board.name} is not a grid")
        if version not in self.versions:
            raise ValueError(f"grid encoder version {version} is not one of {self.versions}")
        self.rules = rules
        self.version = version
        self.n_scalars = 4 if version == 1 else 5
        self.width = board.width
        self.height = board.height
        self.cells = board.n_stations
        self.frame = (2 * self.height - 1, 2 * self.width - 1)
        self.frame_cells = self.frame[0] * self.frame[1]
        self.state_dim = self.n_planes * self.frame_cells + self.n_scalars
        self._rounds_scale = _rounds_scale(rules)
        rows = np.arange(self.cells) // self.width
        cols = np.arange(self.cells) % self.width
        #: _ego[s][c - 1]: index in the frame of cell c seen from station s (row 0 unused).
        self._ego = np.zeros((self.cells + 1, self.cells + 1), dtype=np.int64)
        for s in range(1, self.cells + 1):
            r0, c0 = (s - 1) // self.width, (s - 1) % self.width
            self._ego[s, 1:] = (rows - r0 + self.height - 1) * self.frame[1] \
                + cols - c0 + self.width - 1
        #: One step of a mover that picks a neighbour uniformly (rows: from, cols: to).
        self._walk = np.zeros((self.cells + 1, self.cells + 1), dtype=np.float64)
        for s in board.stations:
            near = sorted({d for t in board.adjacency for d in t[s]})
            if near:
                self._walk[s, near] = 1.0 / len(near)
        self._starts = np.zeros(self.cells + 1, dtype=np.float64)
        self._starts[list(board.stations if rules.random_starts else board.mrx_starts)] = 1.0

    @property
    def features(self) -> str:
        """The version tag stored in weights files."""
        return f"grid-v{self.version}"

    def walk_posterior(self, view: View) -> npt.NDArray[np.float64]:
        """Where Mister X is if he moved uniformly at random: the probability of each station
        (index 0 unused), from the latest reveal (or the start cells) walked forward one
        step per hidden log entry, restricted to the possible set and normalised.

        Public information only. Against a random Mister X this is close to the exact
        posterior (it ignores only that detectives block cells on the way); against other
        players it still ranks the centre of the possible set above its rim.
        """
        reveal = view.last_reveal()
        if reveal is None:
            p, steps = self._starts.copy(), len(view.log)
        else:
            slot, station = reveal
            p = np.zeros(self.cells + 1, dtype=np.float64)
            p[station] = 1.0
            steps = len(view.log) - slot
        for _ in range(steps):
            p = p @ self._walk
        mask = np.zeros(self.cells + 1, dtype=np.float64)
        mask[list(view.possible)] = 1.0
        p *= mask
        total = float(p.sum())
        out: npt.NDArray[np.float64] = p / total if total > 0 else mask / max(mask.sum(), 1.0)
        return out

    def encode(self, view: View) -> FloatArray:
        """The input vector for the seat to move in ``view``."""
        e = self.frame_cells
        x = np.zeros(self.state_dim, dtype=np.float32)
        ego = self._ego[acting_station(view)]
        possible = ego[np.fromiter(view.possible, dtype=np.int64, count=len(view.possible))]
        share = 1.0 / max(len(possible), 1)
        x[e + possible] = share
        seat = view.to_move
        if isinstance(view, MrXView) and seat == MRX:
            x[ego[view.mrx]] = 1.0
        elif self.version == 1:
            x[possible] = share
        else:
            x[ego[1:]] = self.walk_posterior(view)[1:]
        for i, station in enumerate(view.detectives, start=1):
            if i != seat:
                x[2 * e + ego[station]] = 1.0
        x[3 * e + ego[1:]] = 1.0
        base = self.n_planes * e
        x[base] = view.rounds_to_reveal() / self._rounds_scale
        x[base + 1] = len(view.log) / self.rules.max_moves
        x[base + 2] = 1.0 if seat == MRX else 0.0
        x[base + 3] = len(possible) / self.cells
        if self.version >= 2 and seat != MRX:
            x[base + 4] = (len(view.detectives) - seat) / max(len(view.detectives), 1)
        return x

    def direction(self, origin: int, move: Move) -> Direction:
        """The direction of a one-step grid move from ``origin``."""
        delta = move.destination - origin
        if delta == -self.width:
            return Direction.UP
        if delta == self.width:
            return Direction.DOWN
        if delta == -1 and (origin - 1) % self.width:
            return Direction.LEFT
        if delta == 1 and origin % self.width:
            return Direction.RIGHT
        raise ValueError(f"move {move} from cell {origin} is not one grid step")

    def moves_by_action(self, origin: int, legal: Sequence[Move]) -> list[Move | None]:
        """The legal move for each action (``None`` where that direction is not legal)."""
        out: list[Move | None] = [None] * self.n_actions
        for move in legal:
            action = self.direction(origin, move)
            if out[action] is None:
                out[action] = move
        return out

    def mask(self, origin: int, legal: Sequence[Move]) -> BoolArray:
        """Boolean mask of the legal actions."""
        return np.array([m is not None for m in self.moves_by_action(origin, legal)])


#: Candidate-move features of :class:`GraphEncoder` (column order of ``dense``).
CANDIDATE_FEATURES = (
    "taxi", "bus", "underground", "secret", "double",
    "taxi2", "bus2", "underground2", "secret2",
    "reveal_after", "dest_possible", "min_dist_detective", "detectives_within_1",
    "detectives_within_2", "min_dist_possible", "mean_dist_possible", "possible_within_1",
    "degree", "ticket_left",
)
_DIST_CAP = 10.0


class GraphEncoder:
    """State vector plus per-candidate rows for a station graph.

    State: Mister X's station when the acting seat knows it (one-hot), the possible set
    (probability), the detectives' stations, the acting detective (one-hot), tickets left,
    rounds to the next reveal, share of moves played, the tickets of Mister X's last three
    log entries, and the size of the possible set.

    Candidate: the destination (an index the network embeds, i.e. a one-hot) and the dense
    :data:`CANDIDATE_FEATURES`: ticket(s), double, reveal after the move, and shortest-path
    distances from the destination to the detectives and to the possible locations.
    """

    recent = 3

    def __init__(self, rules: Ruleset) -> None:
        """Precompute the distances and degrees of the board of ``rules``."""
        board = rules.board
        self.rules = rules
        self.n = board.n_stations
        self.k = rules.detectives
        self.dist = np.minimum(np.asarray(board.distances(), dtype=np.float32), 99.0)
        self.degree = np.array([len({d for t in board.adjacency for d in t[s]})
                                for s in range(self.n + 1)], dtype=np.float32)
        self.degree /= max(float(self.degree.max()), 1.0)
        self.mrx_start = np.array(rules.initial_mrx_tickets(), dtype=np.float32)
        self.det_start = np.array(rules.initial_detective_tickets(), dtype=np.float32)
        self.n_scalars = 5 + 3 + 3 + 2 + 1 + self.recent * len(Ticket)
        self.state_dim = 4 * self.n + self.n_scalars
        self.cand_dim = len(CANDIDATE_FEATURES)
        self._rounds_scale = _rounds_scale(rules)

    def encode(self, view: View) -> FloatArray:
        """The state vector for the seat to move in ``view``."""
        n = self.n
        x = np.zeros(self.state_dim, dtype=np.float32)
        possible = np.fromiter(view.possible, dtype=np.int64, count=len(view.possible)) - 1
        share = 1.0 / max(len(possible), 1)
        x[n + possible] = share
        seat = view.to_move
        if isinstance(view, MrXView) and seat == MRX:
            x[view.mrx - 1] = 1.0
        elif len(possible) == 1:
            x[possible] = 1.0
        for i, station in enumerate(view.detectives, start=1):
            x[2 * n + station - 1] = 1.0
            if i == seat:
                x[3 * n + station - 1] = 1.0
        self._scalars(view, x[4 * n:], len(possible))
        return x

    def _scalars(self, view: View, out: FloatArray, n_possible: int) -> None:
        out[:5] = np.asarray(view.tickets[0], dtype=np.float32) / np.maximum(self.mrx_start, 1)
        dets = np.asarray(view.tickets[1:], dtype=np.float32)[:, :3]
        out[5:8] = dets.mean(axis=0) / np.maximum(self.det_start[:3], 1)
        if view.to_move != MRX:
            out[8:11] = dets[view.to_move - 1] / np.maximum(self.det_start[:3], 1)
        out[11] = view.rounds_to_reveal() / self._rounds_scale
        out[12] = len(view.log) / self.rules.max_moves
        out[13] = np.log1p(n_possible) / np.log1p(self.n)
        for i, entry in enumerate(view.log[-self.recent:]):
            out[14 + i * len(Ticket) + int(entry.ticket)] = 1.0

    def candidates(self, view: View, legal: Sequence[Move]) -> tuple[IntArray, FloatArray]:
        """``(destinations, dense features)`` of each legal move, in ``legal``'s order."""
        seat = view.to_move
        k = len(legal)
        dests = np.fromiter((m.destination for m in legal), dtype=np.int64, count=k)
        c = np.zeros((k, self.cand_dim), dtype=np.float32)
        self._ticket_columns(view, legal, c)
        others = [s for i, s in enumerate(view.detectives, start=1) if i != seat]
        if others:
            d_det = self.dist[np.ix_(dests, np.asarray(others))]
            c[:, 11] = d_det.min(axis=1) / _DIST_CAP
            c[:, 12] = (d_det <= 1).sum(axis=1) / len(others)
            c[:, 13] = (d_det <= 2).sum(axis=1) / len(others)
        possible = np.fromiter(view.possible, dtype=np.int64, count=len(view.possible))
        if len(possible):
            d_pos = self.dist[np.ix_(dests, possible)]
            c[:, 10] = (d_pos == 0).any(axis=1)
            c[:, 14] = d_pos.min(axis=1) / _DIST_CAP
            c[:, 15] = d_pos.mean(axis=1) / _DIST_CAP
            c[:, 16] = (d_pos <= 1).mean(axis=1)
        c[:, 17] = self.degree[dests]
        return dests, c

    def _ticket_columns(self, view: View, legal: Sequence[Move], c: FloatArray) -> None:
        seat = view.to_move
        own = view.tickets[seat]
        start = self.mrx_start if seat == MRX else self.det_start
        reveals = self.rules.reveal_moves
        slot = len(view.log) + 1
        for row, move in enumerate(legal):
            c[row, int(move.ticket)] = 1.0
            c[row, 18] = (own[move.ticket] - 1) / max(float(start[move.ticket]), 1.0)
            if move.ticket2 is not None:
                c[row, 4] = 1.0
                c[row, 5 + int(move.ticket2)] = 1.0
            if seat == MRX and (slot in reveals or (move.ticket2 is not None
                                                      and slot + 1 in reveals)):
                c[row, 9] = 1.0


Encoder = GridEncoder | GraphEncoder


def observe(encoder: Encoder, view: View, legal: Sequence[Move]) -> Obs:
    """Encode the decision of the seat to move in ``view``."""
    if isinstance(encoder, GridEncoder):
        origin = acting_station(view)
        return Obs(encoder.encode(view), mask=encoder.mask(origin, legal))
    dests, cands = encoder.candidates(view, legal)
    return Obs(encoder.encode(view), dests=dests, cands=cands)


def move_of(encoder: Encoder, view: View, legal: Sequence[Move], action: int) -> Move:
    """The legal move an action index stands for (a direction or a candidate row)."""
    if isinstance(encoder, GridEncoder):
        move = encoder.moves_by_action(acting_station(view), legal)[action]
        if move is None:
            raise ValueError(f"action {Direction(action).name} is not legal")
        return move
    return legal[action]


def recorded_features(meta: dict[str, Any]) -> str | None:
    """The grid encoder version a weights file or checkpoint meta was made with (``None``
    for graph models); metas written before grid encoders had versions are ``grid-v1``."""
    if meta.get("kind") != "grid":
        return None
    return str(meta.get("features", "grid-v1"))


def make_encoder(rules: Ruleset, kind: str | None = None,
                 features: str | None = None) -> Encoder:
    """The encoder for ``rules``: grid planes on grid boards, move scoring elsewhere.

    ``kind`` ("grid" or "graph") forces one; a grid board can also be played as a graph.
    ``features`` picks a grid encoder version ("grid-v1", "grid-v2"; default: the newest).
    """
    if kind is None:
        kind = "grid" if rules.board.is_grid else "graph"
    if kind == "grid":
        if features is None:
            return GridEncoder(rules)
        tags = {f"grid-v{v}": v for v in GridEncoder.versions}
        if features not in tags:
            raise ValueError(f"unknown grid features {features!r} (known: {', '.join(tags)})")
        return GridEncoder(rules, tags[features])
    if kind == "graph":
        return GraphEncoder(rules)
    raise ValueError(f"unknown encoder kind {kind!r}")


def board_signature(rules: Ruleset) -> dict[str, Any]:
    """What a weights file records about the board, to reject incompatible weights."""
    board = rules.board
    return {"board": board.name, "stations": board.n_stations, "width": board.width,
            "height": board.height, "detectives": rules.detectives}
