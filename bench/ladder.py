"""Ladder matchmaking against a plain round robin: how fast each orders bots of known
strength (issue 26).

    .venv/bin/python bench/ladder.py --mode model --bots 20 --games 1500 --seeds 40 --jobs 2
    .venv/bin/python bench/ladder.py --mode games --bots 20 --games 2000 --seeds 4
    .venv/bin/python bench/ladder.py --mode truth --bots 20 --pairs 60   # once: the cache

Two ways to play the same N games among ``--bots`` players, then the rank correlation
(Spearman) between ratings and true strength after every ``--every`` games:

* **ladder**: :class:`server.ladder.Ladder` driven as the server's core drives it: every
  bot connected with ``--max-games`` slots, ``propose(free, now)`` whenever a game ends,
  each proposed game played (or drawn) at once and finished after its duration on a
  simulated clock, ``result(...)`` reported as games finish. Rated by the ladder's own
  :class:`ratings.live.LiveRatings` (``mu``) - ``ladder`` - and, on the same games, by the
  offline maximum-likelihood Elo :func:`ratings.elo.fit_elo` - ``ladder-elo``.
* **round robin**: every pair of players in role-swapped pairs, in the interleaved order of
  :func:`tournament.schedule.make_schedule` (pair 0 of every matchup, then pair 1, ...),
  ``fresh-mrx`` deals, rated in play order with the same LiveRatings - ``rr`` - and by
  ML Elo - ``rr-elo``.

Modes:

* ``model``: outcomes drawn from a Bradley-Terry (Elo) model: bot i has ``i * --spacing``
  Elo, Mister X wins with probability ``1 / (1 + 10^(-(R_mrx - R_det + A) / 400))``,
  ``A = --advantage``; game durations uniform in [0.5, 1.5]. True strength: the model's
  ratings. Thousands of games per second, so many seeds and tight intervals.
* ``games``: real in-process games (:func:`bots.arena.play_game`) on ``--rules`` (grid5):
  ``tests/data/blunder_bot.py:Blunder`` (worse than random) and ``greedy`` with a thinking
  budget ``b = k / (N - 2)``, k = 0 .. N - 2: each move is greedy's with probability ``b``,
  else a uniformly random legal move (b = 0 is ``random``, b = 1 is ``greedy``). MCTS
  at different iteration budgets was not usable: see bench/RESULTS.md. True strength: the
  ML Elo of a long round robin (``--mode truth``, other seeds) cached in
  ``bench/data/ladder_truth.json``; its Spearman with the budget order is printed.
  Durations: the game's number of moves.
* ``truth``: play that long round robin (``--pairs`` pairs per matchup) and write the cache.

``reach`` is the number of games after which a series first reaches a correlation of 0.8,
0.9 (at the checkpoint granularity), mean over the seeds that reached it with a 95%
interval (normal, over seeds), and the per-seed ratio ladder / round robin. The ladder's
fairness is summarised too: games per bot, games per pair, and the mean gap in true rank
between the two bots of a game (a round robin: (n + 1) / 3). Seeds: ``--seed`` + s for
s < ``--seeds``, each seeding the ladder's random source, the model's draws and the deals.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import math
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# bench/tournament.py would shadow the tournament package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]
# The ML Elo fits are tiny: a threaded BLAS makes them 10x slower on shared cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from bots.arena import play_game  # noqa: E402
from bots.base import Bot  # noqa: E402
from bots.registry import make_bot  # noqa: E402
from game import Move, Ruleset, Termination, Winner, load_ruleset, new_game  # noqa: E402
from game.views import View  # noqa: E402
from ratings.elo import fit_elo  # noqa: E402
from ratings.live import LiveRatings  # noqa: E402
from ratings.outcomes import GameOutcome  # noqa: E402
from server.ladder import Ladder, Result  # noqa: E402
from tournament.schedule import Format, Pairing, make_schedule  # noqa: E402

if TYPE_CHECKING:
    from ratings.leaderboard import LeaderboardRow

ROOT = Path(__file__).resolve().parent.parent
TRUTH_FILE = ROOT / "bench" / "data" / "ladder_truth.json"
BLUNDER = f"{ROOT / 'tests' / 'data' / 'blunder_bot.py'}:Blunder"
SERIES = ("ladder", "ladder-elo", "rr", "rr-elo")
THRESHOLDS = (0.8, 0.9, 0.95)

#: One game: (Mister X, detectives, seed, Mister X's seed) -> (Mister X won, duration).
Play = Callable[[str, str, int | None, int | None], tuple[bool, float]]


# ---------------------------------------------------------------------- statistics

def ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n of ``values`` (ties share their mean rank)."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    out = np.empty(x.size)
    sorted_x = x[order]
    i = 0
    while i < x.size:
        j = i
        while j + 1 < x.size and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        out[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (0 when either side is constant)."""
    ra, rb = ranks(a), ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denom = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return float(ra @ rb) / denom if denom > 0 else 0.0


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and its normal 95% interval (the interval is the mean when n < 2)."""
    if not values:
        return math.nan, math.nan, math.nan
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else 0.0
    return mean, mean - half, mean + half


# ---------------------------------------------------------------------- players

class Budgeted(Bot):
    """``base``'s move with probability ``budget``, else a uniformly random legal move
    (``base`` ``None``: always random)."""

    name = "budgeted"

    def __init__(self, base: Bot | None, budget: float, seed: int | None = None) -> None:
        super().__init__(seed)
        self.base = base
        self.budget = budget

    def new_game(self, rules: Ruleset, seats: Sequence[int]) -> None:
        if self.base is not None:
            self.base.begin(rules, seats, self.rng.randrange(2**63))

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        if self.base is not None and self.rng.random() < self.budget:
            return self.base.choose(view, legal)
        return self.rng.choice(list(legal))


def game_players(n: int) -> list[str]:
    """The ``games`` mode's players, weakest first: ``blunder``, then ``greedy@B`` for
    budgets ``k / (n - 2)``."""
    if n < 3:
        raise SystemExit("--bots must be at least 3 in games mode")
    return ["blunder", *(f"greedy@{k / (n - 2):.3f}" for k in range(n - 1))]


def make_player(name: str) -> Bot:
    """The bot of a ``games`` mode player name."""
    if name == "blunder":
        return make_bot(BLUNDER)
    budget = float(name.split("@")[1])
    return Budgeted(make_bot("greedy") if budget > 0 else None, budget)


def game_play(rules: Ruleset, players: Sequence[str]) -> Play:
    """Real games between ``players`` (one bot per player and role, reseeded per game)."""
    mrx_bots = {p: make_player(p) for p in players}
    det_bots = {p: make_player(p) for p in players}

    def play(mrx: str, det: str, seed: int | None, mrx_seed: int | None) -> tuple[bool, float]:
        start = new_game(rules, seed, mrx_seed=mrx_seed)
        result = play_game(rules, mrx_bots[mrx], [det_bots[det]], seed=seed, start=start)
        return result.mrx_won, float(result.final.move_number)

    return play


def model_play(elo: dict[str, float], advantage: float, rng: random.Random) -> Play:
    """Outcomes from the Elo model with Mister X advantage ``advantage``."""
    def play(mrx: str, det: str, seed: int | None, mrx_seed: int | None) -> tuple[bool, float]:
        p = 1.0 / (1.0 + 10.0 ** (-(elo[mrx] - elo[det] + advantage) / 400.0))
        return rng.random() < p, rng.uniform(0.5, 1.5)

    return play


# ---------------------------------------------------------------------- runs

@dataclass
class Run:
    """One seed's correlations at the checkpoints, and the games played (ladder)."""

    corr: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERIES})
    ladder_games: list[tuple[str, str]] = field(default_factory=list)


