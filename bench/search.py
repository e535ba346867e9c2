"""Search-bot speed: kernel playouts/s, and per bot the mean time and iterations per move.

    .venv/bin/python bench/search.py --rules classic --positions 20 --time 1.0
    .venv/bin/python bench/search.py --rules grid5 --positions 6 --time 1.0 --bots alphabeta

Positions are random (seeded) positions of the ruleset; each bot moves once in each, for
whichever seat is to move, the bots taking turns position by position (so a change in the
machine's load hits them alike). MCTS iterations are playouts (one per iteration);
Alpha-Beta reports searched nodes and the mean depth reached instead. A last line gives
Alpha-Beta's nodes/s on the kernel over the reference's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from bots.alphabeta import AlphaBetaBot
from bots.base import Bot
from bots.mcts import kernel
from bots.mcts.bot import MctsBot
from bots.mcts.compact import compact_state
from game import State, load_ruleset, new_game


def positions(rules_name: str, count: int, seed: int) -> list[State]:
    """``count`` random unfinished positions (a seeded number of random plies)."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        state = new_game(rules_name, rng.getrandbits(32))
        for _ in range(rng.randrange(0, 60)):
            nxt = state.apply_unchecked(rng.choice(state.legal_moves()))
            if nxt.outcome is not None:
                break
            state = nxt
        out.append(state)
    return out


def kernel_rate(rules_name: str, playouts: int, epsilon: float, filtering: bool) -> float:
    """Raw playouts per second of the compiled kernel from the start position."""
    rules = load_ruleset(rules_name)
    tb = kernel.tables_for(rules)
    st = compact_state(new_game(rules, 1))
    kernel.random_playouts(tb, st, 10, epsilon, filtering, 1)  # load / compile
    started = time.perf_counter()
    kernel.random_playouts(tb, st, playouts, epsilon, filtering, 2)
    return playouts / (time.perf_counter() - started)


def bot_speeds(bots: list[tuple[str, Bot]], states: list[State]) -> list[dict[str, object]]:
    """Per bot: mean seconds and mean iterations (or nodes) per move over ``states``, and
    for Alpha-Beta the mean depth reached. The bots take turns at each position."""
    seconds: dict[str, list[float]] = {label: [] for label, _ in bots}
    work: dict[str, list[int]] = {label: [] for label, _ in bots}
    depths: dict[str, list[int]] = {label: [] for label, _ in bots}
    for state in states:
        for label, bot in bots:
            started = time.perf_counter()
            bot.choose(state.view(state.to_move), state.legal_moves())
            seconds[label].append(time.perf_counter() - started)
            work[label].append(bot.last_iterations if isinstance(bot, MctsBot)
                               else getattr(bot, "nodes", 0))
            if isinstance(bot, AlphaBetaBot):
                depths[label].append(bot.reached_depth)
    rows: list[dict[str, object]] = []
    for label, _ in bots:
        row: dict[str, object] = {
            "bot": label, "moves": len(states),
            "mean_s_per_move": statistics.mean(seconds[label]),
            "max_s_per_move": max(seconds[label]),
            "mean_work_per_move": statistics.mean(work[label]),
            "work_per_s": sum(work[label]) / sum(seconds[label])}
        if depths[label]:
            row["mean_depth"] = statistics.mean(depths[label])
        rows.append(row)
    return rows


def load_compiled(bots: list[tuple[str, Bot]], states: list[State]) -> None:
    """Load (or compile) the numba code of the compiled searches among ``bots`` before
    timing."""
    state = states[0]
    view, legal = state.view(state.to_move), state.legal_moves()
    if any(isinstance(bot, MctsBot) for _, bot in bots):
        MctsBot(seed=0, iterations=64).choose(view, legal)
    for _, bot in bots:
        if isinstance(bot, AlphaBetaBot):
            bot.new_game(state.rules, [state.to_move])  # as a runner does before a game


def main() -> None:
    """Parse arguments, run, print one JSON object per line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="classic")
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--time", type=float, default=1.0)
    parser.add_argument("--playouts", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", default="",
                        help="only the bots whose label contains this (e.g. alphabeta)")
    args = parser.parse_args()
    for eps, filt in ((1.0, False), (0.2, True)):
        rate = kernel_rate(args.rules, args.playouts, eps, filt)
        print(json.dumps({"kernel": args.rules, "epsilon": eps, "filter": filt,
                          "playouts_per_s": round(rate)}))
    states = positions(args.rules, args.positions, args.seed)
    bots: list[tuple[str, Bot]] = [
        ("mcts profile=baseline", MctsBot(seed=1, time=args.time)),
        ("mcts profile=tuned", MctsBot(seed=1, time=args.time, profile="tuned")),
        ("alphabeta profile=reference",
         AlphaBetaBot(seed=1, time=args.time, profile="reference")),
        ("alphabeta profile=kernel", AlphaBetaBot(seed=1, time=args.time, profile="kernel")),
    ]
    chosen = [(label, bot) for label, bot in bots if args.bots in label]
    load_compiled(chosen, states)
    rows = bot_speeds(chosen, states)
    for row in rows:
        print(json.dumps({"rules": args.rules, "time": args.time, **row}))
    speed = {str(row["bot"]): float(str(row["work_per_s"])) for row in rows}
    reference, compiled = speed.get("alphabeta profile=reference"), \
        speed.get("alphabeta profile=kernel")
    if reference and compiled:
        print(json.dumps({"rules": args.rules, "time": args.time,
                          "alphabeta_nodes_per_s_kernel_over_reference":
                          round(compiled / reference, 1)}))


if __name__ == "__main__":
    main()
