"""The ``mcts`` bot: UCT over a single tree shared by all determinizations.

Options (``yard bot mcts --option key=value``; defaults in brackets):

* ``time`` [1.0] seconds per move (used when ``iterations`` is 0);
* ``iterations`` [0] fixed number of iterations per move (reproducible experiments);
* ``c`` [0.7] UCT exploration constant;
* ``r`` [0.0] Coalition Reduction: a playout won by another detective than the one at the
  root scores ``1 - r``;
* ``epsilon`` [1.0] ε-greedy playouts: Mister X runs from the nearest detective and the
  detectives chase the determinized Mister X with probability ``1 - ε`` (1.0 = random);
* ``filter`` [False] Mister X move filtering (sensible secret and double moves only);
* ``lc`` [False] Location Categorization: sample determinizations with learned weights;
* ``lc_file`` [""] weights file (default: the packaged ``bots/mcts/data/lc_weights.json``);
* ``profile`` ["baseline"] ``tuned`` switches on every enhancement with tuned values for
  options left at their baseline default;
* ``workers`` [1] root parallelisation for detectives: processes sharing the budget;
* ``max_nodes`` [200000] tree capacity (the search keeps running playouts when full).
"""

from __future__ import annotations

import json
import time as clock
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from enum import Enum
from functools import cache
from multiprocessing import get_context
from typing import Annotated, Any, Literal

import numpy as np

from bots.base import Bot
from bots.mcts.compact import compact_view, move_key
from bots.mcts.kernel import Tables, tables_for
from bots.mcts.lc import load_weights
from bots.mcts.tree import new_tree, root_children, run_iterations
from bots.options import Range
from bots.registry import BotOptionError
from game import Move, MrXView, Ruleset, View
from game.rules import ruleset_from_dict

CHUNK = 64  # iterations per compiled call: the deadline is checked between calls


class Profile(Enum):
    """Option presets."""

    BASELINE = "baseline"
    TUNED = "tuned"


#: Values ``profile=tuned`` gives to options left at their baseline default.
TUNED: dict[str, Any] = {"r": 0.1, "epsilon": 0.2, "filter": True, "lc": True}
_BASELINE: dict[str, Any] = {"r": 0.0, "epsilon": 1.0, "filter": False, "lc": False}


@dataclass(frozen=True)
class Search:
    """Everything one root search needs, in kernel form (picklable for workers)."""

    root: Any
    possible: Any
    weights: Any
    ints: Any
    floats: Any
    capacity: int


