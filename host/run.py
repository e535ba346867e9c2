"""Running the match server (``yard serve``) or the page server (``yard web``) as a
process: options checked, port bound, then the database opened, serving until
SIGINT/SIGTERM.

Every mistake in the options is a :class:`ServerConfigError` raised before the database is
opened or created.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import signal
import sys
import tomllib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url
from websockets.asyncio.server import ServerConnection, serve

from db.store import Database
from game import Ruleset, load_ruleset
from game.errors import YardError
from game.rules import BUILTIN
from host.accounts import AccountChecker
from host.house import House, HouseBot
from host.web.http import WebApp, web_url
from host.writer import GameSink, GameWriter
from protocol import TimeControl
from server.app import MatchServer
from server.auth import (
    AdminTokenError,
    check_origin,
    default_admin_token_file,
    is_loopback,
    server_admin_token,
)
from server.config import ServerConfig
from server.core import Core
from server.gate import HttpConnection, refusal_slots
from server.ladder import ladder_id, play_id
from server.logs import configure as configure_logging
from server.logs import raise_open_file_limit
from server.session import is_guest


class ServerConfigError(YardError):
    """A server option or token file is invalid."""


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
    return Database.connect(url)


def server_config(host: str, token_file: str | None = None, bot_token: tuple[str, ...] = (),
                  admin_token: str | None = None, move_time: float = 10.0,
                  bank_time: float = 0.0, grace: float = 10.0, max_connections: int = 1024,
                  max_per_address: int = 256, hello_timeout: float = 5.0,
                  send_buffer_kib: int = 1024, *, admin_token_file: str | None = None,
                  allow_origin: tuple[str, ...] = (), accounts: bool = False,
                  open_registration: bool = False, max_account_connections: int = 16,
                  max_account_games: int = 64, ladder: tuple[str, ...] = (),
                  ladder_placement: int = 6, ladder_pause_after: int = 3,
                  ladder_max_games: int = 16, play_move_time: float = 60.0,
                  play_bank_time: float = 600.0, ladder_check: bool = False,
                  registrations_per_address: int = 10, registrations_total: int = 100,
                  registration_window: float = 3600.0, registration_queue: int = 8,
                  house: tuple[str, ...] = (), house_rate: float = 1.0) -> ServerConfig:
    """The server configuration of ``yard serve``'s options: bot tokens from ``token_file``
    and ``NAME=TOKEN`` pairs; the admin token from ``admin_token``, else the token file's
    ``admin_token``, else ``admin_token_file`` (default
    :func:`~server.auth.default_admin_token_file`), created with a fresh token when
    missing; web page origins allowed besides the server's own; bot accounts and the bounds
    on registrations (:mod:`server.registration`); the names of the house bots and their
    games a minute against each other."""
    bots, file_admin = _bot_tokens(token_file, bot_token)
    if move_time <= 0 or bank_time < 0 or grace < 0:
        raise ServerConfigError("--move-time must be > 0, --bank-time and --grace >= 0")
    _check_accounts(accounts, open_registration, max_account_connections, max_account_games)
    _check_registrations(registrations_per_address, registrations_total, registration_queue,
                         registration_window)
    _check_ladder(ladder, ladder_placement, ladder_pause_after, ladder_max_games, ladder_check)
    names, custom = ladder_rulesets(ladder)
    if play_move_time <= 0 or play_bank_time < 0:
        raise ServerConfigError("--play-move-time must be > 0, --play-bank-time >= 0")
    if house_rate < 0:
        raise ServerConfigError("--house-rate must be >= 0 (games a minute)")
    origins = _origins(allow_origin)
    admin, where = _admin_token(admin_token or file_admin, admin_token_file)
    config = ServerConfig(bot_tokens=bots, admin_token=admin, admin_token_file=where,
                          accounts=accounts, open_registration=open_registration,
                          max_account_connections=max_account_connections,
                          max_account_games=max_account_games, allowed_origins=tuple(origins),
                          registrations_per_address=registrations_per_address,
                          registrations_total=registrations_total,
                          registration_window_s=registration_window,
                          registration_queue=registration_queue,
                          time_control=TimeControl(move_time, bank_time), grace_s=grace,
                          hello_timeout_s=hello_timeout, max_send_bytes=send_buffer_kib * 1024,
                          max_connections=max_connections,
                          max_per_address=min(max_per_address, max_connections),
                          ladder=names, ladder_rulesets=custom,
                          ladder_placement=ladder_placement,
                          ladder_pause_after=ladder_pause_after,
                          ladder_max_games=ladder_max_games, ladder_check=ladder_check,
                          play_time_control=TimeControl(play_move_time, play_bank_time),
                          house_names=frozenset(house), house_rate=house_rate)
    return config


def _bot_tokens(token_file: str | None, bot_token: tuple[str, ...]
                ) -> tuple[dict[str, str], str | None]:
    """Bot tokens of ``token_file`` and the ``NAME=TOKEN`` pairs, and the file's admin
    token."""
    bots, file_admin = load_token_file(token_file) if token_file else ({}, None)
    for pair in bot_token:
        name, sep, token = pair.partition("=")
        if not sep or not name or not token:
            raise ServerConfigError(f"--bot-token {pair!r} must look like NAME=TOKEN")
        bots[name] = token
    return bots, file_admin


def _check_accounts(accounts: bool, open_registration: bool, max_account_connections: int,
                    max_account_games: int) -> None:
    """Refuse registration without accounts and account limits below 1."""
    if open_registration and not accounts:
        raise ServerConfigError("--open-registration needs --accounts (registration makes "
                                "accounts)")
    if max_account_connections < 1 or max_account_games < 1:
        raise ServerConfigError("--max-account-connections and --max-account-games must "
                                "be at least 1")


def _check_registrations(per_address: int, total: int, queue: int, window: float) -> None:
    if min(per_address, total, queue) < 1 or window <= 0:
        raise ServerConfigError("--registrations-per-address, --registrations-total and "
                                "--registration-queue must be at least 1, "
                                "--registration-window > 0")


def _check_ladder(ladder: tuple[str, ...], placement: int, pause_after: int, max_games: int,
                  check: bool) -> None:
    """Refuse ladder limits out of range, and a check without a ladder."""
    if placement < 0 or pause_after < 1 or max_games < 1:
        raise ServerConfigError("--ladder-placement must be >= 0, --ladder-pause-after and "
                                "--ladder-max-games >= 1")
    if check and not ladder:
        raise ServerConfigError("--ladder-check checks bots new to a ladder: give --ladder "
                                "RULES too")


LADDER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""A ladder ruleset's name: it names the ladder in bots' ``hello``, its games' tournament
id and the ladder pages' URLs (``/api/ladder/NAME/bots/BOT``)."""


