"""Play an experiment's cells (in this process or a process pool) and build its report.

The report is a plain dict (the ``--json`` document); :mod:`yard.reproduce.report` renders it.
Results are identical for any ``workers``: chunks are fixed seed ranges, merged by summing.
Cells with a training variant are played once their variant is trained (one task per variant
in the same pool, :mod:`yard.reproduce.training`); the report's ``training_runs`` holds
their evaluation curves.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor, wait
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from yard.reproduce.gains import gains
from yard.reproduce.model import (
    Cell,
    Chunk,
    ChunkResult,
    Experiment,
    ProgressFn,
    ReproduceError,
    Training,
    _cached_bot,
    chunks_for,
    merge,
    play_chunk,
    rate,
    verdict,
)
from yard.reproduce.training import TrainTask, train_variant

#: Games per chunk: small enough to spread a cell over workers, large enough to amortise.
CHUNK_GAMES = 10


def cell_games(cell: Cell, quick: bool, games: int | None) -> int:
    """How many games a cell plays: ``--games`` if given, else its quick or full count."""
    if games is not None:
        return games
    return cell.quick_games if quick else cell.games


def cell_command(experiment: str, cell: Cell, quick: bool, games: int, seed: int,
                 train_games: int | None = None, iterations: int | None = None,
                 eval_games: int | None = None) -> str:
    """The command that replays exactly this cell (retraining its variant, if any)."""
    parts = ["yard", "reproduce", experiment, "--cell", cell.key, "--games", str(games),
             "--seed", str(seed)]
    if quick:
        parts.append("--quick")
    if train_games is not None and cell.training is not None:
        parts += ["--train-games", str(train_games)]
    if eval_games is not None and cell.training is not None:
        parts += ["--eval-games", str(eval_games)]
    if iterations is not None and cell.searches:
        parts += ["--iterations", str(iterations)]
    return " ".join(shlex.quote(p) for p in parts)


def training_variants(cells: tuple[Cell, ...]) -> dict[str, Training]:
    """The distinct training runs the cells need, by variant name."""
    out: dict[str, Training] = {}
    for cell in cells:
        if cell.training is not None:
            known = out.setdefault(cell.training.variant, cell.training)
            if known != cell.training:
                raise ReproduceError(f"variant {known.variant!r} is defined twice")
    return out


def run_experiment(experiment: Experiment, *, quick: bool = False, games: int | None = None,
                   seed: int = 1, workers: int = 1, progress: ProgressFn | None = None,
                   train_games: int | None = None, weights_dir: Path | None = None,
                   iterations: int | None = None, eval_games: int | None = None
                   ) -> dict[str, Any]:
    """Play every cell of ``experiment`` and return the report (see the module docstring).

    ``train_games`` overrides the training games of every trained variant
    (``--train-games``), ``eval_games`` the games of each of its evaluations
    (``--eval-games``); ``weights_dir`` keeps the trained weights (``VARIANT.npz``), which
    otherwise live in a temporary directory removed at the end. ``iterations`` sets the
    search budget of every MCTS bot (``--iterations``: a run at a budget between the quick
    and the published one).
    """
    if games is not None and games < 1:
        raise ReproduceError("--games must be at least 1")
    if train_games is not None and train_games < 1:
        raise ReproduceError("--train-games must be at least 1")
    if eval_games is not None and eval_games < 1:
        raise ReproduceError("--eval-games must be at least 1")
    if iterations is not None and iterations < 1:
        raise ReproduceError("--iterations must be at least 1")
    if workers < 1:
        raise ReproduceError("--workers must be at least 1")
    if iterations is not None:
        experiment = replace(experiment, cells=tuple(
            c.with_iterations(iterations) for c in experiment.cells))
    variants = training_variants(experiment.cells)
    # Bots are cached per spec; a weights path may be reused by a later run in this process.
    _cached_bot.cache_clear()
    with tempfile.TemporaryDirectory(prefix="yard-reproduce-") as tmp:
        where = weights_dir if weights_dir is not None else Path(tmp)
        tasks = {name: TrainTask(t, quick, train_games, seed, where / f"{name}.npz",
                                 eval_games)
                 for name, t in variants.items()}
        cells, results, runs = _play(experiment.cells, tasks, quick, games, seed, workers,
                                     progress)
    by_cell: dict[str, list[ChunkResult]] = {}
    for result in results:
        by_cell.setdefault(result.cell, []).append(result)
    rows = [_row(experiment.name, cell, quick, seed, merge(by_cell[cell.key]), train_games,
                 runs.get(cell.training.variant) if cell.training else None, iterations,
                 eval_games)
            for cell in cells]
    full_games = all((games if games is not None else cell.games) >= cell.games
                     for cell in experiment.cells)
    if weights_dir is None:
        for run in runs.values():
            run["weights"] = None
    return {"experiment": experiment.name, "title": experiment.title,
            "source": experiment.source, "quick": quick,
            "budget": experiment.quick_budget if quick else experiment.full_budget,
            "seed": seed, "workers": workers, "games": games,
            # --games at least every cell's published count is a full run, not a reduced one
            "full_size": not quick and full_games and (
                iterations is None or not any(c.searches for c in experiment.cells)),
            "full_games": not quick and full_games, "iterations": iterations,
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                       f"Python {platform.python_version()}",
            "plot": experiment.plot, "notes": list(experiment.notes), "cells": rows,
            "gains": gains(rows),
            "training": training_records(experiment.weights),
            "train_games": train_games, "eval_games": eval_games, "training_runs": runs}


def _play(cells: tuple[Cell, ...], tasks: dict[str, TrainTask], quick: bool,
          games: int | None, seed: int, workers: int, progress: ProgressFn | None
          ) -> tuple[list[Cell], list[ChunkResult], dict[str, dict[str, Any]]]:
    """Train the variants, then play every cell's chunks (a trained cell as soon as its
    variant is ready); returns the cells as played, the chunk results and the runs."""
    player = _Player(cells, quick, games, seed, progress)
    if workers == 1:
        player.serial(tasks)
    else:
        player.parallel(tasks, workers)
    return (list(player.played.values()), player.results,
            {name: player.runs[name] for name in tasks})


class _Player:
    """Plays the cells for :func:`_play`; keeps the cells as played (a trained cell with its
    variant's weights), the chunk results and the training runs."""

    def __init__(self, cells: tuple[Cell, ...], quick: bool, games: int | None, seed: int,
                 progress: ProgressFn | None) -> None:
        """Nothing trained or played yet."""
        self.cells, self.quick, self.games, self.seed = cells, quick, games, seed
        self.progress = progress
        self.played = {cell.key: cell for cell in cells}
        self.runs: dict[str, dict[str, Any]] = {}
        self.results: list[ChunkResult] = []

    def serial(self, tasks: dict[str, TrainTask]) -> None:
        """Train every variant, then play every cell, in this process."""
        for name, task in tasks.items():
            self.runs[name] = train_variant(task)
        for key, cell in self.played.items():
            if cell.training is not None:
                self.played[key] = cell = self._trained(cell, self.runs[cell.training.variant])
            for chunk in self._chunks(cell):
                self._done(play_chunk(chunk))

    def parallel(self, tasks: dict[str, TrainTask], workers: int) -> None:
        """Train and play on ``workers`` processes."""
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            # Training first (the longest tasks), then the chunks of the untrained cells; a
            # pending future maps to its variant name (training) or None (a chunk).
            pending: dict[Future[Any], str | None] = {
                pool.submit(train_variant, task): name for name, task in tasks.items()}
            pending |= {pool.submit(play_chunk, chunk): None for cell in self.cells
                        if cell.training is None for chunk in self._chunks(cell)}
            while pending:
                finished, _ = wait(pending, return_when="FIRST_COMPLETED")
                for future in finished:
                    variant = pending.pop(future)
                    if variant is None:
                        self._done(future.result())
                        continue
                    self.runs[variant] = future.result()
                    for cell in self._ready(variant):
                        pending |= {pool.submit(play_chunk, c): None for c in self._chunks(cell)}

    def _ready(self, variant: str) -> list[Cell]:
        """The cells that waited for ``variant``'s training, now with its weights."""
        ready = []
        for key, cell in self.played.items():
            if cell.training is not None and cell.training.variant == variant:
                self.played[key] = trained = self._trained(cell, self.runs[variant])
                ready.append(trained)
        return ready

    @staticmethod
    def _trained(cell: Cell, run: dict[str, Any]) -> Cell:
        spec = f"dqn:weights={run['weights']}"
        return replace(cell, mrx=spec, quick_mrx=spec)

    def _chunks(self, cell: Cell) -> list[Chunk]:
        return chunks_for(cell, self.quick, cell_games(cell, self.quick, self.games),
                          self.seed, CHUNK_GAMES)

    def _done(self, result: ChunkResult) -> None:
        self.results.append(result)
        if self.progress is not None:
            self.progress(result)


def training_records(names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The recorded training of shipped DQN weights files (``dash-mrx`` ...): games, wall
    time, every evaluation and the evaluation of the shipped weights."""
    if not names:
        return {}
    from bots.dqn.bot import WEIGHTS_DIR
    from bots.dqn.policy import load_weights

    out: dict[str, dict[str, Any]] = {}
    for name in names:
        path = WEIGHTS_DIR / f"{name}.npz"
        if path.is_file():
            training = load_weights(path)[0].get("training", {})
            out[name] = {k: training.get(k) for k in
                         ("games", "seconds", "opponents", "evals", "shipped_eval", "command")}
    return out


def _row(name: str, cell: Cell, quick: bool, seed: int, merged: dict[str, Any],
         train_games: int | None = None, run: dict[str, Any] | None = None,
         iterations: int | None = None, eval_games: int | None = None) -> dict[str, Any]:
    mrx, detectives = cell.specs(quick)
    wins = merged["mrx_wins"] if cell.metric == "mrx" else merged["detective_wins"]
    measured = rate(wins, merged["games"])
    lo, hi = measured["ci95"]
    return {"key": cell.key, "label": cell.label, "rules": cell.rules, "mrx": mrx,
            "detectives": list(detectives), "metric": cell.metric, "subject": cell.subject,
            "n": merged["games"], "seeds": merged["seeds"], "wins": wins,
            "mrx_wins": merged["mrx_wins"], "detective_wins": merged["detective_wins"],
            "rate": measured["rate"], "ci95": measured["ci95"],
            "published": cell.published, "published_source": cell.source,
            "verdict": verdict(cell, lo, hi), "differs": cell.differs,
            "series": cell.series, "x": cell.x,
            "mean_moves": round(merged["mean_moves"], 2),
            "cpu_seconds": round(merged["cpu_seconds"], 2),
            "command": cell_command(name, cell, quick, merged["games"], seed, train_games,
                                    iterations, eval_games),
            "training": None if run is None else run["variant"],
            "train_cpu_seconds": None if run is None else run["cpu_seconds"]}
