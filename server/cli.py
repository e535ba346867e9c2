"""``yard serve`` (run a match server) and ``yard match`` (play one game between bots)."""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import json
import os
import signal
import sys
import tomllib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import click

from bots.spec import BOT_SPEC, BOT_SPEC_LIST, BotSpec
from db.cli import db_option
from game.errors import YardError
from protocol import OnTimeout, Policy, StartMatch, TimeControl, to_json
from protocol.messages import MatchResult
from server.admin import AdminClient, AdminError
from server.app import GameSink, MatchServer, refusal_slots
from server.core import ServerConfig
from server.engines import (
    ENGINE,
    ENGINE_HELP,
    Engine,
    EngineCommand,
    engine_table,
    spec_engine,
    start_engine,
)
from server.logs import configure as configure_logging
from server.logs import raise_open_file_limit
from server.native import native_status
from server.processes import Child, start_server
from server.tournament.runner import TournamentSpec, bot_roles


class ServerConfigError(YardError):
    """A server option or token file is invalid."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_token_file(path: str) -> tuple[dict[str, str], str | None]:
    """Read bot tokens (``[bots] name = "token"``) and an optional ``admin_token``."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ServerConfigError(f"token file {path}: {exc}") from None
    bots = data.get("bots", {})
    if not isinstance(bots, dict) or not all(isinstance(v, str) for v in bots.values()):
        raise ServerConfigError(f"token file {path}: [bots] must map names to token strings")
    admin = data.get("admin_token")
    if admin is not None and not isinstance(admin, str):
        raise ServerConfigError(f"token file {path}: admin_token must be a string")
    return dict(bots), admin


def _open_db(url: str) -> GameSink:
    from db.store import Database

    return Database.connect(url)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port (0 picks a free one).")
@db_option
@click.option("--token-file", type=click.Path(dir_okay=False),
              help='TOML file: [bots] name = "token", and optional admin_token.')
@click.option("--bot-token", multiple=True, metavar="NAME=TOKEN", help="Require a bot token.")
@click.option("--admin-token", help="Token for admin actions (needed off loopback).")
@click.option("--move-time", default=10.0, show_default=True,
              type=click.FloatRange(0, min_open=True), help="Default seconds per move.")
@click.option("--bank-time", default=0.0, show_default=True, type=click.FloatRange(0),
              help="Default bank seconds.")
@click.option("--grace", default=10.0, show_default=True, type=click.FloatRange(0),
              help="Seconds a disconnected bot has to resume before it forfeits.")
@click.option("--ready-file", type=click.Path(dir_okay=False),
              help="Write the server URL here once listening.")
@click.option("--max-connections", default=1024, show_default=True,
              type=click.IntRange(1), help="Open sockets in all (more get HTTP 503).")
@click.option("--max-per-address", default=256, show_default=True,
              type=click.IntRange(1), help="Open sockets per remote address.")
