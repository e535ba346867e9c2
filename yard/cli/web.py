"""``yard web``: browse an existing database in a browser (no match server, no bots)."""

from __future__ import annotations

import click

from host.run import run_web
from yard.cli.options import db_option


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8080, show_default=True, help="Port (0 picks a free one).")
@click.option("--ready-file", type=click.Path(dir_okay=False),
              help="Write the page address here once listening.")
@db_option
def web(host: str, port: int, ready_file: str | None, db_url: str) -> None:
    """Serve the leaderboard, tournament, game and replay pages of a database (read-only)."""
    run_web(db_url, host, port, ready_file)
