"""``yard web``: browse an existing database in a browser (no match server, no bots)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import click
from websockets.asyncio.server import ServerConnection, serve

from db.cli import db_option
from game.errors import YardError
from server.web.http import WebApp


class WebServerError(YardError):
    """The page server cannot start."""


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8080, show_default=True, help="Port (0 picks a free one).")
@click.option("--ready-file", type=click.Path(dir_okay=False),
              help="Write the page address here once listening.")
@db_option
def web(host: str, port: int, ready_file: str | None, db_url: str) -> None:
    """Serve the leaderboard, tournament, game and replay pages of a database (read-only)."""
    asyncio.run(_web(WebApp(db_url, websockets=False), host, port, ready_file))


async def _refuse(ws: ServerConnection) -> None:  # never reached: every request is HTTP
    await ws.close(1008, "this server only shows pages")


async def _web(app: WebApp, host: str, port: int, ready_file: str | None) -> None:
    try:
        server = await serve(_refuse, host, port, process_request=app.process_request)
    except OSError as exc:
        app.close()
        raise WebServerError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    real = server.sockets[0].getsockname()[1] if server.sockets else port
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{real}/"
    if ready_file:
        tmp = Path(f"{ready_file}.tmp")
        tmp.write_text(url + "\n")
        os.replace(tmp, ready_file)
    click.echo(f"web pages at {url}")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await server.wait_closed()
    app.close()
