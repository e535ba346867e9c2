"""DQN benchmarks (issue 6): targets with 95% Wilson intervals, a grid5 matrix, speed.

    .venv/bin/python bench/dqn.py speed --games 10000
    .venv/bin/python bench/dqn.py grid5 --games 1000
    .venv/bin/python bench/dqn.py graph --rules dash --games 200
    .venv/bin/python bench/dqn.py matrix --games 200
    .venv/bin/python bench/dqn.py weights      # table of the shipped weights files
    .venv/bin/python bench/dqn.py grid5 --games 10000 --cluster auto --jobs 64

Search bots run with small fixed budgets (alphabeta depth=2, mcts iterations=200) so the
numbers do not depend on the machine's speed.

``--cluster ADDRESS`` (``auto``, ``ray://HOST:PORT``, ``local[:N]``; the cluster extra) splits
each pairing's seed range into ``--jobs`` contiguous chunks (default: 4 per CPU of a local
instance, else 64), plays each chunk as a one-CPU Ray task and adds the chunks' counts up:
game ``i`` has seed ``seed + i`` wherever it runs, and bots are reseeded every game, so the
wins, mean moves and terminations equal a run on one machine (only the seconds differ).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The checkout this script is in, not bench/ (whose records.py, server.py and tournament.py
# would shadow those packages): a copy of the repository benchmarks its own code, and
# scripts import each other as ``bench.NAME``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bots.arena import Summary, merge_summaries, play_many, wilson_interval  # noqa: E402
from bots.base import Bot  # noqa: E402
from bots.registry import make_bot  # noqa: E402
from bots.spec import parse_spec, split_spec_list  # noqa: E402
from game import Move, View, YardError, load_ruleset  # noqa: E402

BUDGETS: dict[str, dict[str, Any]] = {
    "alphabeta": {"depth": 2, "time": 0.0},
    "mcts": {"iterations": 200, "time": 0.0},
}


def bot(spec: str, seed: int = 1) -> Bot:
    """A bot from a bot spec, with the benchmark budget unless the spec sets options."""
    parsed = parse_spec(spec)
    return make_bot(parsed.ref, seed, {**BUDGETS.get(parsed.ref, {}), **parsed.option_dict()})


#: ``--cluster`` address (None: play here) and how many seed chunks each pairing gets.
CLUSTER: dict[str, Any] = {"address": None, "jobs": 0}


def chunk(part: tuple[str, str, str, int, int]) -> Summary:
    """Games ``first .. first + count - 1`` of one pairing (a ``--cluster`` Ray task)."""
    rules, mrx, det, first, count = part
    return play_many(rules, bot(mrx), [bot(det)], count, first)


def rate(rules: str, mrx: str, det: str, games: int, seed: int) -> dict[str, Any]:
    """Mister X's win rate (and interval) for one pairing."""
    address = CLUSTER["address"]
    if address is None:
        s = play_many(rules, bot(mrx), [bot(det)], games, seed)
    else:
        from bench.on_cluster import map_on_cluster, seed_chunks

        started = time.perf_counter()
        parts = [(rules, mrx, det, first, count)
                 for first, count in seed_chunks(seed, games, CLUSTER["jobs"])]
        s = merge_summaries(map_on_cluster(address, chunk, parts),
                            seconds=time.perf_counter() - started)
    lo, hi = wilson_interval(s.mrx_wins, games)
    return {"rules": rules, "mrx": mrx, "detectives": det, "games": games,
            "mrx_win": s.mrx_wins / games, "ci95": (lo, hi), "seconds": s.seconds}


def show(row: dict[str, Any]) -> None:
    """Print one pairing: both sides' win rates with the interval."""
    lo, hi = row["ci95"]
    print(f"{row['rules']:8} mrx={row['mrx']:10} det={row['detectives']:10} "
          f"games={row['games']:5}  mrx wins {row['mrx_win']:.3f} [{lo:.3f}, {hi:.3f}]  "
          f"det wins {1 - row['mrx_win']:.3f} [{1 - hi:.3f}, {1 - lo:.3f}]  "
          f"({row['seconds']:.0f}s)", flush=True)


class Timed(Bot):
    """Wraps a bot and accumulates the time spent in :meth:`choose`."""

    def __init__(self, inner: Bot) -> None:
        super().__init__(None)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.seconds = 0.0
        self.calls = 0

    def begin(self, rules: Any, seats: Sequence[int], seed: int | None = None) -> None:
        self.inner.begin(rules, seats, seed)

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        started = time.perf_counter()
        move = self.inner.choose(view, legal)
        self.seconds += time.perf_counter() - started
        self.calls += 1
        return move