class Rater:
    """Games in play order, rated live and (at checkpoints) by ML Elo."""

    def __init__(self, rules: str, players: Sequence[str], truth: Sequence[float]) -> None:
        self.rules = rules
        self.players = list(players)
        self.truth = list(truth)
        self.live = LiveRatings()
        self.outcomes: list[GameOutcome] = []

    def add(self, mrx: str, det: str, mrx_won: bool, live: bool = True) -> None:
        if live:
            self.live.record(mrx, det, mrx_won)
        self.outcomes.append(GameOutcome(mrx, det, mrx_won, None, self.rules))

    def correlation(self, live: LiveRatings) -> float:
        return spearman([live.rating(p).mu for p in self.players], self.truth)

    def elo_correlation(self) -> float:
        fit = fit_elo(self.outcomes, anchor="mean")
        return spearman([fit.ratings.get(p, 0.0) for p in self.players], self.truth)


def run_ladder(rules: str, players: Sequence[str], truth: Sequence[float], play: Play,
               games: int, every: int, seed: int, max_games: int, placement: int,
               run: Run) -> None:
    """Drive :class:`Ladder` for ``games`` finished games on a simulated clock."""
    ladder = Ladder([rules], placement=placement, rng=random.Random(seed))
    for name in players:
        ladder.join(name, [rules])
    rater = Rater(rules, players, truth)
    busy: Counter[str] = Counter()
    running: list[tuple[float, int, str, str, bool]] = []
    order = itertools.count()
    now = 0.0

    def start() -> None:
        free = {p: max_games - busy[p] for p in players}
        for game in ladder.propose(free, now):
            mrx_won, duration = play(game.mrx, game.detective, game.seed, game.mrx_seed)
            busy[game.mrx] += 1
            busy[game.detective] += 1
            heapq.heappush(running, (now + duration, next(order), game.mrx, game.detective,
                                     mrx_won))

    start()
    done = 0
    while done < games:
        if not running:
            raise SystemExit(f"the ladder proposed nothing after {done} games")
        now, _, mrx, det, mrx_won = heapq.heappop(running)
        busy[mrx] -= 1
        busy[det] -= 1
        winner = Winner.MRX if mrx_won else Winner.DETECTIVES
        termination = Termination.SURVIVED if mrx_won else Termination.CAUGHT
        ladder.result(Result(rules, mrx, det, winner, termination), now)
        rater.add(mrx, det, mrx_won, live=False)
        run.ladder_games.append((mrx, det))
        done += 1
        if done % every == 0:
            run.corr["ladder"].append(rater.correlation(ladder.ratings[rules]))
            run.corr["ladder-elo"].append(rater.elo_correlation())
        start()


