"""grid5 experiment: `hider` whose *revealed* moves are chosen by rollouts against simulated
MCTS detectives (issue 14, the MCTS gap).

    nice -n 15 .venv/bin/python bench/grid5_mrx_rollout.py --games 300 --seed 900000 \\
        --samples 4 --sim-iterations 300 --workers 2

The diagnosis in docs/reproductions.md: most of `hider`'s losses to the tuned MCTS
detectives are decided by where he stands when he is revealed — from some stations the two
detectives cover every exit, whatever he does next. So at each move that will be revealed,
this bot plays every legal move ``samples`` times forward to just before his next revealed
move: the tuned MCTS detectives (at ``--sim-iterations``) move for the detectives,
``hider:depth=2`` for him. A move's value is the share of those rollouts he survives; ties
go to plain `hider`'s choice. Every other move is plain ``hider`` (with ``--all-moves``,
every move is chosen by rollouts). The simulated detectives see
only what the real ones would (their view of the true position). Prints one JSON line with
Mister X's and the detectives' win rates and 95% Wilson intervals. An experiment, not a
registered bot (it costs seconds per game).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path

# The checkout this script is in, not bench/ (whose records.py, server.py and tournament.py
# would shadow those packages): a copy of the repository benchmarks its own code, and
# scripts import each other as ``bench.NAME``.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bench.grid5_mrx_simulated import DETECTIVES, print_result  # noqa: E402
from bots.arena import play_game  # noqa: E402
from bots.base import Bot  # noqa: E402
from bots.hider import HiderBot  # noqa: E402
from bots.registry import bot_from_spec  # noqa: E402
from game import Move, MrXView, State, View, from_text, load_ruleset  # noqa: E402
from game.belief import after_mrx_move  # noqa: E402
from game.outcome import Winner  # noqa: E402


class RolloutHider(HiderBot):
    """``hider`` whose revealed moves are chosen by rollouts against simulated detectives."""

    def __init__(self, seed: int | None = None, *, samples: int = 4,
                 sim_iterations: int = 300, rollout_depth: int = 2,
                 all_moves: bool = False) -> None:
        super().__init__(seed)
        self.samples = samples
        self.all_moves = all_moves
        self.sim: Bot = bot_from_spec(
            f"mcts:profile=tuned,iterations={sim_iterations},time=0")
        self.inner = HiderBot(depth=rollout_depth)

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        base = super().choose(view, legal)
        assert isinstance(view, MrXView)
        k = len(view.log)
        revealed = k + 1 in view.rules.reveal_moves
        if len(legal) > 1 and (revealed or self.all_moves) and k + 1 < view.rules.max_moves:
            return self._rollouts(view, legal, k, base)
        return base

    def _start(self, view: MrXView, move: Move, k: int) -> State:
        rules, dets = view.rules, tuple(view.detectives)
        after = after_mrx_move(rules, view.possible, move, k, dets)
        log = ",".join(f"taxi:{e.station or view.mrx}" for e in view.log)
        log = f"{log},taxi:{move.to}" if log else f"taxi:{move.to}"
        listed = ".".join(map(str, sorted(after)))
        det = ",".join(map(str, dets))
        return from_text(f"rules={rules.name} turn=d1 mrx={move.to} det={det} log={log} "
                         f"possible={listed}")

    def _survives(self, state: State, reveals: frozenset[int]) -> bool:
        start_k = len(state.log)
        while state.outcome is None:
            seat = state.to_move
            if seat == 0:
                if len(state.log) + 1 in reveals and len(state.log) > start_k:
                    return True  # reached his next revealed move
                view = state.view(0)
                move = self.inner.choose(view, state.legal_moves())
            else:
                move = self.sim.choose(state.view(seat), state.legal_moves())
            state = state.apply(move)
        return state.outcome.winner is Winner.MRX

    def _rollouts(self, view: MrXView, legal: Sequence[Move], k: int, base: Move) -> Move:
        best, top = base, -1.0
        for move in legal:
            start = self._start(view, move, k)
            wins = 0
            for _ in range(self.samples):
                self.sim.rng.seed(self.rng.getrandbits(31))
                self.inner.rng.seed(self.rng.getrandbits(31))
                wins += self._survives(start, view.rules.reveal_moves)
            value = wins / self.samples + (1e-6 if move == base else 0.0)
            if value > top:
                best, top = move, value
        return best


_BOTS: dict[str, Bot] = {}


def _play(args: tuple[int, int, int, bool]) -> bool:
    seed, samples, iterations, all_moves = args
    if not _BOTS:
        _BOTS["mrx"] = RolloutHider(samples=samples, sim_iterations=iterations,
                                    all_moves=all_moves)
        _BOTS["det"] = bot_from_spec(DETECTIVES)
    result = play_game(load_ruleset("grid5"), _BOTS["mrx"], [_BOTS["det"]], seed)
    return result.outcome.winner is Winner.MRX


def main() -> None:
    """Play the games (game i: seed + i, bots reseeded per game) and print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=900_000)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--sim-iterations", type=int, default=300)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--all-moves", action="store_true",
                        help="rollouts at every move (horizon: his next revealed move)")
    args = parser.parse_args()
    jobs = [(s, args.samples, args.sim_iterations, args.all_moves)
            for s in range(args.seed, args.seed + args.games)]
    with Pool(args.workers) as pool:
        wins = sum(pool.map(_play, jobs, chunksize=5))
    print_result(f"hider+rollouts(samples={args.samples}, sim_iterations="
                 f"{args.sim_iterations}, all_moves={args.all_moves})", wins, args.games,
                 args.seed)


if __name__ == "__main__":
    main()
