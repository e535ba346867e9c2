"""Merge finished ``yard reproduce`` runs into one report (``yard reproduce --merge``).

A cell's games are fixed seed ranges (game ``i`` uses seed ``SEED + i``), so runs of the
same cell on other seeds -- later, or on other machines -- add up exactly, as chunks do
inside one run (:func:`yard.reproduce.model.merge`): the counts are summed and the interval
and verdict recomputed on the total. A merged cell must be one seed range without gaps or
overlaps, so that its command (``--games N --seed S``) replays exactly its games; and every
part must have been played with the same bots and budgets.

Cells that train a DQN first are refused: each run trains its own network from its seed, so
their games are not games of one agent.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from itertools import pairwise
from pathlib import Path
from typing import Any

from yard.reproduce.experiments import EXPERIMENTS
from yard.reproduce.gains import gains
from yard.reproduce.model import ReproduceError, is_mcts, judge, rate

__all__ = ["load_report", "merge_reports"]

#: Report fields every part must agree on.
_SAME_REPORT = ("experiment", "quick", "budget")
#: Cell fields every part of a cell must agree on (what was played).
_SAME_CELL = ("label", "rules", "mrx", "detectives", "metric", "subject", "published")
_REPORT_KEYS = {"experiment", "title", "source", "quick", "budget", "seed", "date", "machine",
                "workers", "notes", "cells"}
_CELL_KEYS = {"key", "n", "seeds", "wins", "mrx_wins", "detective_wins", "mean_moves",
              "cpu_seconds", *_SAME_CELL}


def load_report(path: Path) -> dict[str, Any]:
    """A report written by ``--out`` (``NAME.json``) or printed by ``--json``."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReproduceError(f"{path}: not a readable report ({exc})") from None
    if not isinstance(report, dict):
        raise ReproduceError(f"{path}: not a yard reproduce report (no JSON object)")
    if not set(report) >= _REPORT_KEYS:
        raise ReproduceError(f"{path}: not a yard reproduce report (missing "
                             f"{', '.join(sorted(_REPORT_KEYS - set(report)))})")
    if not isinstance(report["cells"], list):
        raise ReproduceError(f"{path}: its cells are not a list")
    for cell in report["cells"]:
        if not isinstance(cell, dict) or not set(cell) >= _CELL_KEYS:
            raise ReproduceError(f"{path}: a cell lacks the fields a merge needs")
    return report


def merge_reports(parts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One report from the ``(name, report)`` parts; see the module docstring."""
    if len(parts) < 2:
        raise ReproduceError("--merge needs at least two reports")
    first_name, first = parts[0]
    for name, report in parts[1:]:
        for field in _SAME_REPORT:
            if report[field] != first[field]:
                raise ReproduceError(f"{name} and {first_name} differ in {field!r} "
                                     f"({report[field]!r} vs {first[field]!r})")
    experiment = EXPERIMENTS.get(first["experiment"])
    if experiment is None:
        raise ReproduceError(f"{first_name}: unknown experiment {first['experiment']!r}")
    by_key: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, report in parts:
        for cell in report["cells"]:
            if cell.get("training"):
                raise ReproduceError(f"{name}: cell {cell['key']!r} trains its own DQN in "
                                     "each run, so runs of it cannot be merged")
            by_key.setdefault(cell["key"], []).append((name, cell))
    published_games = {c.key: c.games for c in experiment.cells}
    unknown = [key for key in by_key if key not in published_games]
    if unknown:
        raise ReproduceError(f"{experiment.name} has no cell {unknown[0]!r} (any more)")
    cells = [_merge_cell(first["experiment"], by_key[c.key])
             for c in experiment.cells if c.key in by_key]
    sizes = {c["n"] for c in cells}
    budgets = {r.get("iterations") for _, r in parts}
    iterations = budgets.pop() if len(budgets) == 1 else None
    full_games = not first["quick"] and all(c["n"] >= published_games[c["key"]]
                                            for c in cells)
    searched = any(is_mcts(spec)
                   for c in cells for spec in (c["mrx"], *c["detectives"]))
    return {
        **{k: first[k] for k in ("experiment", "title", "source", "quick", "budget", "plot",
                                 "notes")},
        "seed": min(c["seeds"][0] for c in cells),
        "workers": None,
        "games": sizes.pop() if len(sizes) == 1 else None,
        "full_size": full_games and not (searched and iterations is not None),
        "full_games": full_games, "iterations": iterations,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": "; ".join(dict.fromkeys(r["machine"] for _, r in parts)),
        "cells": cells,
        "gains": gains(cells),
        "training": first.get("training", {}),
        "train_games": None,
        "eval_games": None,
        "training_runs": {},
        "merged_from": [{"report": name, "date": r["date"], "machine": r["machine"],
                         "seed": r["seed"], "workers": r["workers"],
                         "cells": [c["key"] for c in r["cells"]]} for name, r in parts],
    }


def _merge_cell(experiment: str, parts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    first_name, first = parts[0]
    key = first["key"]
    for name, cell in parts[1:]:
        for field in _SAME_CELL:
            if cell[field] != first[field]:
                raise ReproduceError(f"cell {key!r} was played with a different {field} in "
                                     f"{name} ({cell[field]!r}) than in {first_name} "
                                     f"({first[field]!r})")
    spans = sorted((cell["seeds"][0], cell["seeds"][1], name) for name, cell in parts)
    for (_, end, a), (start, _, b) in pairwise(spans):
        if start <= end:
            raise ReproduceError(f"cell {key!r}: the seeds of {a} and {b} overlap at {start}")
        if start > end + 1:
            raise ReproduceError(f"cell {key!r}: seeds {end + 1}-{start - 1} are missing "
                                 f"between {a} and {b}; a merged cell is one seed range")
    n = sum(cell["n"] for _, cell in parts)
    mrx_wins = sum(cell["mrx_wins"] for _, cell in parts)
    detective_wins = sum(cell["detective_wins"] for _, cell in parts)
    wins = mrx_wins if first["metric"] == "mrx" else detective_wins
    measured = rate(wins, n)
    seed = spans[0][0]
    # The parts' commands differ only in --games and --seed: keep the rest (--quick,
    # --iterations, ...) from the first.
    words = shlex.split(first["command"])
    if words[:5] != ["yard", "reproduce", experiment, "--cell", key] or words[5:9:2] != [
            "--games", "--seed"]:
        raise ReproduceError(f"{first_name}: cell {key!r} has an unexpected command "
                             f"{first['command']!r}")
    rest = words[9:]
    command = ["yard", "reproduce", experiment, "--cell", key, "--games", str(n),
               "--seed", str(seed), *rest]
    return {**first, "n": n, "seeds": [seed, spans[-1][1]], "wins": wins,
            "mrx_wins": mrx_wins, "detective_wins": detective_wins, "rate": measured["rate"],
            "ci95": measured["ci95"],
            "verdict": judge(first["published"], first["subject"], first["metric"],
                             *measured["ci95"]),
            "mean_moves": round(sum(c["mean_moves"] * c["n"] for _, c in parts) / n, 2),
            "cpu_seconds": round(sum(c["cpu_seconds"] for _, c in parts), 2),
            "command": " ".join(shlex.quote(p) for p in command)}
