"""The bot author's kit: ``yard new-bot`` (a starter bot, :mod:`bots.starter`) and ``yard
standing`` (a bot's standing on a ladder server, :mod:`bots.standing`). The slim client
has the same as ``yard-bot new-bot`` and ``yard-bot standing`` (:mod:`bots.cli`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bots.standing import RECENT, fetch_standing, standing_lines
from bots.starter import new_bot as write_new_bot
from yard.cli.options import json_option


@click.command("new-bot")
@click.argument("name")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write into (default ./NAME).")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
def new_bot(name: str, folder: Path | None, force: bool) -> None:
    """Write a starter bot NAME: NAME.py (a bots.sdk.Bot subclass that plays both sides),
    test_NAME.py (whole games in-process) and README.md (the commands that check it and
    put it on a ladder), in a folder NAME."""
    for line in write_new_bot(name, folder, force):
        click.echo(line)


@click.command()
@click.argument("name")
@click.option("--url", required=True, help="The server: its ws:// or http:// address, e.g. "
              "wss://HOST or http://127.0.0.1:8765.")
@click.option("--rules", help="Comma-separated ladders (default: every one the bot is on).")
@click.option("--recent", default=RECENT, show_default=True, type=click.IntRange(0),
              help="Recent games shown per ladder.")
@json_option("Print one JSON object.")
def standing(name: str, url: str, rules: str | None, recent: int, as_json: bool) -> None:
    """Bot NAME's standing on the ladders of a running server, from its HTTP API: rating
    with its uncertainty, rank, games by role, forfeits by cause, pause state and recent
    games with their replay links."""
    found = fetch_standing(url, name, [r for r in (rules or "").split(",") if r], recent)
    if as_json:
        click.echo(json.dumps(found))
    else:
        for line in standing_lines(found):
            click.echo(line)
