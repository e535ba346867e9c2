"""The ``alphabeta`` bot: paranoid alpha-beta search with iterative deepening.

The detectives act as one coalition minimising Mister X's score (:mod:`bots.eval`). Depth
counts plies (one per seat's move). A detective searches a few determinizations sampled
uniformly from the public possible-location set and plays the move with the best mean
value; it never sees Mister X's true station.

Options (defaults in brackets): ``time`` [1.0] seconds per move; ``depth`` [0] fixed depth in
plies (0: deepen until the time is up; with a fixed depth the search ignores the clock and
is reproducible); ``samples`` [4] determinizations per detective decision; ``width`` [12]
most Mister X moves tried at inner nodes after ordering (0: all); ``filter`` [True] Mister X
move filtering (sensible secret and double moves only); ``profile`` [kernel] ``kernel``
searches on the compiled rules kernel with a transposition table
(:mod:`bots.alphabeta_kernel`, same tree, tens of times the nodes per second),
``reference`` walks the pure-Python engine (the reference the kernel is tested against).

>>> from game import new_game
>>> state = new_game("grid5", seed=3)
>>> bot = AlphaBetaBot(seed=1, depth=3, profile="reference")  # kernel: compiled on first use
>>> bot.choose(state.view(0), state.legal_moves()) in state.legal_moves()
True
"""

from __future__ import annotations

import math
import time as clock
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from bots.base import Bot
from bots.eval import Weights, evaluate, filter_mrx_moves, terminal_score
from bots.options import Range
from bots.registry import BotOptionError
from game import Move, MrXView, State, View, state_from_view
from game.rules import Ruleset

if TYPE_CHECKING:
    from bots.alphabeta_kernel import KernelSearch

MAX_DEPTH = 64
_CHECK_EVERY = 128
PROFILES = ("kernel", "reference")


class _Timeout(Exception):
    """The move's time is up; the deepest finished iteration is used."""


