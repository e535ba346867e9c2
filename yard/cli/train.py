"""``yard train``: offline learning jobs. Subcommands are imported lazily (torch is heavy)."""

from __future__ import annotations

from pathlib import Path

import click

from bots.mcts.train_lc import learn_and_save
from yard.cli import LazyGroup

TRAINERS: dict[str, str] = {
    "lc": "yard.cli.train:lc",
    "dqn": "yard.cli.train_dqn:dqn",
}


class _LazyTrainers(LazyGroup):
    lazy_commands = TRAINERS


@click.group(cls=_LazyTrainers)
def train() -> None:
    """Train models offline: MCTS location-categorization weights (lc), DQN agents (dqn)."""


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
    target, counts = learn_and_save(rules_name, games, seed, iterations, mrx_spec,
                                    detectives_spec, out)
    weights = ", ".join(f"{w:.3f}" for w in counts.weights())
    click.echo(f"{rules_name}: {games} games, weights (1, 2, 3, 4, 5+) = {weights} -> {target}")
