"""Plain HTTP on the match server's port: the pages (static files) and the JSON API.

The websockets library hands every incoming request to ``process_request`` before the
websocket handshake; a request without ``Upgrade: websocket`` is answered here and the
connection closed, an upgrade goes on to the match server (or is refused when this is a
``yard web`` browser without one). Only ``GET`` and ``HEAD`` (a ``GET``'s status and
headers) are answered (anything else is 405, and websockets refuses request bodies), and
no route writes: nothing over HTTP can change the database or start a game. Every integer
query parameter is checked against its bounds (:func:`_int`): anything else is a 400
``bad_request`` that says what is allowed.

Routes::

    /                          the single-page app (index.html)
    /static/NAME               a file of host/web/static (names checked, no paths)
    /api/leaderboard           ?rules=R&tournament=T   (= yard leaderboard --json)
    /api/matrix                ?rules=R&tournament=T   (= yard matrix --json)
    /api/tournaments           list with progress and status
    /api/tournaments/ID        one tournament (+ SPRT state when stored)
    /api/games                 ?rules&tournament&player&result&termination&limit&offset
                               (player: a bot, or a tournament's player such as a team)
    /api/games/ID              ?perspective=all|mrx|detectives  (finished games)
    /api/live                  games being played now
    /api/live/ID               a running game's spectator snapshot (detectives' view)
    /api/boards/NAME           board drawing (london, gridWxH) of a board in use here
    /api/ladder                the standing ladder per ruleset (live ratings) and the
                               Play page's pool of people
    /api/ladder/RULES/bots/N   bot N's ladder page: rating after each game, forfeits

Nothing private is served:

- **Withheld games** (:mod:`db.store.queries`): a stored game whose paired game (same
  tournament, same ``pair_key``: the same deal) is still to be played is left out of
  ``/api/games`` (and of its ``total``) and of the ratings, and ``/api/games/ID`` answers
  404 with code ``withheld``, until that game is over or the tournament is finished.
- A tournament shows only the public part of its spec (no engine commands, class paths,
  working directories or bot options) and ``deals``: the secret deal key only once the
  tournament is finished (:mod:`host.web.listings`). Running games are shown from the
  spectators' snapshot only: no seed, no Mister X.
- Error messages never hold the database URL (nor paths from the server's set-up).

Nothing slow runs on the event loop, which also referees the games of ``yard serve``:
every database query and board drawing runs in one of :data:`HEAVY_SLOTS` worker threads
of the app's own; a request that cannot get one within :data:`BUSY_WAIT_S` is answered 503
``busy`` with ``Retry-After``. Board drawings are built once per board in use, and names
of other boards are refused without building anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import http
import json
import logging
import mimetypes
import re
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from sqlalchemy.engine import Engine
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from db.engine import parse_url, safe_url
from db.errors import DatabaseError, GameNotFoundError, ReplayError, TournamentError
from db.store import Database
from db.store.queries import WithheldCache, db_errors, open_read_engine, stored_boards
from host.web.boards import BOARD_NAME, BoardCache, builtin_boards
from host.web.errors import Busy, NotFound, WebError, Withheld
from host.web.ladder import RATINGS_NOTE, bot_page, stored_ladders
from host.web.listings import (
    MAX_LIMIT,
    MAX_OFFSET,
    GameFilter,
    list_games,
    sprt_state,
    tournament_dict,
)
from host.web.live import LiveSource, live_boards, live_game, live_list, running_tournaments
from host.web.ratings_cache import RatingsCache
from host.web.replay import PERSPECTIVES, replay

log = logging.getLogger(__name__)

STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,80}\.(html|css|js|svg|png|txt)$")
RUNNING_GRACE_S = 15.0
COMPUTE_WAIT_S = 3.0
HEAVY_SLOTS = 3
"""Worker threads for the API's database queries and board drawings (at most this many at
once: pure-Python work in a thread still takes the interpreter from the event loop)."""
BUSY_WAIT_S = 1.5
"""Seconds a request may wait for a worker thread (and, while games are played, for its
turn under :data:`PACE_PER_S`) before it is answered 503 ``busy``. Kept well under the
match server's handshake timeout (``hello_timeout_s``, 5 s by default), which also bounds
how long an HTTP answer may take."""
MAX_PAUSE_S = 10.0
"""The longest pause :data:`WORK_SHARE` imposes after one long piece of work."""
WORK_SHARE = 0.25
"""While games are being played on this server, the share of time its worker threads may
compute: after work that took ``c`` seconds of CPU the next starts ``c * (1 / WORK_SHARE -
1)`` seconds later. Python code in a thread holds the interpreter lock that the event loop
needs for every move (it waits up to the switch interval, 5 ms, each time), so games come
first; ``yard web`` and a server without games are not held back."""
PACE_PER_S = 10.0
"""While games are being played on this server, HTTP requests answered per second and
remote address (beyond a burst of :data:`PACE_BURST`, a request waits for its turn, or is
answered 503 ``busy`` if that is more than :data:`BUSY_WAIT_S` away). Each request costs the
event loop about a millisecond (accept, parse, answer, close) whatever it asks, so a
client asking as fast as it is answered would otherwise slow every move."""
PACE_BURST = 40
"""Requests one address may make at once before pacing starts (a page and its files)."""
BOARDS_REFRESH_S = 10.0
"""A board name not known to be in use rereads the stored games' boards at most this
often."""
REPLAY_CACHE = 32
"""Encoded replays kept (stored games never change; a game is cached once it is shown)."""
DATABASE_UNAVAILABLE = "the database cannot be read now; the server's log says why"


class Computing(WebError):
    """Ratings not ready yet (a long first computation); the client should retry."""

    status = 503
    code = "computing"


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a background task's exception (none is lost or logged twice; a busy
    server is not worth a warning)."""
    if not task.cancelled() and task.exception() is not None and \
            not isinstance(task.exception(), Busy):
        log.warning("web background work failed: %s", task.exception())