class AlphaBetaBot(Bot):
    """Paranoid alpha-beta for both roles (see the module docstring for options)."""

    name = "alphabeta"

    def __init__(self, seed: int | None = None, *, time: float = 1.0, depth: int = 0,
                 samples: Annotated[int, Range(ge=1)] = 4, width: int = 12,
                 filter: bool = True,
                 profile: Literal["kernel", "reference"] = "kernel") -> None:
        """Set the search's options.

        Args:
            seed: seeds ``self.rng`` (not an option: see :meth:`Bot.create`)
            time: seconds per move (anytime)
            depth: fixed plies, no clock (0: deepen until time is up)
            samples: determinizations per detective decision
            width: Mister X moves tried at inner nodes (0: all)
            filter: only sensible secret and double moves
            profile: kernel (compiled, transposition table) or reference (pure Python)
        """
        super().__init__(seed)
        if time <= 0 and depth <= 0:
            raise BotOptionError("bot 'alphabeta': give time > 0 or depth > 0")
        if samples < 1:
            raise BotOptionError("bot 'alphabeta': samples must be at least 1")
        if profile not in PROFILES:
            raise BotOptionError(f"bot 'alphabeta': profile={profile!r} is not one of "
                                 f"{', '.join(PROFILES)}")
        self.time, self.depth, self.samples = time, min(depth, MAX_DEPTH), samples
        self.width, self.filter, self.profile = width, filter, profile
        self.weights = Weights()
        self.nodes = 0
        self.reached_depth = 0
        self.value = 0.0  # mean value of the chosen move over the determinizations
        #: Transposition table size of the kernel search (2**tt_bits entries; 0: none).
        self.tt_bits = 18
        self._deadline = math.inf
        self._kernels: dict[tuple[Ruleset, int], KernelSearch] = {}

    def describe(self) -> str:
        """Name plus depth, samples, width and profile, for logs and tables."""
        return (f"alphabeta(depth={self.depth}, samples={self.samples}, width={self.width}, "
                f"profile={self.profile})")

    def new_game(self, rules: Ruleset, seats: Sequence[int]) -> None:
        """Load the compiled search and build its buffers before the clock runs (a kernel
        profile's first search otherwise pays numba's cache load)."""
        if self.profile == "kernel":
            from game import new_game as start

            state = start(rules, 1)
            self._kernel(rules, state.n_detectives).search(state.view(0), state.positions[:1], 1)

    # ------------------------------------------------------------------ root

    @property
    def timed(self) -> bool:
        """True unless a fixed depth is set: the search deepens until the clock runs out."""
        return self.depth <= 0

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Search each determinization and play the move with the best mean value."""
        if len(legal) == 1:
            return legal[0]  # forced: no search, so no effort to report
        self.nodes = 0
        self.reached_depth = 0
        self._deadline = math.inf if self.depth else clock.perf_counter() + self.time * 0.9
        best = (self._choose_kernel(view, legal) if self.profile == "kernel"
                else self._choose_reference(view, legal))
        self.report(nodes=self.nodes, depth=self.reached_depth)
        return best

    def _choose_reference(self, view: View, legal: Sequence[Move]) -> Move:
        """Iterative deepening over the determinizations, in Python."""
        roots = self._roots(view)
        maximise = view.to_move == 0
        order = self._ordered(roots[0], list(legal), root=True)
        best = order[0]
        for depth in range(1, (self.depth or MAX_DEPTH) + 1):
            try:
                totals = {m: 0.0 for m in order}
                for root in roots:
                    for move, value in self._root_values(root, order, depth).items():
                        totals[move] += value
            except _Timeout:
                break
            order = sorted(order, key=totals.__getitem__, reverse=maximise)
            best = order[0]
            self.value = totals[best] / len(roots)
            self.reached_depth = depth
            if abs(totals[best]) / len(roots) > 50_000:
                break  # a forced result: deeper search cannot change it
        return best

    def _choose_kernel(self, view: View, legal: Sequence[Move]) -> Move:
        """:meth:`_choose_reference` in one compiled call (root ordering included)."""
        kernel = self._kernel(view.rules, len(view.detectives))
        found = kernel.search(view, self._stations(view), self.depth or MAX_DEPTH,
                              self._deadline)
        self.nodes = kernel.nodes
        if found.depth:
            self.value, self.reached_depth = found.value, found.depth
        return legal[legal.index(found.move)]

    def _stations(self, view: View) -> list[int]:
        """Mister X's station in each root: his own, or a detective's determinizations (a
        uniform sample of the possible-location set)."""
        if isinstance(view, MrXView):
            return [view.mrx]
        stations = sorted(view.possible)
        return self.rng.sample(stations, min(self.samples, len(stations)))

    def _roots(self, view: View) -> list[State]:
        return [state_from_view(view, station) for station in self._stations(view)]

    def _root_values(self, root: State, order: list[Move], depth: int) -> dict[Move, float]:
        """Exact values of every root move (detective roots), or alpha-beta values with the
        best one exact (Mister X)."""
        values: dict[Move, float] = {}
        alpha = -math.inf
        for move in order:
            child = root.apply_unchecked(move)
            if root.to_move == 0:
                values[move] = self._search(child, depth - 1, alpha, math.inf, 1)
                alpha = max(alpha, values[move])
            else:
                values[move] = self._search(child, depth - 1, -math.inf, math.inf, 1)
        return values

    def _kernel(self, rules: Ruleset, detectives: int) -> KernelSearch:
        """The compiled search for this ruleset and number of detectives (built once)."""
        from bots.alphabeta_kernel import KernelSearch

        key = (rules, detectives)
        found = self._kernels.get(key)
        if found is None:
            found = self._kernels[key] = KernelSearch(rules, detectives, self.weights,
                                                      self.filter, self.width, self.tt_bits)
        return found

    # ------------------------------------------------------------------ search

    def _search(self, state: State, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.nodes += 1
        if self.nodes % _CHECK_EVERY == 0 and clock.perf_counter() > self._deadline:
            raise _Timeout
        if state.outcome is not None:
            return terminal_score(state, ply)
        if depth <= 0:
            return evaluate(state, self.weights)
        moves = self._ordered(state, list(state.legal_moves()), root=False)
        if state.to_move == 0:
            for move in moves:
                alpha = max(alpha, self._search(state.apply_unchecked(move), depth - 1,
                                                alpha, beta, ply + 1))
                if alpha >= beta:
                    break
            return alpha
        for move in moves:
            beta = min(beta, self._search(state.apply_unchecked(move), depth - 1,
                                          alpha, beta, ply + 1))
            if alpha >= beta:
                break
        return beta

    def _ordered(self, state: State, moves: list[Move], root: bool) -> list[Move]:
        """Mister X: farthest from the nearest detective first (filtered, at most ``width``
        at inner nodes); a detective: closest to Mister X first."""
        dist = state.board.distances()
        if state.to_move != 0:
            row = dist[state.positions[0]]
            return sorted(moves, key=lambda m: (int(row[m.to]), m.ticket))
        if self.filter:
            moves = filter_mrx_moves(state, moves)
        dets = state.detective_stations
        moves.sort(key=lambda m: (-min(int(dist[m.destination, d]) for d in dets),
                                  m.is_double, m.ticket))
        if not root and self.width > 0:
            return moves[:self.width]
        return moves
