"""grid5 experiment: `hider` whose first hidden move after a reveal is chosen against
*simulated* MCTS detectives (issue 14, the MCTS gap).

    nice -n 15 .venv/bin/python bench/grid5_mrx_simulated.py --games 300 --seed 900000 \\
        --samples 6 --workers 2

At his first hidden move after a reveal (when a detective could step onto one of his
destinations) the bot runs the tuned MCTS detectives themselves on the public position
after his move — ``samples`` times, each with a fresh seed from its own generator: detective
1's move, then detective 2's on the set left if detective 1 missed — and takes the move
with the highest (1 − share of samples that step onto it) × (its searched value given a
miss); every other move is plain ``hider``. The simulated detectives see only what the real
ones see (the possible set after his move is the same whichever hidden move he makes).
Prints one JSON line: Mister X's and the detectives' win rates with 95% Wilson intervals.
It is an experiment, not a registered bot: it costs ~1 CPU-s more per game.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from multiprocessing import Pool

from bots.arena import play_game
from bots.base import Bot
from bots.hider import HiderBot
from bots.registry import bot_from_spec
from game import Move, MrXView, State, View, from_text, load_ruleset
from game.belief import after_mrx_move
from game.outcome import Winner
from ratings.stats import wilson_interval

DETECTIVES = "mcts:profile=tuned,iterations=1000,time=0"


class SimulatedGuessHider(HiderBot):
    """``hider`` with the first hidden move after a reveal played against simulated MCTS."""

    def __init__(self, seed: int | None = None, *, samples: int = 6) -> None:
        super().__init__(seed)
        self.samples = samples
        self.sim: Bot = bot_from_spec(DETECTIVES)

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        base = super().choose(view, legal)
        assert isinstance(view, MrXView) and self._tb is not None
        k, dets = len(view.log), tuple(view.detectives)
        if (len(legal) > 1 and len(dets) == 2 and k in view.rules.reveal_moves
                and any(self._tb.dist[m.to][d] == 1 for m in legal for d in dets)):
            return self._simulated(view, legal, k, dets, base)
        return base

    def _simulated(self, view: MrXView, legal: Sequence[Move], k: int,
                   dets: tuple[int, ...], base: Move) -> Move:
        rules = view.rules
        after = after_mrx_move(rules, view.possible, legal[0], k, dets)
        log = ",".join(f"taxi:{e.station or view.mrx}" for e in view.log)

        def position(mrx: int, d1: int, possible: frozenset[int], turn: str) -> State:
            listed = ".".join(map(str, sorted(possible)))
            return from_text(f"rules={rules.name} turn={turn} mrx={mrx} det={d1},{dets[1]} "
                             f"log={log},taxi:{mrx} possible={listed}")

        covered: Counter[int] = Counter()
        for _ in range(self.samples):
            self.sim.rng.seed(self.rng.getrandbits(31))
            first = position(min(after), dets[0], after, "d1")
            m1 = self.sim.choose(first.view(1), first.legal_moves())
            hit = {m1.to}
            rest = after - {m1.to}
            if rest:
                second = position(min(rest), m1.to, rest, "d2")
                if second.outcome is None and second.to_move == 2:
                    hit.add(self.sim.choose(second.view(2), second.legal_moves()).to)
            covered.update(hit)
        best, top = base, -1.0
        for move in legal:
            mask = sum(1 << s for s in after_mrx_move(rules, view.possible, move, k, dets))
            missed = self._missed(k + 1, move.to, dets, mask, 0, self.depth, 1.0)
            value = (1.0 - covered[move.to] / self.samples) * missed
            if value > top + 1e-9:
                best, top = move, value
        return best

    def _missed(self, k: int, m: int, dets: tuple[int, ...], mask: int, seat: int,
                depth: int, prob: float) -> float:
        """``hider``'s value of the detectives' replies (its ``_detectives``) given that no
        detective steps onto ``m`` this round (the model's replies renormalised over the
        misses)."""
        if seat >= len(dets):
            return self._mrx(k, m, dets, mask, depth - 1, prob)
        assert self._tb is not None
        here = dets[seat]
        options = [n for n in self._tb.neighbours[here] if n not in dets]
        if not options:
            return self._missed(k, m, dets, mask, seat + 1, depth, prob)
        total = weight = 0.0
        for n, p in self._policy(here, options, dets, mask):
            if n == m:
                continue
            moved = (*dets[:seat], n, *dets[seat + 1:])
            weight += p
            total += p * self._missed(k, m, moved, mask & ~(1 << n), seat + 1, depth, prob * p)
        return total / weight if weight > 0.0 else 0.0


_BOTS: dict[str, Bot] = {}


def _play(args: tuple[int, int]) -> bool:
    seed, samples = args
    if not _BOTS:
        _BOTS["mrx"] = SimulatedGuessHider(samples=samples)
        _BOTS["det"] = bot_from_spec(DETECTIVES)
    result = play_game(load_ruleset("grid5"), _BOTS["mrx"], [_BOTS["det"]], seed)
    return result.outcome.winner is Winner.MRX


def main() -> None:
    """Play the games (game i: seed + i, bots reseeded per game) and print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=900_000)
    parser.add_argument("--samples", type=int, default=6)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    jobs = [(s, args.samples) for s in range(args.seed, args.seed + args.games)]
    with Pool(args.workers) as pool:
        wins = sum(pool.map(_play, jobs, chunksize=5))
    print_result(f"hider+simulated-mcts-guess(samples={args.samples})", wins, args.games,
                 args.seed)


def print_result(mrx: str, wins: int, games: int, seed: int) -> None:
    """The JSON line of a run: Mister X's and the detectives' win rates, 95% intervals."""
    lo, hi = wilson_interval(wins, games)
    print(json.dumps({"mrx": mrx, "detectives": DETECTIVES, "games": games,
                      "seeds": [seed, seed + games - 1],
                      "mrx_win": round(wins / games, 4),
                      "mrx_ci95": [round(lo, 4), round(hi, 4)],
                      "det_win": round(1 - wins / games, 4),
                      "det_ci95": [round(1 - hi, 4), round(1 - lo, 4)]}))


if __name__ == "__main__":
    main()
