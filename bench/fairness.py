"""Fair compute in tournaments: mean MCTS playouts per move, pooled vs lone vs shared.

Plays a time-limited ``mcts`` in self-play (``--bots mcts --self-play``) three ways, over
the full stack (server + bot processes + SQLite), and prints the mean playouts per move of
each bot process from the tournament's ``--json`` ``compute``:

- pooled: ``--concurrency 2`` with the runner's pool: each game slot has its own ``mcts``
  process (instances 1 and 2), the two copies that must get the same compute;
- lone: ``--concurrency 1``, one game at a time (the reference);
- shared: the old model, for contrast: one ``yard bot mcts`` process started by hand
  plays both concurrent games (``--server``, ``--concurrency 2``), its moves computed in
  threads of one interpreter.

The same tournament seed gives the same start positions in every run. The machine's load
average is printed before and after: on a shared machine the numbers move with it.

    .venv/bin/python bench/fairness.py --rules grid5 --time 0.2 --pairs 6 --repeat 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The checkout this script is in, not bench/ (whose records.py, server.py and tournament.py
# would shadow those packages): a copy of the repository benchmarks its own code, and
# scripts import each other as ``bench.NAME``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from db.store import Database  # noqa: E402
from records import ComputeRow  # noqa: E402

YARD = [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])"]

Totals = dict[str, ComputeRow]  # label -> summed compute of mcts


def tournament(args: argparse.Namespace, db: str, *extra: str) -> list[ComputeRow]:
    """One ``yard tournament run``; returns the stored compute of ``mcts`` per process."""
    done = subprocess.run(
        [*YARD, "tournament", "run", "--rules", args.rules, "--bots", "mcts", "--self-play",
         "--pairs", str(args.pairs), "--seed", str(args.seed), "--move-time",
         str(max(5.0, 10 * args.time)), "--bot-option", f"mcts:time={args.time}",
         "--db", db, "--json", *extra], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"tournament failed:\n{done.stderr[-2000:]}")
    for line in done.stderr.splitlines():
        if line.startswith("warning:"):
            print(f"  ({line})")
    tid = json.loads(done.stdout)["tournament_id"]
    with Database.connect(db) as store:
        return [row for row in store.compute(tid) if row.bot == "mcts"]


def shared(args: argparse.Namespace, db: str) -> list[ComputeRow]:
    """The old model: one mcts process for both concurrent games, on our own server."""
    server = subprocess.Popen([*YARD, "serve", "--port", "0", "--db", db],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().split()[-1]
    bot = subprocess.Popen([*YARD, "bot", "mcts", "--url", url, "--option",
                            f"time={args.time}"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        assert bot.stdout is not None and bot.stdout.readline().startswith("connected")
        return tournament(args, db, "--server", url, "--concurrency", "2")
    finally:
        for proc in (bot, server):
            proc.terminate()
            proc.wait(timeout=60)


def add(totals: Totals, label: str, rows: list[ComputeRow]) -> None:
    total = totals.setdefault(label, ComputeRow("mcts", label))
    for row in rows:
        total.moves += row.moves
        total.time_s += row.time_s
        total.playouts += row.playouts
        total.playout_moves += row.playout_moves


def mean(row: ComputeRow) -> float:
    return row.playouts / max(1, row.playout_moves)


def line(label: str, row: ComputeRow, reference: float | None) -> None:
    ratio = f"  {mean(row) / reference:5.3f} of lone" if reference else ""
    print(f"{label:<28} {row.playout_moves:>5} searched moves {mean(row):>10,.0f} "
          f"playouts/move  {row.time_s / max(1, row.moves):.3f} s/move{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="grid5")
    parser.add_argument("--time", type=float, default=0.2, help="mcts seconds per move")
    parser.add_argument("--pairs", type=int, default=6, help="self-play games per run")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate the pooled and lone runs this many times (seeds "
                        "SEED, SEED+1, ...), averaging over a changing machine load")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-shared", action="store_true", help="skip the old-model run")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"rules {args.rules}, mcts time={args.time}s, {args.pairs} self-play games per run "
          f"x {args.repeat}, {cores} cores, load average before {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    totals: Totals = {}
    base_seed = args.seed
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeat):
            args.seed = base_seed + run
            for row in tournament(args, f"sqlite:///{Path(tmp) / f'pooled{run}.db'}",
                                  "--concurrency", "2"):
                add(totals, f"copy {row.instance}", [row])
            add(totals, "lone", tournament(args, f"sqlite:///{Path(tmp) / f'lone{run}.db'}",
                                           "--concurrency", "1"))
        if not args.no_shared:
            args.seed = base_seed
            add(totals, "shared", shared(args, f"sqlite:///{Path(tmp) / 'shared.db'}"))
    reference = mean(totals["lone"])
    line("lone game (--concurrency 1)", totals["lone"], None)
    copies = sorted(label for label in totals if label.startswith("copy"))
    for label in copies:
        line(f"pooled, {label} (slot {label[5:]})", totals[label], reference)
    if len(copies) == 2:
        print(f"copy 1 / copy 2: {mean(totals[copies[0]]) / mean(totals[copies[1]]):5.3f}")
    if "shared" in totals:
        line("shared process (old model)", totals["shared"], reference)
    print(f"load average after {os.getloadavg()[0]:.2f}; "
          f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