def run_round_robin(rules: str, players: Sequence[str], truth: Sequence[float], play: Play,
                    games: int, every: int, seed: int, run: Run) -> None:
    """The first ``games`` games of a round robin in schedule order."""
    matchups = len(players) * (len(players) - 1) // 2
    pairs = -(-games // (2 * matchups))
    schedule = make_schedule(list(players), pairs, seed, Format.ROUND_ROBIN,
                             pairing=Pairing.FRESH_MRX)
    rater = Rater(rules, players, truth)
    for done, entry in enumerate(schedule[:games], 1):
        mrx_won, _ = play(entry.mrx, entry.detectives, entry.seed, entry.mrx_seed)
        rater.add(entry.mrx, entry.detectives, mrx_won)
        if done % every == 0:
            run.corr["rr"].append(rater.correlation(rater.live))
            run.corr["rr-elo"].append(rater.elo_correlation())


@dataclass(frozen=True)
class Config:
    """What every seed's run shares."""

    mode: str
    rules: str
    players: tuple[str, ...]
    truth: tuple[float, ...]
    games: int
    every: int
    max_games: int
    placement: int
    advantage: float


def one_seed(config: Config, seed: int) -> Run:
    """The ladder and the round robin of one seed (the two play apart: own draws)."""
    run = Run()
    players, truth = list(config.players), list(config.truth)
    rules = None if config.mode == "model" else load_ruleset(config.rules)
    for which in ("ladder", "rr"):
        rng = random.Random(seed * 2 + (which == "rr"))
        play = (game_play(rules, players) if rules is not None
                else model_play(dict(zip(players, truth, strict=True)), config.advantage, rng))
        if which == "ladder":
            run_ladder(config.rules, players, truth, play, config.games, config.every, seed,
                       config.max_games, config.placement, run)
        else:
            run_round_robin(config.rules, players, truth, play, config.games, config.every,
                            seed, run)
    return run


# ---------------------------------------------------------------------- settle (issue 40.3)

#: The settle mode's bots and their true Elo: three within 45 Elo, as the house bots were.
SETTLE_ELO = "random=-400,cautious=-150,greedy=0,mcts:300=20,alphabeta=45"
#: The page orders compared: today's OpenSkill ordinal (``openskill``), OpenSkill by mean,
#: OpenSkill with smaller drifts, and the full-history fit the page now shows, refreshed
#: at the ladder's rate (``history``) or at every poll (``history-fresh``).
SETTLE_TAUS = (0.02, 0.005)


@dataclass
class SettleRun:
    """One seed's polls: per candidate order, agreement counts and churn."""

    polls: int = 0
    after_polls: int = 0
    los_pairs: Counter[str] = field(default_factory=Counter)
    pair_agree: Counter[str] = field(default_factory=Counter)
    los_polls: int = 0
    poll_agree: Counter[str] = field(default_factory=Counter)
    all_polls: int = 0
    full_agree: Counter[str] = field(default_factory=Counter)
    changes: Counter[str] = field(default_factory=Counter)
    changes_after: Counter[str] = field(default_factory=Counter)
    best_first: Counter[str] = field(default_factory=Counter)
    refits: int = 0
    board_seconds: float = 0.0


@dataclass(frozen=True)
class SettleConfig:
    """What every seed of the settle mode shares."""

    elo: tuple[tuple[str, float], ...]
    games: int
    every: int
    after: int
    max_games: int
    placement: int
    advantage: float
    refresh_s: float
    samples: int


def parse_elo(text: str) -> tuple[tuple[str, float], ...]:
    """``name=elo,...`` as pairs."""
    pairs = [item.rsplit("=", 1) for item in text.split(",") if item]
    return tuple((name, float(value)) for name, value in pairs)


def settle_seed(config: SettleConfig, seed: int) -> SettleRun:
    """A model ladder of ``config.games`` games; at every ``config.every``-th the page's
    order (and the other candidates') and, from ``config.after`` games on, the offline
    leaderboard (ML Elo, bootstrap LOS of neighbours) on the games so far."""
    from ratings.leaderboard import leaderboard
    from ratings.ranking import Ranking

    rules = "model"
    elo = dict(config.elo)
    players = list(elo)
    best = max(players, key=elo.__getitem__)
    play = model_play(elo, config.advantage, random.Random(seed * 2))
    ladder = _settle_ladder(config, seed, rules, players)
    drifts = {f"openskill tau={t:g}": LiveRatings(tau=t) for t in SETTLE_TAUS}
    fresh = Ranking(0.0)
    outcomes: list[GameOutcome] = []
    busy: Counter[str] = Counter()
    running: list[tuple[float, int, str, str, bool, int]] = []
    order = itertools.count()
    run = SettleRun()
    previous: dict[str, list[str]] = {}
    now = 0.0

    def start() -> None:
        free = {p: config.max_games - busy[p] for p in players}
        for game in ladder.propose(free, now):
            mrx_won, duration = play(game.mrx, game.detective, game.seed, game.mrx_seed)
            busy[game.mrx] += 1
            busy[game.detective] += 1
            heapq.heappush(running, (now + duration, next(order), game.mrx, game.detective,
                                     mrx_won, game.seed))

    def poll(done: int) -> None:
        pool = ladder.ratings[rules]
        fresh.refresh(None)
        orders = {
            "openskill": [n for n, _ in pool.ranked()],
            "openskill-mu": sorted(pool.players(), key=lambda n: (-pool.rating(n).mu, n)),
            **{k: [n for n, _ in live.ranked()] for k, live in drifts.items()},
            "history": [str(r["name"]) for r in ladder.standings(rules, players, now)],
            "history-fresh": [r.name for r in fresh.rows()],
        }
        run.polls += 1
        _count_changes(run, orders, previous, done > config.after)
        if done <= config.after:
            return
        run.after_polls += 1
        for key, shown in orders.items():
            run.best_first[key] += bool(shown) and shown[0] == best
        started = time.perf_counter()
        board = leaderboard(outcomes, anchor="mean", samples=config.samples, seed=seed)
        run.board_seconds += time.perf_counter() - started
        _count_agreement(run, orders, board.rows)

    start()
    done = 0
    while done < config.games:
        if not running:
            raise SystemExit(f"the ladder proposed nothing after {done} games")
        now, _, mrx, det, mrx_won, pair = heapq.heappop(running)
        busy[mrx] -= 1
        busy[det] -= 1
        winner = Winner.MRX if mrx_won else Winner.DETECTIVES
        termination = Termination.SURVIVED if mrx_won else Termination.CAUGHT
        ladder.result(Result(rules, mrx, det, winner, termination), now)
        for live in drifts.values():
            live.record(mrx, det, mrx_won)
        fresh.record(mrx, det, mrx_won)
        outcomes.append(GameOutcome(mrx, det, mrx_won, str(pair), rules))
        done += 1
        if done % config.every == 0:
            poll(done)
        start()
    run.refits = ladder.ranks[rules].fits
    return run


def _settle_ladder(config: SettleConfig, seed: int, rules: str, players: list[str]
                   ) -> Ladder:
    """The ladder of one settle seed, every player joined to ``rules``."""
    ladder = Ladder([rules], placement=config.placement, rng=random.Random(seed),
                    rank_refresh_s=config.refresh_s)
    for name in players:
        ladder.join(name, [rules])
    return ladder


def _count_changes(run: SettleRun, orders: dict[str, list[str]],
                   previous: dict[str, list[str]], late: bool) -> None:
    """Count each order that changed since the last poll (``late``: after the burn-in)."""
    for key, shown in orders.items():
        if key in previous and previous[key] != shown:
            run.changes[key] += 1
            run.changes_after[key] += late
        previous[key] = shown


def _count_agreement(run: SettleRun, orders: dict[str, list[str]],
                     rows: Sequence[LeaderboardRow]) -> None:
    """Count how far each order agrees with the offline leaderboard's ``rows`` on the
    neighbours it ranks with a LOS >= 0.95 (and on the whole order when all are)."""
    sure = [(rows[k].player, rows[k + 1].player) for k in range(len(rows) - 1)
            if (rows[k].superiority or 0.0) >= 0.95]
    if not sure:
        return
    run.los_polls += 1
    run.los_pairs[""] += len(sure)
    everywhere = len(sure) == len(rows) - 1
    run.all_polls += everywhere
    for key, shown in orders.items():
        place = {n: i for i, n in enumerate(shown)}
        agree = [place.get(a, math.inf) < place.get(b, math.inf) for a, b in sure]
        run.pair_agree[key] += sum(agree)
        run.poll_agree[key] += all(agree)
        if everywhere:
            run.full_agree[key] += shown == [r.player for r in rows]


def settle(args: argparse.Namespace) -> None:
    """The settle measurement over ``--seeds`` seeds: print a table (or JSON)."""
    games = args.games or 6000
    every = args.every or 25
    seeds = args.seeds or 8
    config = SettleConfig(parse_elo(args.elo), games, every, args.after, args.max_games,
                          args.placement, args.advantage, args.refresh, args.samples)
    started = time.perf_counter()
    numbers = range(args.seed, args.seed + seeds)
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    mapped = (pool.map(settle_seed, itertools.repeat(config), numbers) if pool is not None
              else map(settle_seed, itertools.repeat(config), numbers))
    runs: list[SettleRun] = []
    for seed, run in zip(numbers, mapped, strict=True):
        runs.append(run)
        print(f"seed {seed}: {run.los_polls} polls with a neighbour LOS >= 0.95, "
              f"{run.refits} refits, offline fits {run.board_seconds:.1f} s "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    if pool is not None:
        pool.shutdown()
    keys = ["openskill", "openskill-mu", *(f"openskill tau={t:g}" for t in SETTLE_TAUS),
            "history", "history-fresh"]
    after_polls = sum(r.after_polls for r in runs)
    los_polls = sum(r.los_polls for r in runs)
    los_pairs = sum(r.los_pairs[""] for r in runs)
    all_polls = sum(r.all_polls for r in runs)
    table: dict[str, Any] = {}
    for key in keys:
        per_seed = [r.poll_agree[key] / r.los_polls for r in runs if r.los_polls]
        table[key] = {
            "poll_agreement": sum(r.poll_agree[key] for r in runs) / los_polls
            if los_polls else None,
            "poll_agreement_min_seed": min(per_seed) if per_seed else None,
            "pair_agreement": sum(r.pair_agree[key] for r in runs) / los_pairs
            if los_pairs else None,
            "full_order_agreement": sum(r.full_agree[key] for r in runs) / all_polls
            if all_polls else None,
            "order_changes": sum(r.changes[key] for r in runs) / len(runs),
            "order_changes_after": sum(r.changes_after[key] for r in runs) / len(runs),
            "best_first": sum(r.best_first[key] for r in runs) / after_polls,
        }
    summary = {"mode": "settle", "elo": dict(config.elo), "games": games, "every": every,
               "after": config.after, "seeds": seeds, "seed": args.seed,
               "polls_per_seed": runs[0].polls, "polls_after": after_polls,
               "los_polls": los_polls, "los_pairs": los_pairs, "all_los_polls": all_polls,
               "max_games": config.max_games, "refresh_s": config.refresh_s,
               "samples": config.samples, "advantage": config.advantage,
               "refits_per_seed": sum(r.refits for r in runs) / len(runs),
               "candidates": table, "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(_no_nan(summary)))
        return
    print(f"settle: {', '.join(f'{n} {e:g}' for n, e in config.elo)} (Elo), Mister X "
          f"advantage {config.advantage:g}; {games} games, a poll every {every}, {seeds} "
          f"seeds from {args.seed}, max_games {config.max_games}; offline fit: ML Elo, "
          f"{config.samples} bootstrap samples over pairs; after game {config.after}: "
          f"{after_polls} polls, {los_polls} with a neighbour LOS >= 0.95 ({los_pairs} "
          f"pairs), {all_polls} with every neighbour LOS >= 0.95")
    print(f"{'order':>20} {'polls agree':>12} {'worst seed':>11} {'pairs agree':>12} "
          f"{'full order':>11} {'changes/seed':>13} {'after':>6} {'best first':>11}")
    for key, row in table.items():
        def pct(value: float | None) -> str:
            return "-" if value is None else f"{100 * value:.1f}%"
        print(f"{key:>20} {pct(row['poll_agreement']):>12} "
              f"{pct(row['poll_agreement_min_seed']):>11} {pct(row['pair_agreement']):>12} "
              f"{pct(row['full_order_agreement']):>11} {row['order_changes']:>13.1f} "
              f"{row['order_changes_after']:>6.1f} {pct(row['best_first']):>11}")


def fit_cost(args: argparse.Namespace) -> None:
    """CPU of one :class:`ratings.ranking.Ranking` refit after 100,000 games among 5 to
    1,000 bots: the first fit, and a refit after 100 more games (what the ladder does)."""
    from ratings.ranking import Ranking

    rng = random.Random(args.seed)
    for n in (5, 50, 200, 1000):
        names = [f"b{i}" for i in range(n)]
        elo = {p: rng.gauss(0.0, 200.0) for p in names}
        ranking = Ranking()
        started = time.process_time()
        for _ in range(100_000):
            a, b = rng.sample(names, 2)
            p = 1.0 / (1.0 + 10.0 ** (-(elo[a] - elo[b] + args.advantage) / 400.0))
            ranking.record(a, b, rng.random() < p)
        record_us = (time.process_time() - started) * 10
        started = time.process_time()
        ranking.refresh(None)
        cold = time.process_time() - started
        warm = []
        for _ in range(5):
            for _ in range(100):
                a, b = rng.sample(names, 2)
                ranking.record(a, b, rng.random() < 0.5)
            started = time.process_time()
            ranking.refresh(None)
            warm.append(time.process_time() - started)
        print(f"{n:>5} bots, 100000 games: record {record_us:.1f} us/game; first fit "
              f"{1000 * cold:.1f} ms CPU; refit after 100 more games median "
              f"{1000 * sorted(warm)[2]:.1f} ms CPU (max {1000 * max(warm):.1f})")


# ---------------------------------------------------------------------- truth cache

def load_truth(n: int) -> dict[str, Any]:
    """The cached round robin of ``n`` games-mode players."""
    cache = json.loads(TRUTH_FILE.read_text()) if TRUTH_FILE.exists() else {}
    if str(n) not in cache:
        raise SystemExit(f"no true strengths for {n} bots in {TRUTH_FILE}: run "
                         f"bench/ladder.py --mode truth --bots {n} first")
    entry: dict[str, Any] = cache[str(n)]
    return entry


def build_truth(args: argparse.Namespace) -> None:
    """Play the long round robin of ``games`` mode and cache its ML Elo."""
    players = game_players(args.bots)
    rules = load_ruleset(args.rules)
    play = game_play(rules, players)
    seed = args.seed + 1_000_000  # never the seeds of a measured run
    schedule = make_schedule(players, args.pairs, seed, Format.ROUND_ROBIN,
                             pairing=Pairing.FRESH_MRX)
    started = time.perf_counter()
    outcomes = []
    for i, entry in enumerate(schedule, 1):
        mrx_won, _ = play(entry.mrx, entry.detectives, entry.seed, entry.mrx_seed)
        outcomes.append(GameOutcome(entry.mrx, entry.detectives, mrx_won, entry.pair_key,
                                    args.rules))
        if i % 2000 == 0 or i == len(schedule):
            print(f"truth: {i}/{len(schedule)} games, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
    fit = fit_elo(outcomes, anchor="mean")
    elo = [fit.ratings[p] for p in players]
    entry_out = {"rules": args.rules, "players": players, "pairs": args.pairs, "seed": seed,
                 "games": len(outcomes), "elo": {p: round(e, 1) for p, e in zip(players, elo,
                                                                            strict=True)},
                 "mrx_advantage": round(fit.mrx_advantage, 1),
                 "spearman_with_budget": round(spearman(elo, range(len(players))), 4),
                 "seconds": round(time.perf_counter() - started, 1)}
    cache = json.loads(TRUTH_FILE.read_text()) if TRUTH_FILE.exists() else {}
    cache[str(args.bots)] = entry_out
    TRUTH_FILE.parent.mkdir(parents=True, exist_ok=True)
    TRUTH_FILE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    print(json.dumps(entry_out, indent=1))


# ---------------------------------------------------------------------- summary

def reach(series: list[float], checkpoints: list[int], threshold: float) -> int | None:
    """Games after which ``series`` first reaches ``threshold`` (``None``: never)."""
    return next((n for n, c in zip(checkpoints, series, strict=True) if c >= threshold), None)


def summarise(runs: list[Run], checkpoints: list[int], players: Sequence[str],
              truth: Sequence[float]) -> dict[str, Any]:
    """Means and intervals over seeds, thresholds, ladder fairness."""
    series = {s: [list(v) for v in zip(*(r.corr[s] for r in runs), strict=True)]
              for s in SERIES}
    out: dict[str, Any] = {"checkpoints": checkpoints, "seeds": len(runs), "correlation": {
        s: [dict(zip(("mean", "lo", "hi"), mean_ci(v), strict=True)) for v in series[s]]
        for s in SERIES}}
    reached: dict[str, Any] = {}
    for t in THRESHOLDS:
        row: dict[str, Any] = {}
        hits = {s: [reach(r.corr[s], checkpoints, t) for r in runs] for s in SERIES}
        for s in SERIES:
            got = [float(n) for n in hits[s] if n is not None]
            mean, lo, hi = mean_ci(got)
            row[s] = {"mean": mean, "lo": lo, "hi": hi, "reached": len(got)}
        for name, (a, b) in {"ladder/rr": ("ladder", "rr"),
                             "ladder-elo/rr-elo": ("ladder-elo", "rr-elo")}.items():
            ratios = [x / y for x, y in zip(hits[a], hits[b], strict=True)
                      if x is not None and y is not None]
            mean, lo, hi = mean_ci(ratios)
            row[name] = {"mean": mean, "lo": lo, "hi": hi, "seeds": len(ratios)}
        reached[f"{t:g}"] = row
    out["reach"] = reached
    rank = dict(zip(players, ranks(truth), strict=True))
    per_bot: list[int] = []
    per_pair: list[int] = []
    gaps: list[float] = []
    for r in runs:
        bots = Counter(p for g in r.ladder_games for p in g)
        pairs = Counter(tuple(sorted(g)) for g in r.ladder_games)
        per_bot += [bots[p] for p in players]
        per_pair += [pairs[(a, b) if a <= b else (b, a)]
                     for a, b in itertools.combinations(players, 2)]
        gaps += [abs(rank[a] - rank[b]) for a, b in r.ladder_games]
    n = len(players)
    out["fairness"] = {
        "games_per_bot": {"min": min(per_bot), "mean": float(np.mean(per_bot)),
                          "max": max(per_bot)},
        "games_per_pair": {"min": min(per_pair), "mean": float(np.mean(per_pair)),
                           "max": max(per_pair), "never": float(np.mean(
                               [c == 0 for c in per_pair]))},
        "mean_rank_gap": float(np.mean(gaps)), "round_robin_rank_gap": (n + 1) / 3}
    return out


def _no_nan(value: Any) -> Any:
    """``value`` with NaNs (a threshold no seed reached) as ``None``: strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def print_table(summary: dict[str, Any], header: str) -> None:
    print(header)
    print(f"{'games':>6} " + " ".join(f"{s + ' rho [95%]':>23}" for s in SERIES))
    for i, n in enumerate(summary["checkpoints"]):
        cells = []
        for s in SERIES:
            c = summary["correlation"][s][i]
            cells.append(f"{c['mean']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]".rjust(23))
        print(f"{n:>6} " + " ".join(cells))
    seeds = summary["seeds"]
    for t, row in summary["reach"].items():
        parts = []
        for s in SERIES:
            c = row[s]
            parts.append(f"{s} {c['mean']:.0f} [{c['lo']:.0f}, {c['hi']:.0f}] "
                         f"({c['reached']}/{seeds})")
        for name in ("ladder/rr", "ladder-elo/rr-elo"):
            c = row[name]
            parts.append(f"{name} {c['mean']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]")
        print(f"games to rho >= {t}: " + "; ".join(parts))
    f = summary["fairness"]
    print(f"ladder games per bot {f['games_per_bot']['min']}-{f['games_per_bot']['max']} "
          f"(mean {f['games_per_bot']['mean']:.1f}); per pair {f['games_per_pair']['min']}-"
          f"{f['games_per_pair']['max']} (mean {f['games_per_pair']['mean']:.2f}, never met "
          f"{100 * f['games_per_pair']['never']:.1f}%); mean true-rank gap of a game "
          f"{f['mean_rank_gap']:.2f} (round robin {f['round_robin_rank_gap']:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("model", "games", "truth", "settle", "fitcost"),
                        default="model")
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--games", type=int, default=None,
                        help="games per run (default: 1500 model, 2000 games)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="runs (default: 40 model, 3 games)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every", type=int, default=None,
                        help="games between checkpoints (default: 25 model, 100 games)")
    parser.add_argument("--max-games", type=int, default=1,
                        help="game slots of every bot on the ladder")
    parser.add_argument("--placement", type=int, default=6, help="the ladder's placement")
    parser.add_argument("--spacing", type=float, default=50.0, help="model: Elo between bots")
    parser.add_argument("--advantage", type=float, default=100.0,
                        help="model: Mister X advantage (Elo)")
    parser.add_argument("--rules", default="grid5", help="games/truth: the ruleset")
    parser.add_argument("--pairs", type=int, default=60, help="truth: pairs per matchup")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (seeds)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--elo", default=SETTLE_ELO, help="settle: name=Elo,... of the bots")
    parser.add_argument("--after", type=int, default=3000,
                        help="settle: polls counted from this many games on")
    parser.add_argument("--refresh", type=float, default=2.0,
                        help="settle: the ladder's rank refit interval (simulated seconds; "
                             "a game lasts 0.5-1.5)")
    parser.add_argument("--samples", type=int, default=200,
                        help="settle: bootstrap samples of the offline fit")
    args = parser.parse_args()
    if args.mode == "settle":
        settle(args)
        return
    if args.mode == "fitcost":
        fit_cost(args)
        return
    if args.mode == "truth":
        build_truth(args)
        return
    model = args.mode == "model"
    games = args.games or (1500 if model else 2000)
    seeds = args.seeds or (40 if model else 3)
    every = args.every or (25 if model else 100)
    if games < every or args.bots < 2:
        parser.error("--games must be at least --every, --bots at least 2")
    if model:
        players = [f"bot{i:02d}" for i in range(args.bots)]
        truth = [i * args.spacing for i in range(args.bots)]
        header = (f"model: {args.bots} bots {args.spacing:g} Elo apart, Mister X advantage "
                  f"{args.advantage:g}")
    else:
        cached = load_truth(args.bots)
        players = list(cached["players"])
        truth = [float(cached["elo"][p]) for p in players]
        header = (f"games on {args.rules}: {args.bots} bots (blunder, greedy at budgets "
                  f"0..1), truth: {cached['games']}-game round robin (Spearman with budget "
                  f"order {cached['spearman_with_budget']})")
    header += (f"; {games} games, {seeds} seeds from {args.seed}, max_games "
               f"{args.max_games}, placement {args.placement}")
    checkpoints = list(range(every, games + 1, every))
    started = time.perf_counter()
    config = Config(args.mode, args.rules, tuple(players), tuple(truth), games, every,
                    args.max_games, args.placement, args.advantage)
    runs: list[Run] = []
    numbers = range(args.seed, args.seed + seeds)
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    mapped = (pool.map(one_seed, itertools.repeat(config), numbers) if pool is not None
              else map(one_seed, itertools.repeat(config), numbers))
    for seed, run in zip(numbers, mapped, strict=True):
        runs.append(run)
        print(f"seed {seed}: ladder rho {run.corr['ladder'][-1]:.3f}, round robin "
              f"{run.corr['rr'][-1]:.3f} after {games} games "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    if pool is not None:
        pool.shutdown()
    summary = summarise(runs, checkpoints, players, truth)
    summary.update({"mode": args.mode, "bots": args.bots, "games": games, "seed": args.seed,
                    "players": players, "truth": truth, "max_games": args.max_games,
                    "placement": args.placement,
                    "seconds": round(time.perf_counter() - started, 1)})
    if args.json:
        print(json.dumps(_no_nan(summary)))
    else:
        print_table(summary, header)


if __name__ == "__main__":
    main()
