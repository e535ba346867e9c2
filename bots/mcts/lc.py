"""Location Categorization weights: load, save, and learn them from game records.

A category is the distance from a possible location to the nearest detective (1, 2, 3, 4,
5+). Its weight is ``hits / possibilities``: how often Mister X really stood in that
category, over how often the category was present in the possible set, counted at every
detective decision of self-play games. Weights ship per ruleset in
``bots/mcts/data/lc_weights.json``::

    {"format": "yard-lc-1", "rulesets": {"classic": {"hits": [...], "possibilities": [...],
     "weights": [...], "games": 200, "seed": 1}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from game import State, YardError

FORMAT = "yard-lc-1"
N_CATEGORIES = 5
DEFAULT_FILE = "lc_weights.json"


class LcWeightsError(YardError):
    """A location-categorization weights file is missing, unreadable or malformed."""


def category(distance: int) -> int:
    """Category index 0..4 for a distance to the nearest detective (1, 2, 3, 4, 5+)."""
    return min(max(distance, 1), N_CATEGORIES) - 1


@dataclass
class LcCounts:
    """Hits and possibilities per category, accumulated over decisions."""

    hits: list[int] = field(default_factory=lambda: [0] * N_CATEGORIES)
    possibilities: list[int] = field(default_factory=lambda: [0] * N_CATEGORIES)

    def observe(self, state: State) -> None:
        """Count one detective decision: categories present, and Mister X's true one."""
        dist = state.board.distances()
        dets = state.detective_stations

        def cat(station: int) -> int:
            return category(min(int(dist[station, d]) for d in dets))

        for c in {cat(s) for s in state.possible_locations()}:
            self.possibilities[c] += 1
        self.hits[cat(state.mrx_station)] += 1

    def weights(self) -> list[float]:
        """``hits / possibilities`` per category (0 where never present)."""
        return [h / p if p else 0.0 for h, p in zip(self.hits, self.possibilities, strict=True)]


def observe_game(counts: LcCounts, states: Iterable[State]) -> None:
    """Count every state of a game where a detective is to move."""
    for state in states:
        if state.outcome is None and state.to_move != 0:
            counts.observe(state)


def save_weights(path: Path, ruleset: str, counts: LcCounts, meta: dict[str, Any]) -> None:
    """Write (or update) the entry for ``ruleset`` in a weights file."""
    data: dict[str, Any] = {"format": FORMAT, "rulesets": {}}
    if path.exists():
        data = _read(path)
    data["rulesets"][ruleset] = {"hits": counts.hits, "possibilities": counts.possibilities,
                                 "weights": counts.weights(), **meta}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def load_weights(ruleset: str, path: str = "") -> tuple[float, ...]:
    """The five weights for ``ruleset`` from ``path`` (default: the packaged file).

    A ruleset without an entry falls back to the ``classic`` entry (same board family);
    raises :class:`LcWeightsError` if the file is bad or has neither.
    """
    if path:
        data = _read(Path(path))
        where = path
    else:
        text = resources.files("bots.mcts").joinpath("data", DEFAULT_FILE).read_text()
        data = _parse(text, f"bots/mcts/data/{DEFAULT_FILE}")
        where = f"bots/mcts/data/{DEFAULT_FILE}"
    entry = data["rulesets"].get(ruleset) or data["rulesets"].get("classic")
    if entry is None:
        raise LcWeightsError(f"{where}: no weights for ruleset {ruleset!r} (nor 'classic')")
    return _checked(entry, where, ruleset)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise LcWeightsError(f"{path}: cannot read LC weights file: {exc.strerror}") from None
    return _parse(text, str(path))


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LcWeightsError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg})") \
            from None
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or not isinstance(data.get("rulesets"), dict):
        raise LcWeightsError(f"{where}: not an LC weights file (expected format {FORMAT!r} "
                             "and a 'rulesets' object)")
    return data


def _checked(entry: Any, where: str, ruleset: str) -> tuple[float, ...]:
    weights = entry.get("weights") if isinstance(entry, dict) else None
    if not (isinstance(weights, list) and len(weights) == N_CATEGORIES
            and all(isinstance(w, int | float) and 0 <= w <= 1 for w in weights)):
        raise LcWeightsError(f"{where}: ruleset {ruleset!r}: 'weights' must be a list of "
                             f"{N_CATEGORIES} numbers in [0, 1]")
    return tuple(float(w) for w in weights)
