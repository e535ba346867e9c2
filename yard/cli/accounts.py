"""``yard accounts add|list|revoke|rotate``: bot accounts for ``yard serve --accounts``.

A token is printed once, alone on stdout (``TOKEN=$(yard accounts add mybot)``), when it is
made; the database keeps only a salted hash of it (:mod:`db.store.accounts`). A running
server reads the accounts on every ``hello``: a revoked or rotated token is refused from
the bot's next connection on (sessions already open keep playing until they disconnect).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from db.store import Database
from records import AccountInfo
from yard.cli.options import db_option, json_option


@click.group()
def accounts() -> None:
    """Bot accounts: names bound to tokens, for `yard serve --accounts`."""


@accounts.command("add")
@click.argument("name")
@db_option
def add(name: str, db_url: str) -> None:
    """Add an account for bot NAME and print its token (shown only now)."""
    with Database.connect(db_url) as db:
        token = db.add_account(name)
    click.echo(token)
    click.echo(f"account {name!r} added; the token above is shown only now (the bot "
               f"connects with: yard bot SPEC --name {name} --token-file FILE, or --token)",
               err=True)


@accounts.command("rotate")
@click.argument("name")
@db_option
def rotate(name: str, db_url: str) -> None:
    """Give NAME a new token (printed once; the old one stops working) and re-enable it
    if it was revoked."""
    with Database.connect(db_url, create=False) as db:
        token = db.rotate_account(name)
    click.echo(token)
    click.echo(f"account {name!r}: new token above (shown only now); the old one is "
               "refused from the bot's next connection on", err=True)


@accounts.command("revoke")
@click.argument("name")
@db_option
def revoke(name: str, db_url: str) -> None:
    """Refuse NAME's token from now on (the name stays taken)."""
    with Database.connect(db_url, create=False) as db:
        db.revoke_account(name)
    click.echo(f"account {name!r} revoked: servers refuse its token from its next "
               "connection on (sessions already open play on until they disconnect)",
               err=True)


@accounts.command("list")
@json_option("Print as JSON.")
@db_option
def list_(as_json: bool, db_url: str) -> None:
    """Accounts: name, how made, created, last used, status (never tokens)."""
    with Database.connect(db_url, create=False) as db:
        rows = [_row(info) for info in db.accounts()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no accounts (yard accounts add NAME)", err=True)
        return
    width = max(len(row["name"]) for row in rows)
    click.echo(f"{'name':<{width}}  {'status':<7}  {'source':<12}  {'created':<20}  "
               "last used")
    for row in rows:
        click.echo(f"{row['name']:<{width}}  {row['status']:<7}  {row['source']:<12}  "
                   f"{_short(row['created_at']):<20}  {_short(row['last_used']) or 'never'}")


def _row(info: AccountInfo) -> dict[str, Any]:
    """What ``list`` shows of an account (never its token or hash)."""
    return {"name": info.name, "status": "active" if info.active else "revoked",
            "source": info.source, "created_at": _iso(info.created_at),
            "last_used": _iso(info.last_used), "revoked_at": _iso(info.revoked_at)}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _short(text: str | None) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM:SS`` (UTC)."""
    return "" if text is None else text[:19].replace("T", " ")