def ladder_rulesets(ladder: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, Ruleset]]:
    """The names of the ``--ladder`` rulesets (built-in names or TOML files, each known by
    its ruleset's ``name``) in their order, and the rulesets of the files by name.
    :class:`ServerConfigError` for one that cannot be loaded or has a name unfit for a URL,
    and for two different rulesets with the same name."""
    loaded: dict[str, tuple[str, Ruleset]] = {}  # name -> (first entry, ruleset)
    custom: dict[str, Ruleset] = {}
    for entry in dict.fromkeys(ladder):
        try:
            rules = load_ruleset(entry)
        except YardError as exc:
            raise ServerConfigError(f"--ladder: {exc}") from None
        if not LADDER_NAME.fullmatch(rules.name):
            raise ServerConfigError(f"--ladder {entry}: ruleset name {rules.name!r:.80} must "
                                    "be 1-64 letters, digits, '_', '.' or '-' (it names the "
                                    "ladder)")
        first = loaded.setdefault(rules.name, (entry, rules))
        if first[1].definition() != rules.definition():
            raise ServerConfigError(f"--ladder: {first[0]} and {entry} are different rulesets "
                                    f"with the same name {rules.name!r}: a ladder knows its "
                                    "rulesets by name (rename one in its TOML file)")
        if entry not in BUILTIN:
            custom.setdefault(rules.name, rules)
    return tuple(loaded), custom


