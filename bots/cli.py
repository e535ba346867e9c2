"""``yard bot`` (run a built-in bot as a network client) and ``yard bots`` (list them)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import click

from bots.client import BotClient, run_client
from bots.registry import bot_names, make_bot, parse_options


@click.command()
@click.argument("name")
@click.option("--url", required=True, help="Server URL, e.g. ws://127.0.0.1:8765.")
@click.option("--token", help="This bot's token, if the server requires one.")
@click.option("--name", "display", help="Name announced to the server (default: NAME).")
@click.option("--version", "version", default="", help="Version announced to the server.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Bot option.")
@click.option("--seed", type=int, help="Seed for bots created before any game seed arrives.")
@click.option("--games", type=int, help="Exit after this many games.")
@click.option("--instance", help="Label telling this process apart from other processes "
              "of the same bot (tournament runners give each game slot its own).")
@click.option("-v", "--verbose", is_flag=True, help="Log connection events.")
def bot(name: str, url: str, token: str | None, display: str | None, version: str,
        options: tuple[str, ...], seed: int | None, games: int | None,
        instance: str | None, verbose: bool) -> None:
    """Run built-in bot NAME as a client of the server at --url; one process plays many
    games at once and resumes its session after a dropped connection."""
    parsed = parse_options(options)
    make_bot(name, seed, parsed)  # fail fast on unknown bots and options
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    client = BotClient(lambda: make_bot(name, seed, parsed), url, display or name,
                       version, token, games, instance=instance)
    played = asyncio.run(run_client(client))
    click.echo(f"{client.name}: played {played} games", err=True)


@click.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--check", "checks", multiple=True, metavar="BOT:KEY=VALUE",
              help="First check that BOT accepts this option (repeatable; a bot's options "
              "are checked together); exit 2 with the reason if not.")
def list_bots(as_json: bool, checks: tuple[str, ...]) -> None:
    """List the built-in bots, the roles they can play and whether they are time-based
    (with --json: "timed", and "cores" one move keeps busy, for the options given in
    --check, else the defaults)."""
    by_bot: dict[str, list[str]] = {}
    for check in checks:
        name, sep, option = check.partition(":")
        if not sep:
            raise click.BadParameter(f"{check!r} must look like BOT:KEY=VALUE",
                                     param_hint="--check")
        by_bot.setdefault(name, []).append(option)
    checked = {name: make_bot(name, 0, parse_options(options))
               for name, options in by_bot.items()}
    rows: list[dict[str, Any]] = []
    for name in bot_names():
        try:
            bot = checked.get(name) or make_bot(name, 0)
        except Exception:  # a bot whose module is not built yet
            rows.append({"name": name, "roles": [], "timed": False, "cores": 1})
            continue
        rows.append({"name": name, "roles": sorted(bot.roles), "timed": bot.timed,
                     "cores": bot.cores})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        timed = "  (time-based)" if row["timed"] else ""
        click.echo(f"{row['name']:<12} {', '.join(row['roles']) or '(unavailable)'}{timed}")