class MctsBot(Bot):
    """Monte Carlo Tree Search for both roles (see the module docstring for options)."""

    name = "mcts"

    def __init__(self, seed: int | None = None, *, time: float = 1.0, iterations: int = 0,
                 c: float = 0.7, r: Annotated[float, Range(ge=0, le=1)] = 0.0,
                 epsilon: Annotated[float, Range(ge=0, le=1)] = 1.0, filter: bool = False,
                 lc: bool = False, lc_file: str = "",
                 profile: Literal["baseline", "tuned"] = "baseline",
                 workers: int = 1, max_nodes: int = 200_000) -> None:
        """Set the search's options (``profile`` may change the defaults).

        Args:
            seed: seeds ``self.rng`` (not an option: see :meth:`Bot.create`)
            time: seconds per move (when iterations is 0)
            iterations: fixed iterations per move (0: use time)
            c: UCT exploration constant
            r: a catch by another detective scores 1-r
            epsilon: playouts epsilon-greedy (1.0: random)
            filter: only sensible secret and double moves
            lc: Location Categorization (learned weights)
            lc_file: LC weights file ('': the packaged one)
            profile: tuned sets r=0.1, epsilon=0.2, filter, lc unless given
            workers: processes for detectives' root parallelism
            max_nodes: tree capacity
        """
        super().__init__(seed)
        try:
            chosen = Profile(profile)
        except ValueError:
            raise BotOptionError(f"bot 'mcts': profile={profile!r} is not one of "
                                 f"{', '.join(p.value for p in Profile)}") from None
        given = {"r": r, "epsilon": epsilon, "filter": filter, "lc": lc}
        if chosen is Profile.TUNED:
            given = {k: TUNED[k] if v == _BASELINE[k] else v for k, v in given.items()}
        if time <= 0 and iterations <= 0:
            raise BotOptionError("bot 'mcts': give time > 0 or iterations > 0")
        if not 0.0 <= given["epsilon"] <= 1.0 or not 0.0 <= given["r"] <= 1.0:
            raise BotOptionError("bot 'mcts': epsilon and r must lie in [0, 1]")
        self.time, self.iterations, self.c = time, iterations, c
        self.r, self.epsilon = float(given["r"]), float(given["epsilon"])
        self.filter, self.lc = bool(given["filter"]), bool(given["lc"])
        self.lc_file, self.profile = lc_file, chosen
        self.workers, self.max_nodes = max(1, workers), max_nodes
        self._weights: dict[str, Any] = {}
        self._pool: ProcessPoolExecutor | None = None
        self.last_iterations = 0

    def describe(self) -> str:
        """Name plus profile and search constants, for logs and tables."""
        return (f"mcts(profile={self.profile.value}, c={self.c}, r={self.r}, "
                f"epsilon={self.epsilon}, filter={self.filter}, lc={self.lc})")

    # ------------------------------------------------------------------ choosing

    @property
    def timed(self) -> bool:
        """True unless a fixed number of iterations is set."""
        return self.iterations <= 0

    @property
    def cores(self) -> int:
        """The worker processes one move keeps busy."""
        return self.workers

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Search from ``view`` and play the root's most visited move."""
        if len(legal) == 1:
            return legal[0]  # forced: no search, so no effort to report
        search = self._search_for(view)
        tb = tables_for(view.rules)
        if self.workers > 1 and not isinstance(view, MrXView):
            rows = self._parallel(view.rules, search)
        else:
            rows = _run(tb, search, self.iterations, self.time, self._seeds())
        self.last_iterations = int(rows[:, 4].sum()) if len(rows) else 0
        self.report(playouts=self.last_iterations)
        return self._best(rows, legal)

    def _search_for(self, view: View) -> Search:
        is_mrx = isinstance(view, MrXView)
        possible = np.array([view.mrx] if isinstance(view, MrXView) else sorted(view.possible),
                            dtype=np.int32)
        root = compact_view(view, int(possible[0]))
        use_lc = self.lc and not is_mrx
        weights = self._lc_weights(view.rules) if use_lc else np.zeros(5)
        ints = np.array([view.to_move, self.filter, use_lc, not is_mrx], dtype=np.int64)
        floats = np.array([self.c, self.r, self.epsilon])
        return Search(root, possible, weights, ints, floats, self.max_nodes)

    def _lc_weights(self, rules: Ruleset) -> Any:
        if rules.name not in self._weights:
            self._weights[rules.name] = np.array(load_weights(rules.name, self.lc_file))
        return self._weights[rules.name]

    def _seeds(self) -> int:
        return self.rng.getrandbits(31)

    def _best(self, rows: Any, legal: Sequence[Move]) -> Move:
        allowed = {move_key(m): m for m in legal}
        best: Move | None = None
        best_score = (-1.0, -1.0)
        for row in rows:
            t1, d1, t2, d2 = (int(x) for x in row[:4])
            move = allowed.get((t1, d1, t2, d2))
            score = (float(row[4]), float(row[5]) / max(1.0, float(row[4])))
            if move is not None and score > best_score:
                best, best_score = move, score
        return best if best is not None else self.rng.choice(list(legal))

    def _parallel(self, rules: Ruleset, search: Search) -> Any:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("fork"))
        iterations = -(-self.iterations // self.workers) if self.iterations > 0 else 0
        definition = json.dumps(rules.definition())
        jobs = [self._pool.submit(_worker, definition, search, iterations, self.time,
                                  self._seeds()) for _ in range(self.workers)]
        merged: dict[tuple[int, ...], Any] = {}
        for job in jobs:
            for row in job.result():
                key = tuple(int(x) for x in row[:4])
                merged[key] = merged.get(key, 0) + row
        rows = np.array([merged[k] for k in sorted(merged)]) if merged else np.zeros((0, 6))
        for i, key in enumerate(sorted(merged)):
            rows[i, :4] = key
        return rows

    def game_over(self, outcome: object) -> None:
        """Shut down the worker pool, if any."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _run(tb: Tables, search: Search, iterations: int, seconds: float, base_seed: int) -> Any:
    """Search within the iteration budget (if positive) or the time budget."""
    deadline = clock.perf_counter() + seconds * 0.95
    tree = new_tree(search.capacity)
    done = 0
    chunk_index = 0
    while True:
        step = CHUNK if iterations <= 0 else min(CHUNK, iterations - done)
        if step <= 0:
            break
        seed = (base_seed + chunk_index * 1_000_003) % 2**31
        run_iterations(tb, tree, search.root, search.possible, search.weights, search.ints,
                       search.floats, step, seed)
        done += step
        chunk_index += 1
        if iterations <= 0 and clock.perf_counter() >= deadline:
            break
    return root_children(tree)


@cache
def _rules_from(definition: str) -> Ruleset:
    return ruleset_from_dict(json.loads(definition), "mcts worker")


def _worker(definition: str, search: Search, iterations: int, seconds: float,
            base_seed: int) -> Any:
    return _run(tables_for(_rules_from(definition)), search, iterations, seconds, base_seed)
