"""``yard reproduce NAME``: play a published experiment and print its table beside the
published numbers, with 95% intervals and a verdict per cell.

    yard reproduce --list
    yard reproduce warwick
    yard reproduce brno --quick --workers 2 --out results/
    yard reproduce nijssen-cr --cell basic-mcts-r0.375 --games 100 --seed 1

``--quick`` uses small budgets and game counts (and says so); without it the published game
counts and budgets are used. ``--games`` overrides every cell's game count, ``--cell`` picks
cells (repeatable). Cells that train a DQN first (brno's ``trained-*``, figures 6.4-6.5)
train their published-size budget, the quick one, or ``--train-games N`` games. ``--out
DIR`` writes ``NAME.md``, ``NAME.json`` and ``NAME.png`` (``NAME-quick.*`` for quick runs),
for trained cells also the training-curve plots ``NAME-architecture.png`` /
``NAME-reward.png`` and the trained weights under ``NAME-weights/``. ``--json`` prints the
report as one JSON document. ``--merge A.json --merge B.json`` adds up finished runs of the
same cells on adjoining seeds (other days, other machines) into one table, exactly as the
chunks of one run add up (:mod:`yard.reproduce.merging`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from yard.cli.options import json_option
from yard.reproduce import EXPERIMENTS, ReproduceError, run_experiment
from yard.reproduce.merging import load_report, merge_reports
from yard.reproduce.progress import ProgressLine
from yard.reproduce.report import run_name, to_text, write_outputs
from yard.reproduce.runner import cell_games


@click.command()
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the experiments and exit.")
@click.option("--quick", is_flag=True, help="Small budgets and game counts (a few minutes).")
@click.option("--games", type=click.IntRange(min=1), default=None,
              help="Games per cell (default: the published count, or the quick count).")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Game i of every cell uses seed SEED + i.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes playing games in parallel (results do not depend on it).")
@click.option("--cell", "cells", multiple=True, help="Only this cell (repeatable).")
@click.option("--train-games", type=click.IntRange(min=1), default=None,
              help="Training games per trained DQN variant (default: the full or quick "
              "budget).")
@click.option("--eval-games", type=click.IntRange(min=1), default=None,
              help="Games per evaluation of each trained DQN variant (default: 200, "
              "--quick: 50); fewer make a quick smoke run, with a noisier choice of the "
              "kept weights.")
@click.option("--iterations", type=click.IntRange(min=1), default=None,
              help="Every MCTS bot searches this many iterations per move (a budget between "
              "--quick and the published one; the table says so).")
@json_option("Print the report as JSON.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the table (Markdown + JSON) and its plot (PNG) here.")
@click.option("--merge", "merge_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Merge finished runs' reports (NAME.json of --out, or --json output; "
              "repeatable) into one table instead of playing: same cells on adjoining "
              "seeds add up exactly.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress on stderr: a live line on a terminal, elsewhere a line with "
              "the rate and time left at most once a minute (a run under a minute prints "
              "none).")
def reproduce(name: str | None, list_: bool, quick: bool, games: int | None, seed: int,
              workers: int, cells: tuple[str, ...], train_games: int | None,
              eval_games: int | None, iterations: int | None, as_json: bool, out: Path | None,
              merge_files: tuple[Path, ...], progress: bool) -> None:
    """Play a published experiment and compare it with the published table."""
    if merge_files:
        report = _merged(name, merge_files, cells)
        _emit(report, as_json, out)
        return
    if list_:
        for exp in EXPERIMENTS.values():
            full = sum(c.games for c in exp.cells)
            click.echo(f"{exp.name:11} {len(exp.cells):2} cells, {full:,} games (full)  "
                       f"{exp.title}")
        return
    if name is None:
        raise click.UsageError("give an experiment NAME or --list")
    experiment = EXPERIMENTS.get(name)
    if experiment is None:
        raise ReproduceError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    experiment = experiment.select(list(cells))
    total = sum(cell_games(c, quick, games) for c in experiment.cells)
    report_progress = ProgressLine(experiment.name, total, live=sys.stderr.isatty(),
                                   write=lambda text: click.echo(text, err=True, nl=False))
    weights_dir = None if out is None else out / f"{run_name(experiment.name, quick)}-weights"
    report = run_experiment(experiment, quick=quick, games=games, seed=seed, workers=workers,
                            progress=report_progress if progress else None,
                            train_games=train_games, weights_dir=weights_dir,
                            iterations=iterations, eval_games=eval_games)
    _emit(report, as_json, out)


def _emit(report: dict[str, Any], as_json: bool, out: Path | None) -> None:
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(to_text(report))
    if out is not None:
        for path in write_outputs(report, out):
            click.echo(f"wrote {path}", err=True)


#: Options that choose what to play: meaningless with --merge, which plays nothing.
_PLAY_OPTIONS = ("quick", "games", "seed", "workers", "train_games", "eval_games",
                 "iterations", "list_")


def _merged(name: str | None, files: tuple[Path, ...], cells: tuple[str, ...]
            ) -> dict[str, Any]:
    ctx = click.get_current_context()
    given = [p for p in _PLAY_OPTIONS
             if ctx.get_parameter_source(p) is not click.core.ParameterSource.DEFAULT]
    if given:
        flag = "--" + given[0].rstrip("_").replace("_", "-")
        raise click.UsageError(f"{flag} chooses what to play; --merge plays nothing, it adds "
                               "up finished runs")
    parts = [(str(path), load_report(path)) for path in files]
    if name is not None and parts[0][1]["experiment"] != name:
        raise ReproduceError(f"{parts[0][0]} is a run of {parts[0][1]['experiment']!r}, "
                             f"not {name!r}")
    if cells:
        wanted = set(cells)
        parts = [(p, {**r, "cells": [c for c in r["cells"] if c["key"] in wanted]})
                 for p, r in parts]
        missing = wanted - {c["key"] for _, r in parts for c in r["cells"]}
        if missing:
            raise ReproduceError(f"no report holds cell {sorted(missing)[0]!r}")
    return merge_reports(parts)
