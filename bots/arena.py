"""The in-process arena: play games between bot objects, no network involved.

Used by ``yard play``, tests, training and quick evaluations. Each detective seat may have
its own bot, or one bot may play them all.

>>> from bots.registry import make_bot
>>> result = play_game("grid5", make_bot("random"), [make_bot("random")], seed=1)
>>> result.outcome.winner is not None
True
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots.base import NO_VIEW, Bot, reads_view
from game import MRX, Move, Outcome, Ruleset, State, Termination, Winner, load_ruleset, new_game
from ratings.stats import wilson_interval


@dataclass
class GameResult:
    """One finished game: its seed, start state, moves in order, final state and outcome."""

    seed: int | None
    start: State
    final: State
    moves: list[tuple[int, Move]] = field(default_factory=list)
    outcome: Outcome = field(default_factory=lambda: Outcome(None, Termination.ABORTED))

    @property
    def mrx_won(self) -> bool:
        """True when Mister X won."""
        return self.outcome.winner is Winner.MRX


def seat_bots(mrx: Bot, detectives: Sequence[Bot], n_detectives: int) -> list[Bot]:
    """Bots by seat: Mister X, then detectives cycling through ``detectives``."""
    if not detectives:
        raise ValueError("at least one detective bot is needed")
    return [mrx, *(detectives[i % len(detectives)] for i in range(n_detectives))]


def bot_seed(game_seed: int | None, seat: int) -> int | None:
    """The seed a seat's bot gets for one game (stable across runs and platforms).

    A function of the game seed, so the two games of a pair played from one seed hand
    their Mister X the same seed: harmless in process, where every bot is the caller's own
    code; the server hands each game's seats seeds of their own (``server.match``)."""
    if game_seed is None:
        return None
    return (game_seed * 1_000_003 + seat * 7_919 + 17) % (2**63)


def random_game(rules: Ruleset, seed: int) -> State:
    """One engine-only game of uniformly random legal moves, no bots or views: what the
    arena's games are measured against (``yard bench engine``, bench/arena.py)."""
    rng = random.Random(seed)
    state = new_game(rules, seed)
    while state.outcome is None:
        state = state.apply_unchecked(rng.choice(state.legal_moves()))
    return state


def play_game(rules: Ruleset | str, mrx: Bot, detectives: Sequence[Bot],
              seed: int | None = None, start: State | None = None) -> GameResult:
    """Play one game to the end. An illegal move forfeits with ``illegal_move``."""
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    state = start or new_game(rules, seed)
    bots = seat_bots(mrx, detectives, state.n_detectives)
    _begin_all(bots, state.rules, seed)
    result = GameResult(seed, state, state)
    played = result.moves.append
    choose = [bot.choose for bot in bots]
    reads = [reads_view(bot) for bot in bots]
    # One turn: the mover's view, its bot's choice, the check, the next state. The view
    # is lazy (game.views.PublicTrail, itself the view of the detective to move): a bot
    # that never reads its travel log or possible set does not pay for them, and one that
    # reads no view at all (Bot.reads_view) gets none built.
    while state.outcome is None:
        seat = state.to_move
        legal = state.legal_moves()
        move = choose[seat](state.view(seat) if reads[seat] else NO_VIEW, legal)
        if move not in legal:
            result.final = state
            result.outcome = Outcome.forfeit(seat, Termination.ILLEGAL_MOVE)
            break
        played((seat, move))
        state = state.apply_unchecked(move)
    else:
        result.final = state
        result.outcome = state.outcome
    for bot in {id(b): b for b in bots}.values():
        bot.game_over(result.outcome)
    return result


def _begin_all(bots: list[Bot], rules: Ruleset, seed: int | None) -> None:
    seats: dict[int, list[int]] = {}
    for seat, bot in enumerate(bots):
        seats.setdefault(id(bot), []).append(seat)
    for held in seats.values():
        bots[held[0]].begin(rules, held, bot_seed(seed, held[0]))


@dataclass
class Summary:
    """Aggregate results of many games."""

    games: int
    mrx_wins: int
    detective_wins: int
    mean_moves: float
    seconds: float
    terminations: dict[str, int]

    @property
    def games_per_s(self) -> float:
        """Throughput."""
        return self.games / self.seconds if self.seconds > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        """The ``yard play --json`` object."""
        lo, hi = wilson_interval(self.mrx_wins, self.games)
        return {"games": self.games, "mrx_wins": self.mrx_wins,
                "detective_wins": self.detective_wins, "mean_moves": self.mean_moves,
                "games_per_s": self.games_per_s, "mrx_win_rate": self.mrx_wins / self.games
                if self.games else 0.0, "mrx_win_rate_ci95": [lo, hi],
                "terminations": self.terminations}


def merge_summaries(parts: Sequence[Summary], seconds: float | None = None) -> Summary:
    """One summary of games played in chunks over disjoint seed ranges (benchmarks split
    on processes or a cluster): counts and terminations add up, mean moves is weighted by
    games; ``seconds`` is the wall time (default: the chunks' seconds added up)."""
    games = sum(p.games for p in parts)
    reasons: dict[str, int] = {}
    for part in parts:
        for key, n in part.terminations.items():
            reasons[key] = reasons.get(key, 0) + n
    moves = sum(p.mean_moves * p.games for p in parts)
    return Summary(games, sum(p.mrx_wins for p in parts),
                   sum(p.detective_wins for p in parts), moves / games if games else 0.0,
                   sum(p.seconds for p in parts) if seconds is None else seconds, reasons)


def play_many(rules: Ruleset | str, mrx: Bot, detectives: Sequence[Bot], games: int,
              seed: int = 0, progress: Callable[[int, GameResult], None] | None = None
              ) -> Summary:
    """Play ``games`` games with seeds ``seed, seed+1, ...`` and summarise them."""
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    started = time.perf_counter()
    mrx_wins = det_wins = total_moves = 0
    reasons: dict[str, int] = {}
    for i in range(games):
        result = play_game(rules, mrx, detectives, seed + i)
        mrx_wins += result.outcome.winner is Winner.MRX
        det_wins += result.outcome.winner is Winner.DETECTIVES
        total_moves += result.final.move_number
        key = result.outcome.termination.value
        reasons[key] = reasons.get(key, 0) + 1
        if progress is not None:
            progress(i + 1, result)
    elapsed = time.perf_counter() - started
    return Summary(games, mrx_wins, det_wins, total_moves / games if games else 0.0, elapsed,
                   reasons)


__all__ = ["MRX", "GameResult", "Summary", "bot_seed", "merge_summaries", "play_game",
           "play_many", "random_game", "seat_bots", "wilson_interval"]
