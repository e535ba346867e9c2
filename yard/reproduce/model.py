"""Cells, experiments, and how a cell is played and summarised.

A :class:`Cell` is one pairing of a published table: Mister X's bot spec, the detectives'
bot specs, the ruleset, the game counts of the full and the quick run, the published value
(with its source) and what differs from the published set-up. Game ``i`` of a cell uses game
seed ``seed + i``; every bot is reseeded from the game seed (:func:`bots.arena.bot_seed`), so
a cell's result depends only on its seeds, never on how the games are split over workers.

A cell with a :class:`Training` is played by a DQN Mister X that the run trains first
(:mod:`bots.dqn.train`, the trainer of ``yard train dqn``), with that variant's architecture
and rewards; its periodic evaluations are the training curve of the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from itertools import pairwise
from typing import Any, Literal

from bots.arena import play_game, wilson_interval
from bots.base import Bot
from bots.registry import bot_from_spec
from game import Winner, load_ruleset
from game.errors import YardError

Side = Literal["mrx", "detectives"]


class ReproduceError(YardError):
    """An unknown experiment or cell, or bad run parameters."""


#: Training game ``i`` of a variant uses game seed ``seed + TRAIN_SEED_OFFSET + i``: held out
#: from the test games (``seed + i``) and from the trainer's evaluation seeds (10**6 + g).
TRAIN_SEED_OFFSET = 2_000_000


@dataclass(frozen=True)
class Training:
    """A DQN Mister X the run trains (against ``opponents``) before its cell is played.

    ``variant`` names the training run (cells with the same variant share one run);
    ``rewards`` overrides fields of :class:`bots.dqn.train.Rewards` (``yard train dqn
    --reward-<name>``), ``hidden`` the hidden layer sizes (``--hidden``); ``comparisons``
    are the plots whose curves include this run (``architecture``, ``reward``).
    """

    variant: str
    label: str
    arch: str
    rewards: tuple[tuple[str, float], ...] = ()
    hidden: tuple[int, ...] | None = None
    opponents: tuple[str, ...] = ("random",)
    rules: str = "grid5"
    games: int = 4_000
    quick_games: int = 300
    comparisons: tuple[str, ...] = ()

    def budget(self, quick: bool, games: int | None = None,
               eval_games: int | None = None) -> dict[str, int]:
        """Training games, evaluation interval and evaluation games of this run: the full
        or quick budget, or ``games`` training games (``--train-games``) with the same
        number of evaluations (fewer if there are fewer games); ``eval_games``
        (``--eval-games``) games per evaluation instead of the budget's."""
        n = games if games is not None else self.quick_games if quick else self.games
        points = 6 if quick else 16
        evaluate = eval_games if eval_games is not None else 50 if quick else 200
        return {"games": n, "eval_every": max(1, n // points), "eval_games": evaluate,
                "eps_decay_games": max(1, n * 3 // 8)}


@dataclass(frozen=True)
class Cell:
    """One row of an experiment's table.

    ``metric`` is the side whose win rate the published table reports; ``subject`` is the
    side played by the yard agent under test (``None`` when both are baselines), which
    decides whether a difference from the published number counts as beating it or falling
    short. ``quick_mrx`` / ``quick_detectives`` replace the specs in ``--quick`` runs
    (smaller search budgets). ``series`` and ``x`` place the cell on the experiment's plot.
    With ``training``, Mister X is the DQN trained in the run (``mrx`` is then ``dqn``;
    the runner plays ``dqn:weights=<the trained file>``).
    """

    key: str
    label: str
    rules: str
    mrx: str
    detectives: tuple[str, ...]
    metric: Side
    games: int
    quick_games: int
    published: float | None = None
    source: str = ""
    differs: str = ""
    subject: Side | None = None
    quick_mrx: str | None = None
    quick_detectives: tuple[str, ...] | None = None
    series: str = ""
    x: float | None = None
    training: Training | None = None

    def specs(self, quick: bool) -> tuple[str, tuple[str, ...]]:
        """(Mister X spec, detective specs) for a quick or a full run."""
        if not quick:
            return self.mrx, self.detectives
        return self.quick_mrx or self.mrx, self.quick_detectives or self.detectives

    @property
    def searches(self) -> bool:
        """Whether an MCTS bot plays in this cell (what ``--iterations`` changes)."""
        specs = (self.mrx, *self.detectives, self.quick_mrx or "", *(self.quick_detectives or ()))
        return any(is_mcts(spec) for spec in specs)

    def with_iterations(self, iterations: int) -> Cell:
        """This cell with every MCTS bot, full and quick, searching ``iterations``
        iterations per move (``--iterations``); other bots are unchanged."""
        def budget(spec: str) -> str:
            return with_iterations(spec, iterations)

        return replace(
            self, mrx=budget(self.mrx), detectives=tuple(map(budget, self.detectives)),
            quick_mrx=None if self.quick_mrx is None else budget(self.quick_mrx),
            quick_detectives=None if self.quick_detectives is None
            else tuple(map(budget, self.quick_detectives)))


def is_mcts(spec: str) -> bool:
    """Whether a bot spec (``mcts:iterations=1000``) names the MCTS bot."""
    return spec.partition(":")[0] == "mcts"


def with_iterations(spec: str, iterations: int) -> str:
    """``mcts:iterations=1000,lc=true`` -> ``mcts:iterations=N,lc=true``; other specs are
    returned unchanged."""
    if not is_mcts(spec):
        return spec
    options = [o for o in spec.partition(":")[2].split(",")
               if o and not o.startswith("iterations=")]
    return "mcts:" + ",".join([f"iterations={iterations}", *options])


@dataclass(frozen=True)
class Experiment:
    """A published experiment: its cells, where it comes from and what the plot shows."""

    name: str
    title: str
    source: str
    cells: tuple[Cell, ...]
    notes: tuple[str, ...] = ()
    full_budget: str = ""
    quick_budget: str = ""
    plot: str = "cells"  # "cells", "sweep" (x = a parameter) or "training" (DQN curves)
    #: shipped DQN weights whose training record the report carries (``dash-mrx`` ...)
    weights: tuple[str, ...] = ()

    def cell(self, key: str) -> Cell:
        """The cell called ``key``."""
        for cell in self.cells:
            if cell.key == key:
                return cell
        known = ", ".join(c.key for c in self.cells)
        raise ReproduceError(f"experiment {self.name!r} has no cell {key!r} (cells: {known})")

    def select(self, keys: tuple[str, ...] | list[str]) -> Experiment:
        """The experiment restricted to the cells ``keys`` (all when empty)."""
        if not keys:
            return self
        return replace(self, cells=tuple(self.cell(k) for k in keys))


@dataclass(frozen=True)
class Chunk:
    """A contiguous range of game seeds of one cell: the unit of work of a worker."""

    cell: str
    rules: str
    mrx: str
    detectives: tuple[str, ...]
    seed: int
    games: int


@dataclass(frozen=True)
class ChunkResult:
    """Counts of one chunk (``seconds`` is CPU wall time, the only machine-dependent part)."""

    cell: str
    seed: int
    games: int
    mrx_wins: int
    detective_wins: int
    moves: int
    seconds: float


def make(spec: str, seed: int | None = None) -> Bot:
    """A bot from a spec ``name`` or ``name:key=value,...`` (the grammar of
    :mod:`bots.spec`)."""
    return bot_from_spec(spec, seed)


@cache
def _cached_bot(spec: str, slot: int) -> Bot:
    # Bots are reseeded by the arena at the start of every game, so one instance per spec
    # and seat slot can play a whole chunk (and keeps loaded weights / compiled kernels).
    return make(spec, slot)


def play_chunk(chunk: Chunk) -> ChunkResult:
    """Play the games of one chunk in this process."""
    import time

    started = time.perf_counter()
    rules = load_ruleset(chunk.rules)
    mrx = _cached_bot(chunk.mrx, 0)
    detectives = [_cached_bot(spec, i + 1) for i, spec in enumerate(chunk.detectives)]
    mrx_wins = det_wins = moves = 0
    for game_seed in range(chunk.seed, chunk.seed + chunk.games):
        result = play_game(rules, mrx, detectives, game_seed)
        mrx_wins += result.outcome.winner is Winner.MRX
        det_wins += result.outcome.winner is Winner.DETECTIVES
        moves += len(result.moves)
    return ChunkResult(chunk.cell, chunk.seed, chunk.games, mrx_wins, det_wins, moves,
                       time.perf_counter() - started)


def chunks_for(cell: Cell, quick: bool, games: int, seed: int, size: int) -> list[Chunk]:
    """Split a cell's seeds ``seed .. seed + games - 1`` into chunks of ``size`` games."""
    mrx, detectives = cell.specs(quick)
    return [Chunk(cell.key, cell.rules, mrx, detectives, start, min(size, seed + games - start))
            for start in range(seed, seed + games, size)]


def rate(wins: int, n: int) -> dict[str, Any]:
    """A win rate with its 95% Wilson interval."""
    lo, hi = wilson_interval(wins, n)
    return {"rate": wins / n if n else 0.0, "ci95": [lo, hi]}


def merge(results: list[ChunkResult]) -> dict[str, Any]:
    """Sum the chunks of one cell, as ``bench/combine_strength.py`` does: seed ranges must
    not overlap; the counts add up; the interval is recomputed on the total."""
    spans = sorted((r.seed, r.seed + r.games) for r in results)
    for (_, end), (start, _) in pairwise(spans):
        if start < end:
            raise ReproduceError(f"chunks overlap at seed {start}")
    games = sum(r.games for r in results)
    return {"games": games, "seeds": [spans[0][0], spans[-1][1] - 1] if spans else [],
            "chunks": len(results), "mrx_wins": sum(r.mrx_wins for r in results),
            "detective_wins": sum(r.detective_wins for r in results),
            "mean_moves": sum(r.moves for r in results) / games if games else 0.0,
            "cpu_seconds": sum(r.seconds for r in results)}


def verdict(cell: Cell, lo: float, hi: float) -> str:
    """How yard's interval compares with the cell's published number (see :func:`judge`)."""
    return judge(cell.published, cell.subject, cell.metric, lo, hi)


def judge(published: float | None, subject: str | None, metric: str, lo: float,
          hi: float) -> str:
    """How the 95% interval ``lo``-``hi`` compares with the ``published`` number.

    ``agrees`` when the published value lies inside the interval; otherwise ``beats`` or
    ``falls short`` from the point of view of the yard agent under test (``subject``, the
    side whose win rate ``metric`` is or is not), ``higher`` / ``lower`` when the cell has
    none; ``-`` without a published number.
    """
    if published is None:
        return "-"
    if lo <= published <= hi:
        return "agrees"
    above = lo > published
    if subject is None:
        return "higher" if above else "lower"
    good = above if subject == metric else not above
    return "beats" if good else "falls short"


ProgressFn = Callable[[ChunkResult], None]