def _origins(allow_origin: tuple[str, ...]) -> list[str]:
    """The ``--allow-origin`` values, checked and normalised."""
    origins: list[str] = []
    for text in allow_origin:
        try:
            origins.append(check_origin(text))
        except ValueError as exc:
            raise ServerConfigError(f"--allow-origin: {exc}") from None
    return origins


def _admin_token(given: str | None, admin_token_file: str | None) -> tuple[str, str | None]:
    """The admin token ``given``, else the one in ``admin_token_file`` (created when
    missing), and that file's path (``None`` for a given token)."""
    if given:
        return given, None
    path = Path(admin_token_file) if admin_token_file else default_admin_token_file()
    try:
        admin, _ = server_admin_token(path)
    except AdminTokenError as exc:
        raise ServerConfigError(f"{exc} (--admin-token-file PATH picks another file)"
                                ) from None
    return admin, str(path)


def run_server(config: ServerConfig, db_url: str, host: str, port: int,
               ready_file: str | None = None, loop_name: str = "asyncio",
               house: list[HouseBot] | None = None) -> None:
    """Serve until SIGINT/SIGTERM on the event loop ``loop_name`` (running games are
    stored as aborted), with the ``house`` bots on its ladder."""
    runner = event_loop_runner(loop_name)
    configure_logging()
    fit_open_files(config)
    runner(_serve(config, db_url, host, port, ready_file, House(house or [], config)))


