"""The sans-I/O server core: connections, sessions, auth, dispatch and every match.

:class:`Core` takes raw frames and connection events with the current time and returns
:data:`server.outputs.Output` actions (send a message, close a connection, store a finished
game). The asyncio shell (:mod:`server.app`) only moves bytes and runs timers around it.
The core owns three parts with a module each: the checks a ``hello`` passes
(:mod:`server.admission`), the admin lobby (:mod:`server.lobby`) and the ladder's and
people's games (:mod:`server.ladder_games`).

>>> core = Core(ServerConfig())
>>> conn = core.connect(0.0)
>>> [type(o.message).__name__ for o in core.receive(conn, '{"type": "list_bots"}', 0.0)]
['Error']
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from game import Termination, seat_name
from game.board import Board, board_digest, board_to_dict
from protocol import (
    BOT_ERROR_TEXT,
    PROTOCOL_VERSION,
    BoardMsg,
    BotErrorMsg,
    Error,
    ErrorCode,
    GameStart,
    Hello,
    Leave,
    Leaving,
    ListBots,
    MatchOver,
    MatchResult,
    Message,
    MoveMsg,
    Ping,
    Play,
    Pong,
    ProtocolError,
    Resign,
    Role,
    Side,
    StartMatch,
    Watch,
    Welcome,
    YourTurn,
    decode,
)
from records import GameRecord
from server.admission import Admission, check_labels, secret_matches
from server.config import ServerConfig
from server.ladder import Ladder
from server.ladder_games import CHECKER_NAME, CHECKER_SESSION, LadderGames
from server.lobby import Lobby
from server.match import Match, MatchSpec, Outputs, keyed_seat_seed
from server.outputs import (
    AccountStatus,
    AccountVerdict,
    Authenticate,
    Close,
    Finished,
    Output,
    Send,
    refuse_hello,
)
from server.ratelimit import TokenBucket
from server.session import SERVER_VERSION, Connection, Session, session_name

log = logging.getLogger(__name__)

MAX_MOVE_TEXT = 64
"""Longest ``move`` text accepted (the longest real one, a double move on a 199-station map,
has 31 characters); a longer one is a protocol violation (``bad_value``)."""


class Core:
    """Every game and connection of one server process (sans-I/O)."""

    def __init__(self, config: ServerConfig, wall: Callable[[float], datetime] | None = None,
                 new_id: Callable[[str], str] | None = None) -> None:
        """A core with no connections (``wall``: clock for records; ``new_id``: ids)."""
        self.config = config
        self.wall = wall
        self.new_id = new_id or (lambda prefix: f"{prefix}{secrets.token_hex(6)}")
        self.conns: dict[int, Connection] = {}
        self.sessions: dict[str, Session] = {}
        self.matches: dict[str, Match] = {}
        self.admins: dict[str, str] = {}  # game id -> session id of the admin
        #: Game id -> ids of the connections watching it (spectators).
        self.watchers: dict[str, set[int]] = {}
        self._next_conn = 0
        self.closing = False
        #: What :meth:`next_deadline` last returned (when the shell's timer wakes next).
        self._armed: float | None = None
        #: Set when a game got a deadline before that: the timer must wake up earlier
        #: (cleared by :meth:`next_deadline`).
        self.rearm = False
        #: The time of the event being handled (when a game that ends now ended).
        self._now = 0.0
        #: The key of the seat seeds of games started without one (ladder, play, checks,
        #: an admin's start_match without ``seat_seed``): drawn at start, never stored
        #: (each game's seat seed is, in its record's log).
        self.seat_key = secrets.token_bytes(32)
        #: The admin's ``list_bots`` and ``start_match``.
        self.lobby = Lobby(config, self.sessions, self.new_id, self)
        #: The standing ladder (``config.ladder``), its check games and people's games.
        self.ladder_games = LadderGames(config, self.sessions, self.new_id, wall, self)
        #: The checks a ``hello`` passes (names, registrations, refused account checks).
        self.admission = Admission(config, reserved=(CHECKER_NAME,))

    @property
    def ladder(self) -> Ladder | None:
        """The standing ladder's matchmaking and live ratings (``None``: no ladder)."""
        return self.ladder_games.ladder

    def ladder_standings(self, now: float) -> dict[str, list[dict[str, object]]]:
        """The live ladder per ruleset at ``now``, with who is connected
        (:meth:`server.ladder_games.LadderGames.standings`); empty without a ladder."""
        return self.ladder_games.standings(now)

    def people_standings(self) -> dict[str, list[dict[str, object]]]:
        """The Play page's rating pool per ruleset; empty without a ladder."""
        return self.ladder_games.people()

    # ------------------------------------------------------------------ connections

    def connect(self, now: float, foreign_origin: str | None = None,
                address: str | None = None) -> int:
        """Register a new connection; returns its id. ``foreign_origin``: the connection
        comes from a web page whose origin the shell does not allow (named in the error
        that refuses its ``hello``); ``address``: its remote address, where registrations
        are counted and people's games bounded (``None``: unknown)."""
        self._next_conn += 1
        conn = Connection(self._next_conn,
                          TokenBucket(self.config.rate_per_s, self.config.burst, now),
                          foreign_origin=foreign_origin, address=address)
        self.conns[conn.id] = conn
        return conn.id

    def disconnect(self, conn_id: int, now: float) -> list[Output]:
        """A connection closed; its session's games start their grace period."""
        conn = self.conns.pop(conn_id, None)
        if conn is not None:
            self._unwatch(conn)
        if conn is None or conn.session is None or conn.session.conn != conn_id:
            return []
        session = conn.session
        session.conn = None
        self.ladder_games.left(session, now)
        out = self.ladder_games.step(now) if self.ladder_games.due else []
        if not session.games:
            self.sessions.pop(session.id, None)
            return out
        for game in session.games:
            match = self.matches[game]
            match.detach(session.id, now)
            self._note_deadline(match)
        return out

    def receive(self, conn_id: int, text: str | bytes, now: float) -> list[Output]:
        """Handle one frame from ``conn_id``."""
        self._now = now
        out = self._receive(conn_id, text, now)
        if self.ladder_games.due:
            out += self.ladder_games.step(now)
        return out

    def _receive(self, conn_id: int, text: str | bytes, now: float) -> list[Output]:
        conn = self.conns.get(conn_id)
        if conn is None:
            return []
        if not conn.bucket.take(now):
            return self._rate_limited(conn)
        conn.limited_notice = False
        if not isinstance(text, str):
            return self._violation(conn, ErrorCode.BAD_JSON, "binary frame: every message is "
                                   "a JSON object in a text frame", now)
        try:
            message = decode(text, self.config.max_size)
        except ProtocolError as exc:
            return self._violation(conn, exc.code, str(exc), now, exc.ref)
        try:
            return self._dispatch(conn, message, now)
        except ProtocolError as exc:
            return [Send(conn.id, Error(exc.code, str(exc), message.TYPE))]

    def violation(self, conn_id: int, code: ErrorCode, text: str, now: float) -> list[Output]:
        """The shell saw a protocol violation it could not pass on (e.g. an oversized frame)."""
        self._now = now
        conn = self.conns.get(conn_id)
        out = [] if conn is None else self._violation(conn, code, text, now)
        if self.ladder_games.due:
            out += self.ladder_games.step(now)
        return out

    # ------------------------------------------------------------------ timers

    def tick(self, now: float) -> list[Output]:
        """Run clocks and grace periods due at ``now``."""
        self._now = now
        out: list[Output] = []
        for match in list(self.matches.values()):
            if (deadline := match.next_deadline()) is not None and deadline <= now:
                out += self.route(match, match.tick(now))
        wake = self.ladder_games.wake
        if (self.ladder_games.pauses_over(now) or self.ladder_games.due
                or (wake is not None and wake <= now)):
            out += self.ladder_games.step(now)
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has work (a game's clock or grace period, a ladder
        pause's end), or ``None``. Until a game gets an earlier deadline or a bot a pause
        (:attr:`rearm`), :meth:`tick` has nothing to do before then."""
        times = [d for m in self.matches.values() if (d := m.next_deadline()) is not None]
        if (pause := self.ladder_games.next_deadline()) is not None:
            times.append(pause)
        if self.ladder_games.wake is not None:  # house bots may play each other again
            times.append(self.ladder_games.wake)
        self._armed = min(times) if times else None
        self.rearm = False
        return self._armed

    def wake_at(self, when: float) -> None:
        """:meth:`tick` has work at ``when`` (for the ladder): set :attr:`rearm` if that
        is before the armed deadline."""
        if self._armed is None or when < self._armed:
            self.rearm = True

    def _note_deadline(self, match: Match) -> None:
        """Set :attr:`rearm` if ``match`` now has a deadline before the armed one."""
        self._note_time(match.next_deadline())

    def _note_time(self, deadline: float | None) -> None:
        """Set :attr:`rearm` if ``deadline`` is before the armed one."""
        if deadline is not None and (self._armed is None or deadline < self._armed):
            self.rearm = True

    def shutdown(self, now: float) -> list[Output]:
        """Abort every running game (recorded as ``aborted``) and refuse new ones."""
        self.closing = True
        self._now = now
        out: list[Output] = []
        for match in list(self.matches.values()):
            out += self.route(match, match.abort(now))
        return out

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, conn: Connection, message: Message, now: float) -> list[Output]:
        if not isinstance(message, CLIENT_TYPES):
            return self._violation(conn, ErrorCode.UNKNOWN_TYPE,
                                   f"{message.TYPE} is a server-to-client message", now)
        if isinstance(message, Hello):
            return self._hello(conn, message, now)
        session = conn.session
        if session is None:
            return self._violation(conn, ErrorCode.NOT_AUTHENTICATED,
                                   f"send hello before {message.TYPE}", now)
        return self._dispatch_session(conn, session, message, now)

    def _dispatch_session(self, conn: Connection, session: Session, message: Message,
                          now: float) -> list[Output]:
        """Hand a message of an authenticated connection to its handler."""
        if isinstance(message, MoveMsg):
            return self._move(conn, session, message, now)
        if isinstance(message, BotErrorMsg):
            return self._bot_error(conn, session, message, now)
        if isinstance(message, Ping):
            return [Send(conn.id, Pong(message.nonce))]
        if isinstance(message, Pong):
            return []
        if isinstance(message, Watch):
            return self._watch(conn, message)
        if isinstance(message, Play):
            return self.ladder_games.play(conn, session, message, now)
        if isinstance(message, Resign):
            return self._resign(conn, session, message, now)
        if isinstance(message, Leave):
            return self._leave(conn, session)
        assert isinstance(message, ListBots | StartMatch)
        return self.lobby.handle(conn, session, message, now)

    def _hello(self, conn: Connection, hello: Hello, now: float) -> list[Output]:
        if conn.session is not None:
            raise ProtocolError(ErrorCode.ALREADY_AUTHENTICATED, "hello was already accepted")
        if conn.pending is not None:
            raise ProtocolError(ErrorCode.ALREADY_AUTHENTICATED,
                                "hello is being checked: wait for welcome")
        if hello.protocol != PROTOCOL_VERSION:
            return refuse_hello(conn.id, ErrorCode.UNSUPPORTED_VERSION,
                                f"protocol {hello.protocol} is not supported; this server "
                                f"speaks {PROTOCOL_VERSION}")
        problem = check_labels(hello)
        if problem is not None:
            return self._violation(conn, ErrorCode.BAD_VALUE, problem, now)
        refused = self.admission.name_refused(conn, hello, self.sessions.values(), self.ladder)
        if refused is not None:
            return refused
        refused = self.ladder_games.refused(conn, hello)
        if refused is not None:
            return refused
        if conn.foreign_origin is not None:
            return refuse_hello(conn.id, ErrorCode.FORBIDDEN_ORIGIN,
                                f"web pages from origin {conn.foreign_origin!r:.100} may not "
                                "connect to this server (only its own pages, and origins "
                                "its operator allows with yard serve --allow-origin ORIGIN)")
        if hello.register:
            refused = self.admission.registration_refused(conn, hello, now)
            if refused is not None:
                return refused
        return self._check_token(conn, hello, now)

    def _check_token(self, conn: Connection, hello: Hello, now: float) -> list[Output]:
        """A well-formed ``hello``: check its bot's fixed token, or have the shell check its
        account (:class:`server.outputs.Authenticate`: a bot's account, a person's claim),
        or check the admin token; then accept it."""
        if hello.role is Role.HUMAN and (hello.register or hello.token is not None):
            return self._authenticate(conn, hello, now)
        if hello.role is Role.BOT:
            fixed = self.config.bot_tokens.get(hello.name)
            if fixed is None and self.config.accounts:
                return self._authenticate(conn, hello, now)
            if (fixed is not None or self.config.bot_tokens) and \
                    not secret_matches(fixed, hello.token):
                return refuse_hello(conn.id, ErrorCode.BAD_TOKEN,
                                    f"bot {hello.name!r:.40} needs a valid token")
        if hello.role is Role.ADMIN and not secret_matches(self.config.admin_token,
                                                            hello.token):
            return refuse_hello(conn.id, ErrorCode.BAD_TOKEN,
                                "admin actions need the admin token (yard serve prints "
                                "where its token file is)")
        return self._accept(conn, hello, now)

    def _authenticate(self, conn: Connection, hello: Hello, now: float) -> list[Output]:
        """Have the shell check ``hello``'s account token, or make its account (off the
        loop); its ``hello`` waits in ``conn.pending``."""
        conn.pending = hello
        if hello.register:
            self.admission.registrations.begin(conn.id, conn.address, now)
        return [Authenticate(conn.id, session_name(hello), hello.token, hello.register)]

    def authenticated(self, conn_id: int, verdict: AccountVerdict, now: float
                      ) -> list[Output]:
        """The shell's answer to :class:`Authenticate` for ``conn_id``: go on with its
        ``hello``, or refuse it."""
        self._now = now
        self.admission.registrations.end(conn_id)
        conn = self.conns.get(conn_id)
        if conn is None or conn.pending is None:
            if verdict.status is AccountStatus.REGISTERED:
                log.warning("connection %d closed before its new account's token was sent",
                            conn_id)
            return []
        hello, conn.pending = conn.pending, None
        if verdict.status in (AccountStatus.OK, AccountStatus.REGISTERED):
            return self._accept(conn, hello, now, session_name(hello), verdict.token)
        return self.admission.refusal(conn.id, hello, verdict)

    def _accept(self, conn: Connection, hello: Hello, now: float,
                account: str | None = None, account_token: str | None = None
                ) -> list[Output]:
        """A checked ``hello``: resume its session, or open a new one (``account``: the
        account it proved; ``account_token``: a just-registered account's token, sent
        once)."""
        if hello.resume is not None:
            return self._resume(conn, hello, hello.resume, now)
        if account is not None:
            limit = self.config.max_account_connections
            live = sum(1 for s in self.sessions.values()
                       if s.account == account and s.conn is not None)
            if live >= limit:
                return refuse_hello(conn.id, ErrorCode.ACCOUNT_LIMIT,
                                    f"account {account!r:.40} has {live} connections open "
                                    f"(at most {limit} per account)")
        name = session_name(hello)
        session = Session(self.new_id("s"), name, hello.version, hello.role,
                          hello.role is Role.ADMIN, secrets.token_urlsafe(18), conn.id,
                          instance=hello.instance, account=account,
                          ladder=frozenset(hello.ladder or ()), max_games=hello.max_games or 1,
                          roles=frozenset(hello.roles or Side))
        self.sessions[session.id] = session
        conn.session = session
        log.info("session %s: %s %s (%s%s%s%s)", session.id, session.name, session.version,
                 session.role.value, "" if hello.instance is None
                 else f", instance {hello.instance}", "" if account_token is None
                 else ", new account", "" if not session.ladder
                 else f", ladder {','.join(sorted(session.ladder))} x{session.max_games}")
        out: list[Output] = [Send(conn.id, self._welcome(session, [], account_token))]
        if session.ladder:
            out += self.ladder_games.joined(session, now)
        return out

    def _resume(self, conn: Connection, hello: Hello, token: str, now: float
                ) -> list[Output]:
        # The token only works together with the name and role it was issued to (whose
        # bot or admin token ``_hello`` has checked), and only once: it is rotated.
        session = next((s for s in self.sessions.values()
                        if secret_matches(s.resume_token, token)), None)
        name = session_name(hello)
        if session is None or session.name != name or session.role is not hello.role:
            return refuse_hello(conn.id, ErrorCode.BAD_RESUME_TOKEN,
                                "no session of yours with that resume token: it was used "
                                "already, or the session is gone with its games (the server "
                                "restarted, or they ended or were forfeited while you were "
                                "away); connect again without resume")
        out: list[Output] = []
        if session.conn is not None and session.conn in self.conns:
            old = self.conns.pop(session.conn)
            self._unwatch(old)
            out.append(Close(old.id, "session resumed on another connection"))
        session.conn = conn.id
        session.resume_token = secrets.token_urlsafe(18)
        conn.session = session
        games = sorted(session.games)
        out.append(Send(conn.id, self._welcome(session, games)))
        for game in games:
            out += self.route(self.matches[game], self.matches[game].attach(session.id, now))
        log.info("session %s resumed (%d games)", session.id, len(games))
        return out

    def _welcome(self, session: Session, games: list[str], token: str | None = None
                 ) -> Welcome:
        return Welcome(session.id, session.resume_token, SERVER_VERSION, PROTOCOL_VERSION,
                       games, token, self.config.grace_s)

    def _move(self, conn: Connection, session: Session, msg: MoveMsg, now: float
              ) -> list[Output]:
        if len(msg.move) > MAX_MOVE_TEXT:  # no move is this long; kept out of the game's log
            return self._violation(conn, ErrorCode.BAD_VALUE,
                                   f"move: {len(msg.move)} characters, at most {MAX_MOVE_TEXT}",
                                   now)
        match = self.matches.get(msg.game)
        if match is None or not match.holds(session.id):
            return [Send(conn.id, Error(ErrorCode.UNKNOWN_GAME,
                                        f"no game {msg.game!r:.40} with a seat of yours",
                                        msg.game[:40]))]
        return self.route(match, match.handle_move(session.id, msg, now))

    def _bot_error(self, conn: Connection, session: Session, msg: BotErrorMsg, now: float
                   ) -> list[Output]:
        """A bot gives up a game (its seat forfeits at once). ``message`` is stored and
        shown in replays: one printable line of at most :data:`BOT_ERROR_TEXT` characters,
        else a protocol violation (``bad_value``), kept out of the game's log."""
        problem = None
        if len(msg.message) > BOT_ERROR_TEXT:
            problem = (f"bot_error.message: {len(msg.message)} characters, at most "
                       f"{BOT_ERROR_TEXT}")
        elif not msg.message.isprintable():
            problem = "bot_error.message contains control or unprintable characters"
        elif msg.seat is not None and len(msg.seat) > MAX_MOVE_TEXT:
            problem = f"bot_error.seat: {len(msg.seat)} characters, at most {MAX_MOVE_TEXT}"
        if problem is not None:
            return self._violation(conn, ErrorCode.BAD_VALUE, problem, now, msg.game[:40])
        match = self.matches.get(msg.game)
        if match is None or not match.holds(session.id):
            return [Send(conn.id, Error(ErrorCode.UNKNOWN_GAME,
                                        f"no game {msg.game!r:.40} with a seat of yours",
                                        msg.game[:40]))]
        return self.route(match, match.handle_bot_error(session.id, msg, now))

    def _resign(self, conn: Connection, session: Session, msg: Resign, now: float
                ) -> list[Output]:
        """A player gives a game up: its side loses (``resigned``, not a fault)."""
        match = self.matches.get(msg.game)
        if match is None or not match.holds(session.id):
            return [Send(conn.id, Error(ErrorCode.UNKNOWN_GAME,
                                        f"no game {msg.game!r:.40} with a seat of yours",
                                        msg.game[:40]))]
        return self.route(match, match.forfeit_session(session.id, Termination.RESIGNED,
                                                        now, "resigned"))

    def _leave(self, conn: Connection, session: Session) -> list[Output]:
        """``session`` takes no new games from now on (the ladder's, an admin's, a
        person's); it plays the ones it has to their end."""
        if not session.leaving:
            session.leaving = True
            self.ladder_games.leaving(session)
            log.info("session %s (%s) is leaving after %d games", session.id, session.name,
                     len(session.games))
        return [Send(conn.id, Leaving(sorted(session.games)))]

    def _watch(self, conn: Connection, msg: Watch) -> list[Output]:
        match = self.matches.get(msg.game)
        if match is None:
            return [Send(conn.id, Error(ErrorCode.UNKNOWN_GAME,
                                        f"no running game {msg.game!r:.40}", msg.game[:40]))]
        conn.watching.add(match.game_id)
        self.watchers.setdefault(match.game_id, set()).add(conn.id)
        return [*self._board(conn.id, match), Send(conn.id, match.watching())]

    def _board(self, conn_id: int, match: Match) -> list[Output]:
        """The ``board`` message of ``match``'s board, if connection ``conn_id`` has not
        had it yet (sent before the game's first message, once per connection)."""
        conn = self.conns.get(conn_id)
        board = match.spec.rules.board
        digest = board_digest(board)
        if conn is None or digest in conn.boards:
            return []
        conn.boards.add(digest)
        return [Send(conn_id, board_message(board))]

    def _unwatch(self, conn: Connection) -> None:
        for game in conn.watching:
            watchers = self.watchers.get(game)
            if watchers is not None:
                watchers.discard(conn.id)
                if not watchers:
                    del self.watchers[game]

    # ------------------------------------------------------------------ routing

    def start(self, spec: MatchSpec, now: float, *first: Output, admin: str | None = None
              ) -> list[Output]:
        """Start the game ``spec`` (``first``: what to send before its messages;
        ``admin``: the session of the admin that asked for it, told when it ends). A spec
        without a seat seed gets one from the server's key (never from its deal, which the
        two games of a pair share)."""
        if spec.seat_seed is None:
            spec = replace(spec, seat_seed=keyed_seat_seed(self.seat_key, spec.game_id))
        if admin is not None:
            self.admins[spec.game_id] = admin
        match = Match(spec, self.wall)
        self.matches[match.game_id] = match
        for sid in match.sessions():
            self.sessions[sid].games.add(match.game_id)
        return [*first, *self.route(match, match.start(now))]

    def route(self, match: Match, outputs: Outputs) -> list[Output]:
        """``match``'s ``outputs`` as sends to its players' and watchers' connections
        (each player its board before its game's first message; the server's random
        player's turns answered), then the game stored if it ended."""
        watchers = self.watchers.get(match.game_id)
        if not watchers:  # the usual case: players only
            return self._route_players(match, outputs)
        out: list[Output] = []
        checker: list[YourTurn] = []
        sent: set[tuple[int, int]] = set()  # (conn, message): a player that also watches
        for recipient, message in outputs:  # its game gets each broadcast once
            if recipient is None:
                if watchers:  # in connection order, as they connected
                    out += [Send(c, message) for c in sorted(watchers)
                            if (c, id(message)) not in sent]
            elif (conn := self.sessions[recipient].conn) is not None:
                if type(message) is YourTurn:
                    # The answer to a turn we asked for is never a flood: a bot playing
                    # many games at once on one connection must not be rate limited.
                    self.conns[conn].bucket.credit()
                elif type(message) is GameStart:
                    out += self._board(conn, match)
                out.append(Send(conn, message))
                if watchers:
                    sent.add((conn, id(message)))
            elif recipient == CHECKER_SESSION and type(message) is YourTurn:
                checker.append(message)
        out = self._after_route(match, out)
        return (out + self.ladder_games.checker_moves(match, checker, self._now) if checker
                else out)

    def _route_players(self, match: Match, outputs: Outputs) -> list[Output]:
        """:meth:`route` for a game nobody watches."""
        out: list[Output] = []
        sessions = self.sessions
        checker: list[YourTurn] = []
        for recipient, message in outputs:
            if recipient is not None and (conn := sessions[recipient].conn) is not None:
                if type(message) is YourTurn:  # see route
                    self.conns[conn].bucket.credit()
                elif type(message) is GameStart:
                    out += self._board(conn, match)
                out.append(Send(conn, message))
            elif recipient == CHECKER_SESSION and type(message) is YourTurn:
                checker.append(message)
        out = self._after_route(match, out)
        return (out + self.ladder_games.checker_moves(match, checker, self._now) if checker
                else out)

    def _after_route(self, match: Match, out: list[Output]) -> list[Output]:
        """``out``, plus the store (and ``match_over``) of a game that just ended; else the
        game's next deadline noted."""
        if match.finished:
            if match.record is not None:
                out += self._finished(match, match.record)
        else:
            self._note_deadline(match)
        return out

    def _finished(self, match: Match, record: GameRecord) -> list[Output]:
        """Forget the ended game; store it (then ``match_result``), and with
        ``match_over`` asked for, tell its admin at once that it ended."""
        del self.matches[match.game_id]
        for sid in match.sessions():
            session = self.sessions.get(sid)
            if session is None:
                continue
            session.games.discard(match.game_id)
            if session.conn is None and not session.games:
                del self.sessions[sid]
        for conn_id in self.watchers.pop(match.game_id, ()):
            if (watcher := self.conns.get(conn_id)) is not None:
                watcher.watching.discard(match.game_id)
        if self.ladder_games.is_check(match.game_id):
            return self.ladder_games.check_over(match, record)
        outcome, spec = record.outcome, match.spec
        result = MatchResult(match.game_id, outcome.winner, outcome.termination,
                             None if outcome.seat is None else seat_name(outcome.seat),
                             record.moves, spec.tag, spec.tournament_id, spec.schedule_id)
        admin = self.sessions.get(self.admins.pop(match.game_id, ""))
        notify = admin.conn if admin else None
        if notify is not None and (starter := self.conns.get(notify)) is not None:
            # Like a bot's move on a turn we sent: the ``start_match`` of a game that has
            # ended is no flood, so a runner may start games as fast as they finish.
            starter.bucket.credit()
        finished = Finished(record, notify, result)
        out = self.ladder_games.result(match, record, self._now)
        self._note_time(self.ladder_games.next_deadline())  # a pause that just began
        if notify is None or not spec.notify_over:
            return [*out, finished]
        return [*out, Send(notify, MatchOver(**vars(result))), finished]  # the same fields

    # ------------------------------------------------------------------ faults

    def _violation(self, conn: Connection, code: ErrorCode, text: str, now: float,
                   ref: str | None = None) -> list[Output]:
        conn.violations += 1
        out: list[Output] = [Send(conn.id, Error(code, text, ref))]
        if conn.violations < self.config.max_violations:
            return out
        out.append(Close(conn.id, f"too many protocol violations ({conn.violations})"))
        session = conn.session
        if session is not None:
            for game in sorted(session.games):
                match = self.matches[game]
                # Nothing more reaches a closing connection (the shell drops what is
                # sent to it after the Close): logged, so the game's rebuilt messages
                # for this holder stop here as well.
                match.detach(session.id, now)
                out += self.route(match, match.forfeit_session(
                    session.id, Termination.PROTOCOL_VIOLATION, now,
                    f"{conn.violations} protocol violations, last: {code.value}"))
        return out

    def _rate_limited(self, conn: Connection) -> list[Output]:
        if conn.limited_notice:
            return []
        conn.limited_notice = True
        return [Send(conn.id, Error(ErrorCode.RATE_LIMITED,
                                    "too many messages; this one was dropped"))]


CLIENT_TYPES = (Hello, MoveMsg, BotErrorMsg, Watch, ListBots, StartMatch, Play, Resign, Leave,
                Ping, Pong)
"""The message types a client may send; any other is a protocol violation."""

@lru_cache(maxsize=64)
def board_message(board: Board) -> BoardMsg:
    """``board`` as the protocol's ``board`` message (the JSON map format, plus the grid's
    size)."""
    data = board_to_dict(board)
    return BoardMsg(data["name"], data["stations"], data["edges"], data["detective_starts"],
                    data["mrx_starts"], data.get("positions"),
                    board.width if board.is_grid else None,
                    board.height if board.is_grid else None)
