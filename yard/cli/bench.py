"""``yard bench engine``: how fast the rules engine is, on one core.

Four numbers, each measured for a quarter of ``--seconds``:

* legal-move generations/s: fresh (uncached) move generation on positions sampled from
  random games;
* applies/s: validated :meth:`State.apply` of a legal move (includes generating the next
  seat's moves, which ``apply`` does to find who moves next);
* random games/s: whole games of uniformly random legal moves, engine only;
* arena games/s: the same through :func:`bots.arena.play_game` with ``random`` bots, so
  every move also builds the mover's view (lazy: its travel log and possible locations are
  built only when read; ``bench/arena.py`` compares the two rates alternately).

Rates are per wall-clock second. ``cpu_share`` (process CPU time / wall time) shows whether
other work competed for the core while measuring.

``bench/engine.py`` runs the same code as a script.
"""

from __future__ import annotations

import gc
import json
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import click

from bots.arena import random_game
from game import Move, State, new_game
from game.rules import Ruleset, load_ruleset
from yard.cli.options import json_option

TIME_CHECK_EVERY = 64


def _rate(seconds: float, work: Callable[[int], int]) -> float:
    """Call ``work(i)`` (returning units done) until ``seconds`` pass; units per second."""
    done = 0
    i = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        for _ in range(TIME_CHECK_EVERY):
            done += work(i)
            i += 1
        now = time.perf_counter()
        if now >= deadline:
            return done / (now - started)


def sample_positions(rules: Ruleset, count: int, seed: int = 0) -> list[tuple[State, Move]]:
    """``(state, legal move)`` pairs taken from random games (seeded)."""
    rng = random.Random(seed)
    out: list[tuple[State, Move]] = []
    game = 0
    while len(out) < count:
        state = new_game(rules, seed + game)
        game += 1
        while state.outcome is None and len(out) < count:
            move = rng.choice(state.legal_moves())
            out.append((state, move))
            state = state.apply_unchecked(move)
    return out


def _move_rates(rules: Ruleset, seconds: float) -> tuple[float, float]:
    pool = sample_positions(rules, 4096)
    n = len(pool)

    def generate(i: int) -> int:
        state = pool[i % n][0]
        state.moves_for(state.to_move)
        return 1

    def apply(i: int) -> int:
        state, move = pool[i % n]
        state.apply(move)
        return 1

    return _rate(seconds, generate), _rate(seconds, apply)


def measure(rules: Ruleset, seconds: float) -> dict[str, Any]:
    """Run the four measurements; returns the JSON-ready report."""
    from bots.arena import play_game
    from bots.simple import RandomBot

    share = seconds / 4
    wall, cpu = time.perf_counter(), time.process_time()
    generations, applies = _move_rates(rules, share)
    gc.collect()  # the position pool is garbage now; keep it out of the game timings
    mrx, det = RandomBot(), RandomBot()

    def engine_game(i: int) -> int:
        random_game(rules, i)
        return 1

    def arena_game(i: int) -> int:
        play_game(rules, mrx, [det], seed=i)
        return 1

    games = _rate(share, engine_game)
    arena = _rate(share, arena_game)
    cpu_share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return {
        "rules": rules.name, "seconds": seconds, "python": platform.python_version(),
        "legal_move_generations_per_s": round(generations, 1),
        "applies_per_s": round(applies, 1),
        "random_games_per_s": round(games, 1),
        "arena_games_per_s": round(arena, 1),
        "cpu_share": round(cpu_share, 3),
    }


def format_report(report: dict[str, Any]) -> str:
    """Human-readable lines for :func:`measure`'s report."""
    return "\n".join([
        f"engine benchmark: rules {report['rules']}, {report['seconds']:g} s, one core, "
        f"Python {report['python']}",
        f"legal-move generations/s  {report['legal_move_generations_per_s']:>12,.0f}",
        f"moves applied/s           {report['applies_per_s']:>12,.0f}",
        f"random games/s (engine)   {report['random_games_per_s']:>12,.1f}",
        f"random games/s (arena)    {report['arena_games_per_s']:>12,.1f}",
        f"CPU time / wall time      {report['cpu_share']:>12.0%}  (below 100%: the machine "
        "was busy and every rate above is low by that factor)",
    ])


@click.group()
def bench() -> None:
    """Benchmarks (numbers for reports come from here)."""


@bench.command()
@click.option("--rules", "rules_spec", default="classic", show_default=True,
              help="Ruleset name or .toml path.")
@click.option("--seconds", default=5.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Total measuring time.")
@json_option("Print one JSON object.")
def engine(rules_spec: str, seconds: float, as_json: bool) -> None:
    """Legal-move generations/s, moves/s and random games/s of the rules engine."""
    report = measure(load_ruleset(rules_spec), seconds)
    click.echo(json.dumps(report) if as_json else format_report(report))
