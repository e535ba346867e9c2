"""``yard train lc``: learn Location Categorization weights from self-play games.

Plays ``--games`` games of MCTS against MCTS (every enhancement on except LC itself, a
fixed iteration budget; ``--mrx`` / ``--detectives`` choose other bots), counts at every
detective decision which distance categories were possible and which one held Mister X, and
writes ``hits / possibilities`` per category for the ruleset into ``--out`` (the packaged
``bots/mcts/data/lc_weights.json`` by default).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import click

from bots.arena import GameResult, play_game
from bots.base import Bot
from bots.mcts.bot import TUNED, MctsBot
from bots.mcts.lc import DEFAULT_FILE, LcCounts, observe_game, save_weights
from bots.registry import bot_from_spec
from game import State, load_ruleset


def _states(result: GameResult) -> Iterator[State]:
    state = result.start
    for _, move in result.moves:
        yield state
        state = state.apply_unchecked(move)


def learn(rules_name: str, games: int, seed: int, iterations: int, mrx: str | None = None,
          detectives: str | None = None) -> LcCounts:
    """Play ``games`` games and count categories (seeds ``seed, seed+1, ...``).

    Both sides are the tuned MCTS bot without LC at ``iterations`` unless ``mrx`` /
    ``detectives`` give bot specs (``mcts:iterations=1000,time=0``): the weights describe
    how *that* Mister X hides from *those* detectives.
    """
    rules = load_ruleset(rules_name)
    counts = LcCounts()

    def side(spec: str | None, game_seed: int) -> Bot:
        if spec is not None:
            return bot_from_spec(spec, game_seed)
        return MctsBot(seed=game_seed, iterations=iterations, r=TUNED["r"],
                       epsilon=TUNED["epsilon"], filter=True)

    for i in range(games):
        game_seed = seed + i
        observe_game(counts, _states(play_game(rules, side(mrx, game_seed),
                                               [side(detectives, game_seed)], game_seed)))
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
@click.option("--mrx", "mrx_spec", default=None, metavar="SPEC",
              help="Mister X's bot spec (default: tuned MCTS at --iterations), e.g. "
                   "'mcts:iterations=1000,time=0' to learn how that bot hides.")
@click.option("--detectives", "detectives_spec", default=None, metavar="SPEC",
              help="The detectives' bot spec (default: tuned MCTS at --iterations).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Weights file to write or update (default: the packaged file).")
def lc(rules_name: str, games: int, seed: int, iterations: int, mrx_spec: str | None,
       detectives_spec: str | None, out: Path | None) -> None:
    """Learn MCTS location-categorization weights from self-play logs."""
    for spec in (mrx_spec, detectives_spec):
        if spec is not None:
            bot_from_spec(spec, 0)  # a bad spec fails here, in one line, before any game
    counts = learn(rules_name, games, seed, iterations, mrx_spec, detectives_spec)
    target = out or _default_out()
    meta: dict[str, object] = {"games": games, "seed": seed, "iterations": iterations}
    meta.update({k: v for k, v in (("mrx", mrx_spec), ("detectives", detectives_spec)) if v})
    save_weights(target, load_ruleset(rules_name).name, counts, meta)
    weights = ", ".join(f"{w:.3f}" for w in counts.weights())
    click.echo(f"{rules_name}: {games} games, weights (1, 2, 3, 4, 5+) = {weights} -> {target}")
