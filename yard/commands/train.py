"""``yard train``: offline learning jobs. Subcommands are imported lazily (torch is heavy)."""

from __future__ import annotations

import click

from yard.cli import LazyGroup

TRAINERS: dict[str, str] = {
    "lc": "bots.mcts.train_lc:lc",
    "dqn": "bots.dqn.train_cli:dqn",
}


class _LazyTrainers(LazyGroup):
    lazy_commands = TRAINERS


@click.group(cls=_LazyTrainers)
def train() -> None:
    """Train models offline: MCTS location-categorization weights (lc), DQN agents (dqn)."""
