"""The ``yard`` command: the only package that imports click. Subcommands are imported
lazily, so ``yard rules`` never loads torch.

Each entry of :data:`COMMANDS` maps a subcommand name to ``module:attribute`` of a click
command or group. User mistakes (a :class:`game.YardError`, or a bad option caught by
click) print one clear line and exit 2.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from game.errors import YardError

COMMANDS: dict[str, str] = {
    "rules": "yard.cli.rules:rules",
    "play": "yard.cli.play:play",
    "bench": "yard.cli.bench:bench",
    "serve": "yard.cli.serve:serve",
    "accounts": "yard.cli.accounts:accounts",
    "web": "yard.cli.web:web",
    "match": "yard.cli.serve:match",
    "bot": "yard.cli.bots:bot",
    "bots": "yard.cli.botlist:list_bots",
    "bot-check": "yard.cli.botcheck:bot_check",
    "new-bot": "yard.cli.kit:new_bot",
    "standing": "yard.cli.kit:standing",
    "games": "yard.cli.records:games",
    "replay": "yard.cli.records:replay",
    "import": "yard.cli.records:import_records",
    "tournament": "yard.cli.tournament:tournament",
    "sprt": "yard.cli.sprt:sprt",
    "leaderboard": "yard.cli.ratings:leaderboard",
    "matrix": "yard.cli.ratings:matrix",
    "export": "yard.cli.ratings:export",
    "train": "yard.cli.train:train",
    "reproduce": "yard.cli.reproduce:reproduce",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module only when it is used.

    ``lazy_commands`` maps names to ``module:attribute`` of a click command.
    """

    lazy_commands: dict[str, str] = COMMANDS

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The command names, without importing their modules."""
        return sorted(self.lazy_commands)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, imported now."""
        return self._load(cmd_name)

    def _load(self, name: str) -> click.Command | None:
        target = self.lazy_commands.get(name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command


@click.group(cls=LazyGroup)
@click.version_option(package_name="yard")
def cli() -> None:
    """yard: Scotland Yard rules engine, match server and bot tournaments."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: turns :class:`YardError` into a one-line message."""
    try:
        return cli.main(args=argv, prog_name="yard", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        # One line, like every other user mistake (click's default adds a usage block).
        path = exc.ctx.command_path if exc.ctx is not None else "yard"
        click.echo(f"error: {exc.format_message()} (see '{path} --help')", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except YardError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