def speed(args: argparse.Namespace) -> None:
    """DQN vs random on grid5, both roles: games/s and inference time per move."""
    for role in ("detective", "mrx"):
        dqn = Timed(bot("dqn"))
        mrx, det = (bot("random"), dqn) if role == "detective" else (dqn, bot("random"))
        s = play_many("grid5", mrx, [det], args.games, args.seed)
        print(f"grid5 dqn as {role:9}: {args.games} games in {s.seconds:.1f}s "
              f"({s.games_per_s:.0f} games/s); dqn {dqn.calls} moves, "
              f"{1e6 * dqn.seconds / max(dqn.calls, 1):.1f} µs per move", flush=True)


def grid5(args: argparse.Namespace) -> None:
    """grid5 targets: DQN detectives vs random; Mister X bots against search detectives."""
    show(rate("grid5", "random", "dqn", args.games, args.seed))
    for det in ("alphabeta", "mcts"):
        for mrx in ("random", "run", "run2", "dqn"):
            show(rate("grid5", mrx, det, args.games, args.seed))


def graph(args: argparse.Namespace) -> None:
    """Graph targets: detectives vs the same Mister X; Mister X vs the same detectives."""
    load_ruleset(args.rules)
    for mrx in split_spec_list(args.mrx):
        for det in ("random", "rush", "dqn"):
            show(rate(args.rules, mrx, det, args.games, args.seed))
    for det in split_spec_list(args.detectives):
        for mrx in ("run2", "dqn"):
            show(rate(args.rules, mrx, det, args.games, args.seed))


def matrix(args: argparse.Namespace) -> None:
    """grid5 Mister X win-rate matrix over random, alphabeta, mcts and dqn."""
    names = ["random", "alphabeta", "mcts", "dqn"]
    cells = {(m, d): rate("grid5", m, d, args.games, args.seed) for m in names for d in names}
    print(f"grid5 Mister X win rate, {args.games} games per cell (rows: Mister X, "
          "columns: detectives)")
    print(f"{'':10}" + "".join(f"{d:>20}" for d in names))
    for m in names:
        row = "".join(f"{cells[m, d]['mrx_win']:>7.3f} [{cells[m, d]['ci95'][0]:.2f},"
                      f"{cells[m, d]['ci95'][1]:.2f}]" for d in names)
        print(f"{m:10}{row}")


def _mean_rate(evaluation: dict[str, float]) -> float:
    rates = [v for k, v in evaluation.items() if k != "games"]
    return sum(rates) / max(len(rates), 1)


def weights(args: argparse.Namespace) -> None:
    """Markdown table of the shipped weights, from the training record in each file."""
    from bots.dqn.bot import WEIGHTS_DIR
    from bots.dqn.features import recorded_features
    from bots.dqn.policy import load_weights

    def shown(row: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.2f}" for k, v in row.items() if k != "games") or "-"

    print("| file | size | encoder | games | seed | wall time | shipped: best evaluation "
          "(at game) | last command |")
    print("|---|---|---|---|---|---|---|---|")
    for path in sorted(WEIGHTS_DIR.glob("*.npz")):
        meta, _ = load_weights(path)
        t = meta["training"]
        # Files from before "shipped_eval" existed: --keep-best shipped the best mean
        # (the latest among equals).
        best = t.get("shipped_eval") or max(reversed(t["evals"]), key=_mean_rate, default={})
        at = f" (at {best['games']})" if best else ""
        encoder = recorded_features(meta) or "graph"
        print(f"| `{path.name}` | {path.stat().st_size // 1024} KB | {encoder} | {t['games']} "
              f"| {t['seed']} | {t['seconds']:.0f} s | {shown(best)}{at} | `{t['command']}` |")


def main() -> None:
    """Parse the command line and run one benchmark."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=["speed", "grid5", "graph", "matrix", "weights"])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="dash", help="graph ruleset (graph benchmark)")
    parser.add_argument("--mrx", default="random,run2", help="Mister X bot specs (graph)")
    parser.add_argument("--detectives", default="random,rush", help="detective bot specs (graph)")
    parser.add_argument("--cluster", default=None, metavar="ADDRESS",
                        help="play each pairing's seed chunks on Ray: auto, ray://HOST:PORT "
                             "or local[:N] (grid5, graph, matrix)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="with --cluster: seed chunks per pairing (default: 4 per CPU "
                             "of local:N, else 64)")
    args = parser.parse_args()
    from bench.on_cluster import local_cpus, session

    if args.cluster is not None:
        if args.which in ("speed", "weights"):
            parser.error(f"--cluster: {args.which} runs on one machine")
        try:
            cpus = local_cpus(args.cluster)
        except YardError as exc:
            parser.error(str(exc))
        CLUSTER.update(address=args.cluster, jobs=args.jobs or (4 * cpus if cpus else 64))

    with session(args.cluster):
        {"speed": speed, "grid5": grid5, "graph": graph, "matrix": matrix,
         "weights": weights}[args.which](args)


if __name__ == "__main__":
    main()
