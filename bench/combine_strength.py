"""Combine ``bench/strength.py`` results of the same pairing run in chunks (other seeds,
other machines) into one line per pairing, with 95% Wilson intervals.

    .venv/bin/python bench/strength.py ... --pairs 25 --seed 1000 >> runs.jsonl
    .venv/bin/python bench/strength.py ... --pairs 25 --seed 1025 >> runs.jsonl
    .venv/bin/python bench/combine_strength.py runs.jsonl

Lines that are not JSON objects (logs) are skipped. Chunks must not overlap in seeds: the
seed ranges are checked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

from bots.arena import wilson_interval


def _rate(wins: int, n: int) -> list[float]:
    lo, hi = wilson_interval(wins, n)
    return [round(wins / n, 3), round(lo, 3), round(hi, 3)]


def combine(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per (rules, a, b) over all chunks."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["rules"], row["a"], row["b"])].append(row)
    out = []
    for (rules, a, b), chunks in groups.items():
        spans = sorted((c["seed"], c["seed"] + c["pairs"]) for c in chunks)
        for (_, end), (start, _) in pairwise(spans):
            if start < end:
                raise ValueError(f"{rules} {a} vs {b}: chunks overlap at seed {start}")
        pairs = sum(c["pairs"] for c in chunks)
        as_mrx = sum(c["a_wins_as_mrx"] for c in chunks)
        as_det = sum(c["a_wins_as_detectives"] for c in chunks)
        out.append({"rules": rules, "a": a, "b": b, "pairs": pairs,
                    "seeds": [spans[0][0], spans[-1][1] - 1], "chunks": len(chunks),
                    "a_score": _rate(as_mrx + as_det, 2 * pairs),
                    "a_as_mrx": _rate(as_mrx, pairs), "a_as_detectives": _rate(as_det, pairs),
                    "cpu_seconds": round(sum(c["seconds"] for c in chunks), 1)})
    return out


def main() -> None:
    """Read JSON lines from the files (or stdin), print one line per pairing."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    texts = [Path(name).read_text(encoding="utf-8") for name in args.files] \
        if args.files else [sys.stdin.read()]
    rows = [json.loads(line) for text in texts for line in text.splitlines()
            if line.strip().startswith("{")]
    for summary in combine(rows):
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
