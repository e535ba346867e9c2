"""Gains of an enhancement over its baseline, with 95% intervals.

The Nijssen tables ask whether an enhancement (Location Categorization, Coalition Reduction
at some r) *changes* the seekers' win rate, not only what each rate is. Within a series of
cells (the same seekers and Mister X), the cell at ``x == 0`` is the baseline (without LC;
r = 0); every other cell of the series gets its difference to that baseline, with the
Newcombe hybrid score interval (method 10 of Newcombe 1998, built from the two Wilson
intervals the table already shows), and the published difference beside it where the paper
gives both numbers.

The cells are played on the same seeds, so they share start positions, but the games
themselves differ; the interval treats them as independent samples, which is conservative.
"""

from __future__ import annotations

from math import sqrt
from typing import Any

from yard.reproduce.model import judge

#: The ``x`` of a series' baseline cell.
BASELINE_X = 0.0


def difference_interval(wins_a: int, n_a: int, ci_a: tuple[float, float], wins_b: int,
                        n_b: int, ci_b: tuple[float, float]) -> tuple[float, float, float]:
    """``rate_a - rate_b`` and its 95% Newcombe hybrid score interval, from each rate's
    95% Wilson interval ``ci_a`` / ``ci_b``."""
    p_a, p_b = wins_a / n_a, wins_b / n_b
    (lo_a, hi_a), (lo_b, hi_b) = ci_a, ci_b
    d = p_a - p_b
    return (d, d - sqrt((p_a - lo_a) ** 2 + (hi_b - p_b) ** 2),
            d + sqrt((hi_a - p_a) ** 2 + (p_b - lo_b) ** 2))


def significance(lo: float, hi: float) -> str:
    """``gain`` or ``loss`` when the interval excludes 0, else ``no significant change``."""
    if lo > 0:
        return "gain"
    if hi < 0:
        return "loss"
    return "no significant change"


def gains(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per non-baseline cell whose series' baseline is among ``rows`` (report
    rows: ``key``, ``series``, ``x``, ``wins``, ``n``, ``ci95``, ``published``, ``metric``,
    ``subject``). Rows without an ``x`` (or without their baseline) have no entry."""
    baselines = {r["series"]: r for r in rows
                 if r.get("x") is not None and r["x"] == BASELINE_X and r["n"]}
    out = []
    for row in rows:
        base = baselines.get(row.get("series", ""))
        if base is None or row is base or row.get("x") is None or not row["n"]:
            continue
        d, lo, hi = difference_interval(row["wins"], row["n"], tuple(row["ci95"]),
                                        base["wins"], base["n"], tuple(base["ci95"]))
        published = (None if row["published"] is None or base["published"] is None
                     else round(row["published"] - base["published"], 4))
        out.append({"key": row["key"], "label": row["label"], "baseline": base["key"],
                    "baseline_label": base["label"], "gain": d, "ci95": [lo, hi],
                    "significant": significance(lo, hi), "published": published,
                    "verdict": judge(published, row["subject"], row["metric"], lo, hi)})
    return out

