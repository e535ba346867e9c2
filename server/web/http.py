"""Plain HTTP on the match server's port: the pages (static files) and the JSON API.

The websockets library hands every incoming request to ``process_request`` before the
websocket handshake; a request without ``Upgrade: websocket`` is answered here and the
connection closed, an upgrade goes on to the match server (or is refused when this is a
``yard web`` browser without one). Only ``GET`` is answered (anything else is 405, and
websockets refuses request bodies), and no route writes: nothing over HTTP can change the
database or start a game.

Routes::

    /                          the single-page app (index.html)
    /static/NAME               a file of server/web/static (names checked, no paths)
    /api/leaderboard           ?rules=R&tournament=T   (= yard leaderboard --json)
    /api/matrix                ?rules=R&tournament=T   (= yard matrix --json)
    /api/tournaments           list with progress and status
    /api/tournaments/ID        one tournament (+ SPRT state when stored)
    /api/games                 ?rules&tournament&player&result&termination&limit&offset
    /api/games/ID              ?perspective=all|mrx|detectives  (finished games)
    /api/live                  games being played now
    /api/live/ID               a running game's spectator snapshot (detectives' view)
    /api/boards/NAME           board drawing (london, gridWxH)
"""

from __future__ import annotations

import asyncio
import http
import json
import logging
import mimetypes
import re
import threading
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from sqlalchemy.engine import Engine
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from db.errors import DatabaseError, GameNotFoundError, ReplayError, TournamentError
from db.store import Database
from db.store.queries import db_errors, open_read_engine
from server.web.boards import board_by_name
from server.web.errors import NotFound, WebError
from server.web.listings import GameFilter, list_games, sprt_state, tournament_dict
from server.web.live import LiveSource, live_game, live_list, running_tournaments
from server.web.ratings_cache import RatingsCache
from server.web.replay import replay

log = logging.getLogger(__name__)

STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,80}\.(html|css|js|svg|png|txt)$")
RUNNING_GRACE_S = 15.0
COMPUTE_WAIT_S = 3.0


class Computing(WebError):
    """Ratings not ready yet (a long first computation); the client should retry."""

    status = 503
    code = "computing"


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a background computation's exception (none is lost or logged twice)."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("ratings computation failed: %s", task.exception())
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'{ws}; font-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'")