@click.option("--hello-timeout", default=5.0, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds a connection has to send hello before it is closed.")
@click.option("--send-buffer-kib", default=1024, show_default=True, type=click.IntRange(1),
              help="KiB of unread messages a client may have before it is disconnected.")
@click.option("--loop", "loop_name", default="asyncio", show_default=True,
              type=click.Choice(["auto", "asyncio", "uvloop"]),
              help="Event loop: auto is uvloop when installed (pip install 'yard[fast]').")
def serve(host: str, port: int, db_url: str, token_file: str | None,
          bot_token: tuple[str, ...], admin_token: str | None, move_time: float,
          bank_time: float, grace: float, ready_file: str | None, max_connections: int,
          max_per_address: int, hello_timeout: float, send_buffer_kib: int,
          loop_name: str) -> None:
    """Run a match server until SIGINT/SIGTERM (running games are stored as aborted).

    Every option is checked, and the port bound, before the database is opened or created.
    """
    bots, file_admin = load_token_file(token_file) if token_file else ({}, None)
    for pair in bot_token:
        name, sep, token = pair.partition("=")
        if not sep or not name or not token:
            raise ServerConfigError(f"--bot-token {pair!r} must look like NAME=TOKEN")
        bots[name] = token
    admin = admin_token or file_admin
    if move_time <= 0 or bank_time < 0 or grace < 0:
        raise ServerConfigError("--move-time must be > 0, --bank-time and --grace >= 0")
    config = ServerConfig(bot_tokens=bots, admin_token=admin,
                          admin_open=admin is None and is_loopback(host),
                          time_control=TimeControl(move_time, bank_time), grace_s=grace,
                          hello_timeout_s=hello_timeout, max_send_bytes=send_buffer_kib * 1024,
                          max_connections=max_connections,
                          max_per_address=min(max_per_address, max_connections))
    runner = event_loop_runner(loop_name)
    configure_logging()
    _fit_open_files(config)
    runner(_serve(config, db_url, host, port, ready_file))


def event_loop_runner(name: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """``asyncio.run``, or ``uvloop.run`` for ``uvloop`` (and for ``auto`` when uvloop is
    installed); :class:`ServerConfigError` for ``uvloop`` when it is not."""
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise ServerConfigError("--loop uvloop: uvloop is not installed "
                                        "(pip install 'yard[fast]')") from None
        else:
            run: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
            return run
    return asyncio.run


FD_RESERVE = 128
"""Open files kept for everything but client sockets (database, logs, bot pipes)."""


def _fit_open_files(config: ServerConfig) -> None:
    """Raise the open-file limit to what the connection cap needs; if the hard limit is
    lower, lower the cap to fit (with a warning), so a flood meets a clear 503 instead of
    failing accept() calls."""
    def need(cap: int) -> int:
        return cap + refusal_slots(cap) + FD_RESERVE

    limit = raise_open_file_limit(need(config.max_connections))
    if limit >= need(config.max_connections):
        return
    cap = config.max_connections
    while cap > 1 and need(cap) > limit:
        cap = max(1, min(cap - 1, cap * 9 // 10))
    click.echo(f"warning: open-file limit {limit} is too low for --max-connections "
               f"{config.max_connections}; using {cap}", err=True)
    config.max_connections = cap
    config.max_per_address = min(config.max_per_address, cap)


def fallback_path(db_url: str) -> Path:
    """Where games that cannot be stored are kept: next to a SQLite file, else here."""
    from sqlalchemy.engine import make_url

    try:
        url = make_url(db_url)
    except Exception:  # any unparsable URL: the current folder
        return Path("yard-unsaved-games.jsonl")
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(f"{url.database}.unsaved.jsonl")
    return Path("yard-unsaved-games.jsonl")


GC_THRESHOLDS = (50_000, 20, 10)
"""``gc.set_threshold`` of a serving process (CPython's default is 700, 10, 10)."""


def tune_gc() -> None:
    """Garbage collection for a long-running server: what was loaded at start-up (modules,
    the web app, the database engine) is frozen out of every later collection, and the
    young generation is collected every 50,000 net allocations instead of 700. Each
    running game keeps its states and records alive, so with default thresholds the full
    collections, which walk every live object, cost more per move the more games run at
    once (measured in bench/RESULTS.md); cycles are still collected, only less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def _serve(config: ServerConfig, db_url: str, host: str, port: int,
                 ready_file: str | None) -> None:
    from server.web.http import WebApp, web_url

    server = MatchServer(config, None, host, port)
    web = WebApp(db_url, live=server.core, lazy=True)  # the database is opened below
    server.process_request = web.process_request
    try:
        url = await server.start()
    except OSError as exc:
        web.close()
        raise ServerConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    try:
        # Opened once the port is ours, so a server that cannot start creates no database;
        # no game can finish before this (nothing awaited since start()).
        sink: GameSink = _open_db(db_url)
    except BaseException:
        await server.stop()
        raise
    server.sink = sink
    server.fallback_path = fallback_path(db_url)
    if ready_file:
        tmp = Path(f"{ready_file}.tmp")
        tmp.write_text(url + "\n")
        os.replace(tmp, ready_file)
    click.echo(f"listening on {url}")
    click.echo(f"web pages at {web_url(url)}")
    native = native_status()
    if native.compiled:
        click.echo(native.describe())
    if native.stale:
        click.echo(f"warning: the compiled {', '.join(native.stale)} is older than its .py "
                   "source and runs instead of it: rebuild (YARD_NATIVE=1 pip install -e .), or "
                   "go back to pure Python (pip install -e .)", err=True)
    sys.stdout.flush()
    if not config.admin_open and config.admin_token is None:
        click.echo("warning: no --admin-token off loopback: admin actions are disabled",
                   err=True)
    tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    web.close()
    close = getattr(sink, "close", None)
    if callable(close):
        close()
    lost = f", {server.store_failures} NOT stored (see {server.fallback_path})" \
        if server.store_failures else ""
    click.echo(f"stopped; {server.games_saved} games stored{lost}", err=True)


@click.command(cls=EngineCommand)
@click.option("--rules", default="classic", show_default=True, help="Ruleset name or file.")
@click.option("--mrx", required=True, type=BOT_SPEC,
              help="Bot playing Mister X: a connected bot's name with --server, else a bot "
              "spec (built-in or installed bot, file.py:Class, an --engine name; options "
              "as mcts:iterations=200).")
@click.option("--detectives", required=True, type=BOT_SPEC_LIST,
              help="Bot(s) per detective seat, comma separated (cycled).")
@click.option("--engine", "engines", multiple=True, type=ENGINE, metavar="KEY=VALUE...",
              help=ENGINE_HELP)
@click.option("--server", "server_url", help="Running server URL (else start one locally).")
@click.option("--seed", type=int, help="Game seed (random when omitted).")
@click.option("--n-detectives", type=int, help="Number of detectives (ruleset default).")
@click.option("--move-time", default=10.0, show_default=True, help="Seconds per move.")
@click.option("--bank-time", default=0.0, show_default=True, help="Bank seconds per seat.")
@click.option("--on-timeout", type=click.Choice([p.value for p in OnTimeout]),
              default="forfeit", show_default=True)
@click.option("--max-illegal", default=3, show_default=True, help="Bad tries before forfeit.")
@click.option("--admin-token", help="Admin token of the server.")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def match(rules: str, mrx: BotSpec, detectives: list[BotSpec], engines: tuple[Engine, ...],
          server_url: str | None, seed: int | None, n_detectives: int | None,
          move_time: float, bank_time: float, on_timeout: str, max_illegal: int,
          admin_token: str | None, db_url: str, as_json: bool) -> None:
    """Play one game between connected bots (or bots started here) and print it."""
    request = StartMatch(rules, mrx.ref, [d.ref for d in detectives], seed, n_detectives,
                         TimeControl(move_time, bank_time),
                         Policy(OnTimeout(on_timeout), max_illegal))
    if server_url:
        if engines or any(s.options for s in (mrx, *detectives)):
            raise ServerConfigError("--server plays bots already connected to it, by name: "
                                    "--engine and bot options need a local match")
        result = asyncio.run(_remote(server_url, admin_token, request))
    else:
        launch = match_engines([mrx, *detectives], list(engines))
        check_match_roles(request, launch)
        result = asyncio.run(_local(db_url, request, launch))
    _print_result(result, as_json)


def check_match_roles(request: StartMatch, engines: list[Engine]) -> None:
    """Refuse a local match before anything starts when a bot is unknown, rejects its
    options or is seated on a side it does not play (like a tournament does)."""
    spec = TournamentSpec("", [], engines={e.name: e.to_dict() for e in engines})
    roles = asyncio.run(bot_roles(spec))
    for name, role in [(request.mrx, "mrx"), *((d, "detectives") for d in request.detectives)]:
        if role not in roles.get(name, []):
            plays = " and ".join(roles.get(name, [])) or "nothing"
            raise ServerConfigError(f"bot {name!r} cannot play {role} (it plays {plays})")


def match_engines(specs: list[BotSpec], engines: list[Engine]) -> list[Engine]:
    """The engines to start for a local match: an ``--engine`` by name, else ``yard bot``
    with the spec, named by its ref."""
    table = engine_table(engines)
    out: dict[str, Engine] = {}
    seen: dict[str, BotSpec] = {}
    for spec in specs:
        if seen.setdefault(spec.ref, spec) != spec:
            raise ServerConfigError(f"bot {spec.ref!r} is given with different options; name "
                                    f"each configuration with --engine name=NAME bot=SPEC")
        if spec.ref in table:
            if spec.options:
                raise ServerConfigError(f"give options of engine {spec.ref!r} in its "
                                        f"--engine definition (option.KEY=VALUE)")
            out[spec.ref] = table.pop(spec.ref)
        else:
            out[spec.ref] = spec_engine(spec)
    if table:
        raise ServerConfigError(f"--engine {', '.join(sorted(table))}: not playing")
    return list(out.values())


async def _remote(url: str, token: str | None, request: StartMatch) -> MatchResult:
    try:
        async with AdminClient(url, token, name="yard-match") as admin:
            game = await admin.start_match(request)
            return await admin.result(game)
    except AdminError as exc:
        raise ServerConfigError(f"{url}: {exc}") from None


async def _local(db_url: str, request: StartMatch, engines: list[Engine]) -> MatchResult:
    server, url = await start_server(db_url)
    bots: list[Child] = []
    try:
        for engine in engines:
            bots.append(await start_engine(engine, url))
        return await _remote(url, None, request)
    finally:
        for child in bots:
            await child.stop()
        await server.stop()


def _print_result(result: MatchResult, as_json: bool) -> None:
    if as_json:
        data: dict[str, Any] = to_json(result)
        click.echo(json.dumps(data, indent=2))
        return
    winner = result.winner.value if result.winner else "nobody"
    seat = f", seat {result.seat}" if result.seat else ""
    click.echo(f"game {result.game}: {winner} won ({result.termination.value}{seat}) "
               f"after {result.moves} moves")
