"""``yard train lc``: learn Location Categorization weights from self-play games.

Plays ``--games`` games of MCTS against MCTS (every enhancement on except LC itself, a
fixed iteration budget), counts at every detective decision which distance categories were
possible and which one held Mister X, and writes ``hits / possibilities`` per category for
the ruleset into ``--out`` (the packaged ``bots/mcts/data/lc_weights.json`` by default).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import click

from bots.arena import GameResult, play_game
from bots.mcts.bot import TUNED, MctsBot
from bots.mcts.lc import DEFAULT_FILE, LcCounts, observe_game, save_weights
from game import State, load_ruleset


def _states(result: GameResult) -> Iterator[State]:
    state = result.start
    for _, move in result.moves:
        yield state
        state = state.apply_unchecked(move)


def learn(rules_name: str, games: int, seed: int, iterations: int) -> LcCounts:
    """Self-play ``games`` games and count categories (seeds ``seed, seed+1, ...``)."""
    rules = load_ruleset(rules_name)
    counts = LcCounts()
    for i in range(games):
        mrx, detectives = (MctsBot(seed=seed + i, iterations=iterations, r=TUNED["r"],
                                   epsilon=TUNED["epsilon"], filter=True) for _ in range(2))
        observe_game(counts, _states(play_game(rules, mrx, [detectives], seed + i)))
    return counts


def _default_out() -> Path:
    return Path(str(resources.files("bots.mcts").joinpath("data", DEFAULT_FILE)))


@click.command("lc")
@click.option("--rules", "rules_name", default="classic", show_default=True,
              help="Ruleset to learn weights for.")
@click.option("--games", default=200, show_default=True, type=click.IntRange(1),
              help="Self-play games.")
@click.option("--seed", default=1, show_default=True, help="Seed of the first game.")
@click.option("--iterations", default=100, show_default=True, type=click.IntRange(1),
              help="MCTS iterations per move in self-play.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Weights file to write or update (default: the packaged file).")
def lc(rules_name: str, games: int, seed: int, iterations: int, out: Path | None) -> None:
    """Learn MCTS location-categorization weights from self-play logs."""
    counts = learn(rules_name, games, seed, iterations)
    target = out or _default_out()
    save_weights(target, load_ruleset(rules_name).name, counts,
                 {"games": games, "seed": seed, "iterations": iterations})
    weights = ", ".join(f"{w:.3f}" for w in counts.weights())
    click.echo(f"{rules_name}: {games} games, weights (1, 2, 3, 4, 5+) = {weights} -> {target}")