def _static_files() -> dict[str, bytes]:
    """Every shipped static file by name (read once; the set is fixed at install)."""
    root = resources.files("server.web").joinpath("static")
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
        self.db_url = db_url
        self._store: Database | None = None
        self._engine: Engine | None = None
        self._ratings: RatingsCache | None = None
        self._open_lock = threading.Lock()
        if not lazy:
            self.open()
        self.live = live
        self.websockets = websockets
        self.static = _static_files()
        self.requests = 0
        self._seen_live: dict[str, float] = {}
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
        ]

    def open(self) -> None:
        """Connect to the database (it must exist); idempotent."""
        with self._open_lock:
            if self._store is None:
                store = Database.connect(self.db_url, create=False)
                self._engine = open_read_engine(self.db_url)
                self._ratings = RatingsCache(store, self._engine)
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
    def ratings(self) -> RatingsCache:
        """The ratings cache."""
        self.open()
        assert self._ratings is not None
        return self._ratings

    def close(self) -> None:
        """Release the database connections."""
        if self._store is not None:
            self._store.close()
        if self._engine is not None:
            self._engine.dispose()

    # ------------------------------------------------------------------ entry point

    async def process_request(self, connection: Any, request: Request) -> Response | None:
        """The websockets ``process_request`` hook."""
        if "websocket" in request.headers.get("Upgrade", "").lower():
            if self.websockets:
                return None
            return self._text(http.HTTPStatus.FORBIDDEN, "this server only shows pages\n")
        self.requests += 1
        if getattr(request, "method", "GET") != "GET":
            response = self._text(http.HTTPStatus.METHOD_NOT_ALLOWED, "read-only: GET only\n")
            response.headers["Allow"] = "GET"
            return response
        try:
            if self._store is None and request.path.startswith("/api/"):
                await asyncio.to_thread(self.open)
            return await self._route(request)
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
                return self._json(200, await handler(query, list(match.groups())))
            except (NotFound, GameNotFoundError, TournamentError) as exc:
                return self._error(404, "not_found", str(exc))
            except WebError as exc:
                response = self._error(exc.status, exc.code, str(exc))
                if isinstance(exc, Computing):
                    response.headers["Retry-After"] = "2"
                return response
            except ReplayError as exc:
                return self._error(422, "bad_record", str(exc))
            except DatabaseError as exc:
                return self._error(503, "database", str(exc))
        return self._error(404, "not_found", f"no API endpoint /api/{path[:60]}")

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
        work = asyncio.ensure_future(asyncio.to_thread(
            self.ratings.sections, _one(query, "rules"), _one(query, "tournament"), which))
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
        infos = await asyncio.to_thread(self.store.list_tournaments)
        return {"tournaments": [tournament_dict(i, i.tournament_id in running and not i.finished)
                                | {"sprt": sprt_state(i)} for i in infos]}

    async def _tournament(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        tid = groups[0]
        running = self._running()

        def read() -> dict[str, Any]:
            info = self.store.get_tournament(tid)
            out = tournament_dict(info, tid in running and not info.finished)
            out["sprt"] = sprt_state(info)
            return out

        return await asyncio.to_thread(read)

    async def _games(self, query: dict[str, list[str]], _: list[str]) -> Any:
        flt = GameFilter(ruleset=_one(query, "rules"), tournament_id=_one(query, "tournament"),
                         player=_one(query, "player"), result=_one(query, "result"),
                         termination=_one(query, "termination"),
                         limit=_int(query, "limit", 50), offset=_int(query, "offset", 0))

        def read() -> dict[str, Any]:
            with db_errors("list games"):
                return list_games(self.engine, flt)

        return await asyncio.to_thread(read)

    async def _game(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        perspective = _one(query, "perspective") or "all"

        def read() -> dict[str, Any]:
            return replay(self.store.load_game(groups[0]), perspective)

        try:
            return await asyncio.to_thread(read)
        except GameNotFoundError:
            if self.live is not None and groups[0] in self.live.matches:
                raise NotFound(f"game {groups[0]} is still being played: watch it live "
                               f"(/api/live/{groups[0]})") from None
            raise

    async def _live(self, query: dict[str, list[str]], _: list[str]) -> Any:
        return {"games": live_list(self.live)}

    async def _live_game(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        return live_game(self.live, groups[0])

    async def _board(self, query: dict[str, list[str]], groups: list[str]) -> Any:
        return board_by_name(groups[0])

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
        return Response(status, http.HTTPStatus(status).phrase,
                        self._headers("application/json; charset=utf-8", len(body)), body)

    def _error(self, status: int, code: str, message: str) -> Response:
        return self._json(status, {"error": {"code": code, "message": message[:300]}})

    def _text(self, status: http.HTTPStatus, text: str) -> Response:
        body = text.encode()
        return Response(status.value, status.phrase,
                        self._headers("text/plain; charset=utf-8", len(body)), body)


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if not values:
        return None
    value = values[-1].strip()
    if len(value) > 400:
        raise WebError(f"{name} is too long")
    return value or None


def _int(query: dict[str, list[str]], name: str, default: int) -> int:
    text = _one(query, name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise WebError(f"{name} must be an integer") from None


def web_url(ws_url: str) -> str:
    """The page address of a server listening on ``ws_url`` (``ws://H:P`` -> ``http://H:P/``)."""
    if ws_url.startswith("wss://"):
        return "https://" + ws_url[len("wss://"):].rstrip("/") + "/"
    return "http://" + ws_url.removeprefix("ws://").rstrip("/") + "/"
