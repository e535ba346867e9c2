"""Play an experiment's cells (in this process or a process pool) and build its report.

The report is a plain dict (the ``--json`` document); :mod:`yard.reproduce.report` renders it.
Results are identical for any ``workers``: chunks are fixed seed ranges, merged by summing.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

from yard.reproduce.model import (
    Cell,
    ChunkResult,
    Experiment,
    ProgressFn,
    ReproduceError,
    chunks_for,
    merge,
    play_chunk,
    rate,
    verdict,
)

#: Games per chunk: small enough to spread a cell over workers, large enough to amortise.
CHUNK_GAMES = 10


def cell_games(cell: Cell, quick: bool, games: int | None) -> int:
    """How many games a cell plays: ``--games`` if given, else its quick or full count."""
    if games is not None:
        return games
    return cell.quick_games if quick else cell.games


def cell_command(experiment: str, cell: Cell, quick: bool, games: int, seed: int) -> str:
    """The command that replays exactly this cell."""
    parts = ["yard", "reproduce", experiment, "--cell", cell.key, "--games", str(games),
             "--seed", str(seed)]
    if quick:
        parts.append("--quick")
    return " ".join(shlex.quote(p) for p in parts)


def run_experiment(experiment: Experiment, *, quick: bool = False, games: int | None = None,
                   seed: int = 1, workers: int = 1, progress: ProgressFn | None = None
                   ) -> dict[str, Any]:
    """Play every cell of ``experiment`` and return the report (see the module docstring)."""
    if games is not None and games < 1:
        raise ReproduceError("--games must be at least 1")
    if workers < 1:
        raise ReproduceError("--workers must be at least 1")
    chunks = [chunk for cell in experiment.cells
              for chunk in chunks_for(cell, quick, cell_games(cell, quick, games), seed,
                                      CHUNK_GAMES)]
    results: list[ChunkResult] = []
    if workers == 1:
        for chunk in chunks:
            results.append(play_chunk(chunk))
            if progress is not None:
                progress(results[-1])
    else:
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            futures = [pool.submit(play_chunk, chunk) for chunk in chunks]
            for future in as_completed(futures):
                results.append(future.result())
                if progress is not None:
                    progress(results[-1])
    by_cell: dict[str, list[ChunkResult]] = {}
    for result in results:
        by_cell.setdefault(result.cell, []).append(result)
    rows = [_row(experiment.name, cell, quick, seed, merge(by_cell[cell.key]))
            for cell in experiment.cells]
    return {"experiment": experiment.name, "title": experiment.title,
            "source": experiment.source, "quick": quick,
            "budget": experiment.quick_budget if quick else experiment.full_budget,
            "seed": seed, "workers": workers, "games": games,
            # --games at least every cell's published count is a full run, not a reduced one
            "full_size": not quick and all(
                (games if games is not None else cell.games) >= cell.games
                for cell in experiment.cells),
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                       f"Python {platform.python_version()}",
            "plot": experiment.plot, "notes": list(experiment.notes), "cells": rows,
            "training": training_records(experiment.weights)}


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


def _row(name: str, cell: Cell, quick: bool, seed: int, merged: dict[str, Any]
         ) -> dict[str, Any]:
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
            "command": cell_command(name, cell, quick, merged["games"], seed)}