def event_loop_runner(name: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """``asyncio.run``, or ``uvloop.run`` for ``uvloop`` (and for ``auto`` when uvloop is
    installed); :class:`ServerConfigError` for ``uvloop`` when it is not."""
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise ServerConfigError(
                    "--loop uvloop: uvloop is not installed (yard installs it except on "
                    "Windows: pip install uvloop)") from None
        else:
            run: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
            return run
    return asyncio.run


FD_RESERVE = 128
"""Open files kept for everything but client sockets (database, logs, bot pipes)."""


def fit_open_files(config: ServerConfig) -> None:
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
    print(f"warning: open-file limit {limit} is too low for --max-connections "
          f"{config.max_connections}; using {cap}", file=sys.stderr)
    config.max_connections = cap
    config.max_per_address = min(config.max_per_address, cap)


def fallback_path(db_url: str) -> Path:
    """Where games that cannot be stored are kept: next to a SQLite file, else here."""
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


def _local_url(host: str, port: int) -> str:
    """The URL this machine's processes reach the server at (an any-address server on
    its loopback address)."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"ws://[{host}]:{port}" if ":" in host else f"ws://{host}:{port}"


def load_ladder(core: Core, db: Database) -> None:
    """Make the ladder's and the Play page's game groups in ``db`` and rate their stored
    games into ``core``'s ladder, oldest first (before any bot can connect); guests' games
    are not rated."""
    ladder = core.ladder
    assert ladder is not None
    for rules in ladder.rules:
        for group, kind in ((ladder_id(rules), "ladder"), (play_id(rules), "play")):
            db.ensure_group(group, {"format": kind, "rules": rules})
            games = [g for g in db.group_games(group)
                     if not (is_guest(g.mrx) or is_guest(g.detectives))]
            ladder.replay(rules, games, people=kind == "play")


@dataclass
class Serving:
    """A listening match server with its web pages and its database (:func:`open_serving`)."""

    server: MatchServer
    web: WebApp
    writer: GameWriter
    url: str


async def open_serving(config: ServerConfig, db_url: str, host: str, port: int) -> Serving:
    """Listen on ``host:port``, then open the database at ``db_url`` (so a server that cannot
    listen creates no database) and rate a ladder's stored games (``config.ladder``).
    :class:`ServerConfigError` when the port cannot be had; whatever opening the database
    raises (:class:`~db.errors.DatabaseError`) otherwise."""
    writer = GameWriter(None)  # its database is opened below
    server = MatchServer(config, writer, host, port)
    web = WebApp(db_url, live=server.core, lazy=True)  # the database is opened below
    server.process_request = web.process_request
    try:
        url = await server.start()
    except OSError as exc:
        web.close()
        raise ServerConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sink: GameSink | None = None
    try:
        # No game can finish before this (nothing awaited since start()).
        sink = _open_db(db_url)
        if config.ladder and isinstance(sink, Database):
            load_ladder(server.core, sink)
    except BaseException:
        await server.stop()
        web.close()
        _close_sink(sink)
        raise
    writer.sink = sink
    writer.fallback_path = fallback_path(db_url)
    if (config.accounts or config.ladder) and isinstance(sink, Database):
        server.accounts = AccountChecker(sink)  # bots' accounts, people's claimed names
    return Serving(server, web, writer, url)


def _close_sink(sink: GameSink | None) -> None:
    close = getattr(sink, "close", None)
    if callable(close):
        close()


async def close_serving(serving: Serving) -> str:
    """Abort and store the running games, close the connections and the database; returns
    the line that says how many games were stored (and where those that were not are)."""
    writer = serving.writer
    await serving.server.stop()
    serving.web.close()
    _close_sink(writer.sink)
    lost = f", {writer.store_failures} NOT stored (see {writer.fallback_path})" \
        if writer.store_failures else ""
    return f"stopped; {writer.games_saved} games stored{lost}"


async def _serve(config: ServerConfig, db_url: str, host: str, port: int,
                 ready_file: str | None, house: House) -> None:
    house.prepare()
    serving = await open_serving(config, db_url, host, port)
    url = serving.url
    if ready_file:
        tmp = Path(f"{ready_file}.tmp")
        tmp.write_text(url + "\n")
        os.replace(tmp, ready_file)
    print(f"listening on {url}")
    print(f"web pages at {web_url(url)}")
    if config.ladder:
        print(f"ladder: {', '.join(config.ladder)} (bots join with yard bot NAME --url "
              f"{url} --ladder {config.ladder[0]}; people play at {web_url(url)}#/play)")
    house.start(_local_url(host, serving.server.port_number))
    sys.stdout.flush()
    if config.admin_token_file is not None:
        print(f"admin token in {config.admin_token_file} (admin clients on this machine "
              "read it there; elsewhere give them --admin-token-file)", file=sys.stderr)
    if config.accounts:
        print("bots need an account token (yard accounts add NAME"
              + (", or register with hello \"register\": true)" if config.open_registration
                 else ")"), file=sys.stderr)
    if not is_loopback(host) and not config.accounts and not config.bot_tokens:
        print(f"warning: listening on {host} without --accounts or bot tokens: any client "
              "may connect under any bot's name", file=sys.stderr)
    tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await house.stop()  # first: bots that stay would keep answering aborted games
    print(await close_serving(serving), file=sys.stderr)


class WebServerError(YardError):
    """The page server of ``yard web`` cannot start."""


def run_web(db_url: str, host: str, port: int, ready_file: str | None = None) -> None:
    """Serve the pages of the database at ``db_url`` (read-only) until SIGINT/SIGTERM."""
    asyncio.run(_web(WebApp(db_url, websockets=False), host, port, ready_file))


async def _refuse(ws: ServerConnection) -> None:  # never reached: every request is HTTP
    await ws.close(1008, "this server only shows pages")


async def _web(app: WebApp, host: str, port: int, ready_file: str | None) -> None:
    try:
        server = await serve(_refuse, host, port, process_request=app.process_request,
                             create_connection=HttpConnection)
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
    print(f"web pages at {url}")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await server.wait_closed()
    app.close()