class Encoded(bytes):
    """A JSON answer already encoded (a board drawing or a replay, kept encoded)."""


_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'{ws}; font-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'")


def _static_files() -> dict[str, bytes]:
    """Every shipped static file by name (read once; the set is fixed at install)."""
    root = resources.files("host.web").joinpath("static")
    return {entry.name: entry.read_bytes() for entry in root.iterdir()
            if entry.is_file() and STATIC_NAME.match(entry.name)}


Handler = Callable[[dict[str, list[str]], list[str]], Awaitable[Any]]


class WebApp:
    """The HTTP side of a server: pages and the read-only API over database ``db_url``.

    ``live`` is the running server's core (for live games); ``None`` for ``yard web``,
    which then also refuses websocket upgrades (``websockets=False``).
    """

    def __init__(self, db_url: str, live: LiveSource | None = None, *,
                 websockets: bool = True, lazy: bool = False) -> None:
        """Pages from ``db_url`` (``live``: the games being played, if any)."""
        self.db_url = db_url
        self._store: Database | None = None
        self._engine: Engine | None = None
        self._ratings: RatingsCache | None = None
        self._withheld: WithheldCache | None = None
        self._open_lock = threading.Lock()
        if not lazy:
            self.open()
        self.live = live
        self.websockets = websockets
        self.static = _static_files()
        self.requests = 0
        self._seen_live: dict[str, float] = {}
        self._pool = ThreadPoolExecutor(HEAVY_SLOTS, thread_name_prefix="yard-web")
        self._slots: asyncio.Semaphore | None = None
        self._resume_at = 0.0  # monotonic time before which no work starts while games run
        self._paced: dict[str, float] = {}  # address -> its next request's theoretical time
        self._budget_lock = threading.Lock()
        self.boards = BoardCache()
        self._stored_boards: set[str] = set()
        self._boards_read_at = -BOARDS_REFRESH_S
        self._boards_refresh: asyncio.Future[None] | None = None
        self._private = _private_texts(db_url)
        self._replays: OrderedDict[tuple[str, str], Encoded] = OrderedDict()
        self._rating_jobs: dict[tuple[str | None, str | None, str], asyncio.Future[Any]] = {}
        self._routes: list[tuple[re.Pattern[str], Handler]] = [
            (re.compile(r"^leaderboard$"), self._leaderboard),
            (re.compile(r"^matrix$"), self._matrix),
            (re.compile(r"^tournaments$"), self._tournaments),
            (re.compile(r"^tournaments/([^/]{1,64})$"), self._tournament),
            (re.compile(r"^games$"), self._games),
            (re.compile(r"^games/([^/]{1,64})$"), self._game),
            (re.compile(r"^live$"), self._live),
            (re.compile(r"^live/([^/]{1,64})$"), self._live_game),
            (re.compile(r"^boards/([A-Za-z0-9]{1,20})$"), self._board),
            (re.compile(r"^ladder$"), self._ladder),
            (re.compile(r"^ladder/([A-Za-z0-9_.-]{1,64})/bots/([^/]{1,64})$"), self._ladder_bot),
        ]

    def open(self) -> None:
        """Connect to the database (it must exist); idempotent."""
        with self._open_lock:
            if self._store is None:
                store = Database.connect(self.db_url, create=False)
                self._engine = open_read_engine(self.db_url)
                self._withheld = WithheldCache(self._engine)
                self._ratings = RatingsCache(store, self._engine, withheld=self._withheld)
                self._store = store

    @property
    def store(self) -> Database:
        """The database (opened on first use)."""
        self.open()
        assert self._store is not None
        return self._store

    @property
    def engine(self) -> Engine:
        """A read engine of its own for the API's queries."""
        self.open()
        assert self._engine is not None
        return self._engine

    @property
    def withheld(self) -> WithheldCache:
        """Which stored games are withheld now (cached)."""
        self.open()
        assert self._withheld is not None
        return self._withheld

    @property
    def ratings(self) -> RatingsCache:
        """The ratings cache."""
        self.open()
        assert self._ratings is not None
        return self._ratings

    def close(self) -> None:
        """Release the database connections and the worker threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._store is not None:
            self._store.close()
        if self._engine is not None:
            self._engine.dispose()

    async def off_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in one of the app's :data:`HEAVY_SLOTS` worker threads; waits at
        most :data:`BUSY_WAIT_S` for one (then :class:`~host.web.errors.Busy`), and while
        games are being played here, for its turn under :data:`WORK_SHARE`. A slot is
        given back when the work really ends, even if the request that asked for it is
        gone (its client disconnected), so the bound holds."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(HEAVY_SLOTS)
        slots = self._slots
        deadline = time.monotonic() + BUSY_WAIT_S
        try:
            await asyncio.wait_for(slots.acquire(), BUSY_WAIT_S)
        except TimeoutError:
            raise Busy("the server is busy; retry in a moment") from None
        try:
            while self._games_running() and time.monotonic() < self._resume_at:
                if self._resume_at > deadline:
                    raise Busy("the server is busy with its games; retry in a moment")
                await asyncio.sleep(self._resume_at - time.monotonic())
        except BaseException:
            slots.release()
            raise
        loop = asyncio.get_running_loop()

        def work() -> Any:
            start = time.thread_time()
            try:
                return fn(*args)
            finally:
                self._charge(time.thread_time() - start)

        def release(_: Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(slots.release)

        try:
            future = self._pool.submit(work)
        except BaseException:
            slots.release()
            raise
        future.add_done_callback(release)
        return await asyncio.wrap_future(future)

    def _games_running(self) -> bool:
        return self.live is not None and bool(self.live.matches)

    async def _pace(self, connection: Any) -> None:
        """Wait for this request's turn under :data:`PACE_PER_S` (a generic cell rate
        algorithm per remote address); :class:`~host.web.errors.Busy` if it is more than
        :data:`BUSY_WAIT_S` away."""
        address = getattr(connection, "yard_address", None)
        if address is None:
            remote = getattr(connection, "remote_address", None)
            address = str(remote[0]) if isinstance(remote, tuple) and remote else "?"
        now = time.monotonic()
        due = max(self._paced.get(address, now), now)
        wait = due - now - (PACE_BURST - 1) / PACE_PER_S
        if wait > BUSY_WAIT_S:
            raise Busy("too many requests from your address while games are being played; "
                       "retry in a moment")
        if len(self._paced) > 4096:  # forget addresses that are back to a full burst
            self._paced = {a: t for a, t in self._paced.items() if t > now}
        self._paced[address] = due + 1 / PACE_PER_S
        if wait > 0:
            await asyncio.sleep(wait)

    def _charge(self, cpu_s: float) -> None:
        """Work that took ``cpu_s`` seconds of CPU ended while games are being played: move
        :attr:`_resume_at` (at most :data:`MAX_PAUSE_S` ahead)."""
        if not self._games_running():
            return
        with self._budget_lock:
            now = time.monotonic()
            self._resume_at = min(max(self._resume_at, now) + cpu_s * (1 / WORK_SHARE - 1),
                                  now + MAX_PAUSE_S)

    # ------------------------------------------------------------------ entry point

    async def process_request(self, connection: Any, request: Request) -> Response | None:
        """The websockets ``process_request`` hook."""
        if "websocket" in request.headers.get("Upgrade", "").lower():
            if self.websockets:
                return None
            return self._text(http.HTTPStatus.FORBIDDEN, "this server only shows pages\n")
        self.requests += 1
        method = getattr(request, "method", "GET")
        if method not in ("GET", "HEAD"):
            response = self._text(http.HTTPStatus.METHOD_NOT_ALLOWED,
                                  "read-only: GET and HEAD only\n")
            response.headers["Allow"] = "GET, HEAD"
            return response
        response = await self._answer(connection, request)
        if method == "HEAD":  # the GET's status and headers (Content-Length included)
            return dataclasses.replace(response, body=b"")
        return response

    async def _answer(self, connection: Any, request: Request) -> Response:
        """The answer to a ``GET`` of ``request.path``."""
        try:
            if self._games_running():
                await self._pace(connection)
            if self._store is None and request.path.startswith("/api/"):
                await self.off_loop(self.open)
            return await self._route(request)
        except (DatabaseError, Busy) as exc:  # opening the database
            return self._failure(exc)
        except Exception:
            log.exception("HTTP %s failed", request.path[:200])
            return self._json(500, {"error": {"code": "internal",
                                              "message": "internal server error"}})

    async def _route(self, request: Request) -> Response:
        parts = urlsplit(request.path)
        path = unquote(parts.path)
        host = request.headers.get("Host", "")
        if path in ("/", "/index.html"):
            return self._file("index.html", host)
        if path.startswith("/static/"):
            name = path[len("/static/"):]
            if not STATIC_NAME.match(name) or name not in self.static:
                return self._text(http.HTTPStatus.NOT_FOUND, "not found\n")
            return self._file(name, host)
        if path.startswith("/api/"):
            return await self._api(path[len("/api/"):].rstrip("/"), parts.query)
        return self._text(http.HTTPStatus.NOT_FOUND, "not found\n")

    async def _api(self, path: str, query_text: str) -> Response:
        try:
            query = parse_qs(query_text, keep_blank_values=False, max_num_fields=20)
        except ValueError:
            return self._error(400, "bad_request", "too many query parameters")
        for pattern, handler in self._routes:
            match = pattern.match(path)
            if match is None:
                continue
            try:
                result = await handler(query, list(match.groups()))
            except (WebError, GameNotFoundError, TournamentError, ReplayError,
                    DatabaseError) as exc:
                return self._failure(exc)
            if isinstance(result, Encoded):
                return self._raw_json(200, result)
            return self._json(200, result)
        return self._error(404, "not_found", f"no API endpoint /api/{path[:60]}")

    def _failure(self, exc: Exception) -> Response:
        """The answer to a request that failed with ``exc``: its status and code, and a
        message without the database URL (a database error's details go to the log)."""
        if isinstance(exc, WebError):
            response = self._error(exc.status, exc.code, self._public(str(exc)))
            if isinstance(exc, Computing):
                response.headers["Retry-After"] = "2"
            elif isinstance(exc, Busy):
                response.headers["Retry-After"] = "1"
            return response
        if isinstance(exc, GameNotFoundError | TournamentError):
            return self._error(404, "not_found", self._public(str(exc)))
        if isinstance(exc, ReplayError):
            return self._error(422, "bad_record", self._public(str(exc)))
        log.warning("web API: %s", exc)
        return self._error(503, "database", DATABASE_UNAVAILABLE)

    def _public(self, message: str) -> str:
        """``message`` without the database URL (stores name it in their errors)."""
        for private in self._private:
            if private:
                message = message.replace(f" in database {private}", "")
                message = message.replace(f"database {private}: ", "")
                message = message.replace(private, "the database")
        return message

    # ------------------------------------------------------------------ endpoints

    async def _leaderboard(self, query: dict[str, list[str]], _: list[str]) -> Any:
        return await self._rated(query, "leaderboard")

    async def _matrix(self, query: dict[str, list[str]], _: list[str]) -> Any:
        return await self._rated(query, "matrix")

    async def _rated(self, query: dict[str, list[str]], which: str) -> Any:
        """Ratings off the event loop. A cold computation on a large database can outlast
        the handshake timeout that also bounds HTTP answers (the match server's
        ``hello_timeout_s``, 5 s by default; websockets' own default is 10 s): after
        :data:`COMPUTE_WAIT_S` the client gets 503 ``computing`` (retry) while the
        computation goes on and fills the cache."""
        rules, tournament = _one(query, "rules"), _one(query, "tournament")

        def sections() -> dict[str, Any]:
            try:
                return self.ratings.sections(rules, tournament, which)
            except TournamentError:
                raise NotFound(f"no tournament {tournament!r:.80}") from None

        # Requests for numbers being computed wait for that computation (clients retry
        # after ``computing``), so it holds one worker thread, not one per retry.
        key = (rules, tournament, which)
        work = self._rating_jobs.get(key)
        if work is None:
            work = self._rating_jobs[key] = asyncio.ensure_future(self.off_loop(sections))
            work.add_done_callback(lambda _: self._rating_jobs.pop(key, None))
        try:
            return await asyncio.wait_for(asyncio.shield(work), COMPUTE_WAIT_S)
        except TimeoutError:
            work.add_done_callback(_consume)
            raise Computing("the ratings are being computed; retry in a few seconds") \
                from None

    def _running(self) -> set[str]:
        """Tournaments with a game on this server now or a few seconds ago (a runner
        starts the next game right after the last one, so a poll may fall in between)."""
        now = time.monotonic()
        for tid in running_tournaments(self.live):
            self._seen_live[tid] = now
        return {tid for tid, seen in self._seen_live.items() if now - seen < RUNNING_GRACE_S}

    async def _tournaments(self, query: dict[str, list[str]], _: list[str]) -> Any:
        running = self._running()
        infos = await self.off_loop(self.store.list_tournaments)
        return {"tournaments": [tournament_dict(i, i.tournament_id in running and not i.finished)
                                | {"sprt": sprt_state(i)} for i in infos]}

    async def _tournament(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        tid = groups[0]
        running = self._running()

        def read() -> dict[str, Any]:
            try:
                info = self.store.get_tournament(tid)
            except TournamentError:
                raise NotFound(f"no tournament {tid!r:.80}") from None
            out = tournament_dict(info, tid in running and not info.finished)
            out["sprt"] = sprt_state(info)
            return out

        return await self.off_loop(read)

    async def _games(self, query: dict[str, list[str]], _: list[str]) -> Any:
        flt = GameFilter(ruleset=_one(query, "rules"), tournament_id=_one(query, "tournament"),
                         player=_one(query, "player"), result=_one(query, "result"),
                         termination=_one(query, "termination"),
                         limit=_int(query, "limit", 50, 1, MAX_LIMIT),
                         offset=_int(query, "offset", 0, 0, MAX_OFFSET))

        def read() -> dict[str, Any]:
            with db_errors("list games"):
                return list_games(self.engine, flt, self.withheld)

        return await self.off_loop(read)

    async def _game(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        perspective = _one(query, "perspective") or "all"
        game_id = groups[0]

        if perspective not in PERSPECTIVES:
            raise WebError(f"perspective must be one of {', '.join(PERSPECTIVES)}")
        key = (game_id, perspective)
        cached = self._replays.get(key)
        if cached is not None:  # shown once, so no longer withheld: that never changes
            self._replays.move_to_end(key)
            return cached

        def read() -> Encoded:
            with db_errors("read game"):
                withheld = game_id in self.withheld.get().ids
            if withheld:
                raise Withheld(f"game {game_id} is withheld: its paired game is still being "
                               "played (both start from the same deal); it is shown once "
                               "that game is over")
            payload = replay(self.store.load_game(game_id), perspective)
            return Encoded(json.dumps(payload, separators=(",", ":"), allow_nan=False)
                           .encode())

        try:
            body: Encoded = await self.off_loop(read)
        except GameNotFoundError:
            if self.live is not None and game_id in self.live.matches:
                raise NotFound(f"game {game_id} is still being played: watch it live "
                               f"(/api/live/{game_id})") from None
            raise NotFound(f"no game {game_id!r:.80}") from None
        self._replays[key] = body
        while len(self._replays) > REPLAY_CACHE:
            self._replays.popitem(last=False)
        return body

    async def _ladder(self, query: dict[str, list[str]], _: list[str]) -> Any:
        standings = getattr(self.live, "ladder_standings", None)
        people = getattr(self.live, "people_standings", None)
        if callable(standings) and callable(people):
            ladders = standings(time.monotonic())
            if ladders:
                return {"live": True, "note": RATINGS_NOTE, "ladders": ladders,
                        "people": people()}
        return await self.off_loop(stored_ladders, self.store)

    async def _ladder_bot(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        rules, name = groups[0], urllib.parse.unquote(groups[1])
        return await self.off_loop(bot_page, self.store, rules, name)

    async def _live(self, query: dict[str, list[str]], _: list[str]) -> Any:
        return {"games": live_list(self.live)}

    async def _live_game(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        return live_game(self.live, groups[0])

    async def _board(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        name = groups[0]
        body = self.boards.get(name)
        if body is None:
            if not BOARD_NAME.match(name) or not await self._in_use(name):
                raise NotFound(f"no board {name!r:.40} on this server: it draws the boards "
                               "of the rulesets it has (built-in, played or being played)")
            body = await self.off_loop(self.boards.build, name)
        return Encoded(body)

    async def _in_use(self, name: str) -> bool:
        """Whether board ``name`` belongs to a ruleset this server has: a built-in one, one
        being played here, or one of a stored game (reread at most every
        :data:`BOARDS_REFRESH_S` seconds, one read at a time)."""
        if name in builtin_boards() or name in live_boards(self.live) or \
                name in self._stored_boards:
            return True
        refresh = self._boards_refresh
        if refresh is None and time.monotonic() - self._boards_read_at >= BOARDS_REFRESH_S:
            refresh = self._boards_refresh = asyncio.ensure_future(self._read_boards())
            refresh.add_done_callback(_consume)
        if refresh is not None:
            await asyncio.shield(refresh)
        return name in self._stored_boards

    async def _read_boards(self) -> None:
        try:
            def read() -> set[str]:
                with db_errors("read boards"):
                    return stored_boards(self.engine)

            self._stored_boards = await self.off_loop(read)
        finally:
            self._boards_read_at = time.monotonic()
            self._boards_refresh = None

    # ------------------------------------------------------------------ responses

    def _headers(self, content_type: str, length: int, host: str = "") -> Headers:
        ws = f" ws://{host}" if host and _HOST.match(host) and self.websockets else ""
        return Headers([
            ("Content-Type", content_type), ("Content-Length", str(length)),
            ("Connection", "close"), ("Cache-Control", "no-cache"),
            ("Content-Security-Policy", _CSP.format(ws=ws)),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY")])

    def _file(self, name: str, host: str) -> Response:
        body = self.static[name]
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if name.endswith(".js"):
            kind = "text/javascript"
        if kind.startswith("text/") or kind == "image/svg+xml":
            kind += "; charset=utf-8"
        return Response(200, "OK", self._headers(kind, len(body), host), body)

    def _json(self, status: int, payload: Any) -> Response:
        body = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
        return self._raw_json(status, body)

    def _raw_json(self, status: int, body: bytes) -> Response:
        return Response(status, http.HTTPStatus(status).phrase,
                        self._headers("application/json; charset=utf-8", len(body)), body)

    def _error(self, status: int, code: str, message: str) -> Response:
        return self._json(status, {"error": {"code": code, "message": message[:300]}})

    def _text(self, status: http.HTTPStatus, text: str) -> Response:
        body = text.encode()
        return Response(status.value, status.phrase,
                        self._headers("text/plain; charset=utf-8", len(body)), body)


def _private_texts(db_url: str) -> list[str]:
    """How error messages may name the database: its URL as given, with the password
    masked, and a SQLite file's path; longest first."""
    texts = {db_url}
    try:
        parsed = parse_url(db_url)
    except DatabaseError:
        return [db_url]
    texts.add(safe_url(parsed))
    texts.add(parsed.render_as_string(hide_password=False))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        texts.add(str(parsed.database))
    return sorted((t for t in texts if t), key=len, reverse=True)


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if not values:
        return None
    value = values[-1].strip()
    if len(value) > 400:
        raise WebError(f"{name} is too long")
    return value or None


_INTEGER = re.compile(r"-?[0-9]{1,30}")


def _int(query: dict[str, list[str]], name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as an integer from ``low`` to ``high`` (``default`` when
    absent); :class:`~host.web.errors.WebError` (400) for anything else: other text,
    forms Python's ``int`` would also take (``1_000``, ``+5``, non-ASCII digits), or a
    number out of bounds (never handed to the database)."""
    text = _one(query, name)
    if text is None:
        return default
    value = int(text) if _INTEGER.fullmatch(text) else None
    if value is None or not low <= value <= high:
        raise WebError(f"{name} must be an integer from {low} to {high}, not {text!r:.40}")
    return value


def web_url(ws_url: str) -> str:
    """The page address of a server listening on ``ws_url`` (``ws://H:P`` -> ``http://H:P/``)."""
    if ws_url.startswith("wss://"):
        return "https://" + ws_url[len("wss://"):].rstrip("/") + "/"
    return "http://" + ws_url.removeprefix("ws://").rstrip("/") + "/"
