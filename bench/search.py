"""Search-bot speed: kernel playouts/s, and per bot the mean time and iterations per move.

    .venv/bin/python bench/search.py --rules classic --positions 20 --time 1.0

Positions are random (seeded) positions of the ruleset; each bot moves once in each, for
whichever seat is to move. MCTS iterations are playouts (one per iteration); Alpha-Beta
reports searched nodes instead.
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


def bot_speed(label: str, bot: Bot, states: list[State]) -> dict[str, object]:
    """Mean seconds and mean iterations (or nodes) per move over ``states``."""
    seconds: list[float] = []
    work: list[int] = []
    for state in states:
        started = time.perf_counter()
        bot.choose(state.view(state.to_move), state.legal_moves())
        seconds.append(time.perf_counter() - started)
        work.append(bot.last_iterations if isinstance(bot, MctsBot)
                    else getattr(bot, "nodes", 0))
    return {"bot": label, "moves": len(states), "mean_s_per_move": statistics.mean(seconds),
            "max_s_per_move": max(seconds), "mean_work_per_move": statistics.mean(work),
            "work_per_s": sum(work) / sum(seconds)}


def main() -> None:
    """Parse arguments, run, print one JSON object per line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="classic")
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--time", type=float, default=1.0)
    parser.add_argument("--playouts", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for eps, filt in ((1.0, False), (0.2, True)):
        rate = kernel_rate(args.rules, args.playouts, eps, filt)
        print(json.dumps({"kernel": args.rules, "epsilon": eps, "filter": filt,
                          "playouts_per_s": round(rate)}))
    states = positions(args.rules, args.positions, args.seed)
    MctsBot(seed=0, iterations=64).choose(states[0].view(states[0].to_move),
                                          states[0].legal_moves())  # load compiled code
    bots: list[tuple[str, Bot]] = [
        ("mcts profile=baseline", MctsBot(seed=1, time=args.time)),
        ("mcts profile=tuned", MctsBot(seed=1, time=args.time, profile="tuned")),
        ("alphabeta", AlphaBetaBot(seed=1, time=args.time)),
    ]
    for label, bot in bots:
        print(json.dumps({"rules": args.rules, "time": args.time,
                          **bot_speed(label, bot, states)}))


if __name__ == "__main__":
    main()
