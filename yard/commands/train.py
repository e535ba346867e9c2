"""``yard train``: offline learning jobs. Subcommands are imported lazily (torch is heavy)."""

from __future__ import annotations

import importlib

import click

TRAINERS: dict[str, str] = {
    "lc": "bots.mcts.train_lc:lc",
    "dqn": "bots.dqn.train_cli:dqn",
}


class _LazyTrainers(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in TRAINERS if self.get_command(ctx, name) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = TRAINERS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                return None
            raise
        command: click.Command | None = getattr(module, attr, None)
        return command


@click.group(cls=_LazyTrainers)
def train() -> None:
    """Train models offline: MCTS location-categorization weights (lc), DQN agents (dqn)."""
