"""The sans-I/O server core: connections, sessions, auth, the lobby and every match.

:class:`Core` takes raw frames and connection events with the current time and returns
:data:`Output` actions (send a message, close a connection, store a finished game). The
asyncio shell (:mod:`server.app`) only moves bytes and runs timers around it.

>>> core = Core(ServerConfig())
>>> conn = core.connect(0.0)
>>> [type(o.message).__name__ for o in core.receive(conn, '{"type": "list_bots"}', 0.0)]
['Error']
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from functools import lru_cache
from typing import NamedTuple

from db.records import GameRecord
from game import Termination, YardError, load_ruleset, seat_name
from game.board import Board, board_digest, board_to_dict
from game.views import rules_from_definition
from protocol import (
    BOT_ERROR_TEXT,
    DEFAULT_MAX_SIZE,
    PROTOCOL_VERSION,
    BoardMsg,
    BotErrorMsg,
    BotInfo,
    Bots,
    Error,
    ErrorCode,
    GameStart,
    Hello,
    ListBots,
    MatchOver,
    MatchResult,
    MatchStarted,
    Message,
    MoveMsg,
    Ping,
    Play,
    Policy,
    Pong,
    ProtocolError,
    Resign,
    Role,
    Side,
    StartMatch,
    TimeControl,
    Watch,
    Welcome,
    YourTurn,
    decode,
)
from protocol.tokens import new_token
from server.ladder import (
    Ladder,
    LadderGame,
    Result,
    ladder_id,
    ladder_rules,
    play_id,
    play_rules,
)
from server.match import Match, MatchSpec, Outputs, Player, keyed_seat_seed
from server.ratelimit import TokenBucket

log = logging.getLogger(__name__)

SERVER_VERSION = "yard-server/0.1"


MAX_MOVE_TEXT = 64
"""Longest ``move`` text accepted (the longest real one, a double move on a 199-station map,
has 31 characters); a longer one is a protocol violation (``bad_value``)."""


class Send(NamedTuple):
    """Send ``message`` on connection ``conn`` (a named tuple: several per move)."""

    conn: int
    message: Message


@dataclass(frozen=True)
class Close:
    """Close connection ``conn`` (``code``: the websocket close code, 1000 when omitted
    except for violations, 1008)."""

    conn: int
    reason: str
    code: int | None = None


@dataclass(frozen=True)
class Finished:
    """Store ``record``; then send ``result`` to ``notify`` (the admin that started it)."""

    record: GameRecord
    notify: int | None
    result: MatchResult


@dataclass(frozen=True)
class Authenticate:
    """Check bot ``name``'s account ``token`` (with ``register``: make the account) and
    hand the :class:`AccountVerdict` to :meth:`Core.authenticated` (database and hashing
    work: the shell does it off the event loop). ``token`` is a secret: never log it."""

    conn: int
    name: str
    token: str | None = field(repr=False)
    register: bool = False


Output = Send | Close | Finished | Authenticate


class AccountStatus(Enum):
    """What an account check found."""

    OK = "ok"                    # the token is the account's
    REGISTERED = "registered"    # a new account was made (its token is in the verdict)
    UNKNOWN = "unknown"          # no account of that name
    WRONG_TOKEN = "wrong_token"  # the account exists; the token is not its own
    REVOKED = "revoked"          # the account's token was revoked
    TAKEN = "taken"              # registration: the name has an account already
    UNAVAILABLE = "unavailable"  # the accounts cannot be read now (database error)


@dataclass(frozen=True)
class AccountVerdict:
    """The answer to :class:`Authenticate`: ``token`` only for ``REGISTERED``."""

    status: AccountStatus
    token: str | None = field(default=None, repr=False)


@dataclass
class ServerConfig:
    """Server policy knobs.

    ``admin_token``: the secret an admin ``hello`` must carry (a fresh random one unless
    given; ``None``: no admin connections at all). ``bot_tokens``: bot names that need a
    fixed token. ``accounts``: every other bot name needs its account's token (checked by
    the shell, :class:`Authenticate`); ``open_registration``: a ``hello`` with
    ``register`` makes an account for an unused name. Per account, at most
    ``max_account_connections`` live connections and ``max_account_games`` games at once.
    The shell enforces ``allowed_origins`` (web pages other than the server's own that may
    connect, :func:`server.auth.origin_allowed`) and the last four: seconds a connection
    has to send ``hello``, bytes queued for a client that does not read before it is
    disconnected, open sockets in all and per remote address."""

    bot_tokens: dict[str, str] = field(default_factory=dict)
    admin_token: str | None = field(default_factory=new_token, repr=False)
    accounts: bool = False
    open_registration: bool = False
    max_account_connections: int = 16
    max_account_games: int = 64
    allowed_origins: tuple[str, ...] = ()
    #: Where ``admin_token`` was read from or created (shown at start-up; ``None``: the
    #: token was given as such).
    admin_token_file: str | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    grace_s: float = 10.0
    max_size: int = DEFAULT_MAX_SIZE
    rate_per_s: float = 200.0
    burst: float = 400.0
    max_violations: int = 25
    hello_timeout_s: float = 5.0
    max_send_bytes: int = 1 << 20
    max_connections: int = 1024
    max_per_address: int = 256
    #: Rulesets of the standing ladder (empty: no ladder, no Play page games).
    ladder: tuple[str, ...] = ()
    #: A ladder bot's rated games before matchmaking goes by rating
    #: (:class:`server.ladder.Ladder`), its forfeits in a row that pause it, and for how
    #: long (doubled for each pause in a row).
    ladder_placement: int = 6
    ladder_pause_after: int = 3
    ladder_pause_s: float = 600.0
    #: A bot new to the ladder first plays two check games (as Mister X, then as the
    #: detectives) against the server's own random player, and is matched only if it
    #: plays both to the end without a fault.
    ladder_check: bool = False
    #: Most games at once a ladder bot may ask for (``hello.max_games``).
    ladder_max_games: int = 16
    #: The clock of a person's game (``play``): per move, and a bank.
    play_time_control: TimeControl = field(
        default_factory=lambda: TimeControl(move_s=60.0, bank_s=600.0))


@dataclass
class Session:
    """An authenticated client; survives reconnects via its resume token."""

    id: str
    name: str
    version: str
    role: Role
    admin: bool
    resume_token: str
    conn: int | None
    games: set[str] = field(default_factory=set)
    instance: str | None = None
    #: The account it authenticated with (``None``: no account needed, or a fixed token).
    account: str | None = None
    #: Ladder rulesets it asked to be matched on, and its most games at once there.
    ladder: frozenset[str] = frozenset()
    max_games: int = 1


@dataclass
class Connection:
    """One websocket connection. ``foreign_origin``: the ``Origin`` of the web page that
    opened it, when the shell does not allow that origin (its ``hello`` is refused);
    ``pending``: its ``hello`` while the shell checks the account token."""

    id: int
    bucket: TokenBucket
    session: Session | None = None
    violations: int = 0
    limited_notice: bool = False
    watching: set[str] = field(default_factory=set)
    foreign_origin: str | None = None
    pending: Hello | None = None
    #: Digests of the boards this connection was sent (``board``, once each).
    boards: set[str] = field(default_factory=set)


class Core:
    """Every game and connection of one server process (sans-I/O)."""

    def __init__(self, config: ServerConfig, wall: Callable[[float], datetime] | None = None,
                 new_id: Callable[[str], str] | None = None) -> None:
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
        #: The standing ladder's matchmaking and live ratings (``config.ladder``).
        self.ladder = (Ladder(config.ladder, placement=config.ladder_placement,
                              pause_after=config.ladder_pause_after,
                              pause_s=config.ladder_pause_s, check=config.ladder_check)
                       if config.ladder else None)
        #: A ladder or play game ended: the ladder may start games (:meth:`_ladder_step`).
        self._ladder_due = False
        #: The time of the event being handled (when a game that ends now ended).
        self._now = 0.0
        #: Ladder check games running (game id -> bot, leg, ruleset) and waiting to start.
        self._checks: dict[str, tuple[str, int, str]] = {}
        self._check_queue: list[tuple[str, int, str]] = []
        self._check_rng = random.Random(secrets.randbits(64))
        #: The key of the seat seeds of games started without one (ladder, play, checks,
        #: an admin's start_match without ``seat_seed``): drawn at start, never stored
        #: (each game's seat seed is, in its record's log).
        self.seat_key = secrets.token_bytes(32)

    # ------------------------------------------------------------------ connections

    def connect(self, now: float, foreign_origin: str | None = None) -> int:
        """Register a new connection; returns its id. ``foreign_origin``: the connection
        comes from a web page whose origin the shell does not allow (named in the error
        that refuses its ``hello``)."""
        self._next_conn += 1
        conn = Connection(self._next_conn,
                          TokenBucket(self.config.rate_per_s, self.config.burst, now),
                          foreign_origin=foreign_origin)
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
        self._ladder_left(session, now)
        if not session.games:
            self.sessions.pop(session.id, None)
            return []
        for game in session.games:
            match = self.matches[game]
            match.detach(session.id, now)
            self._note_deadline(match)
        return []

    def receive(self, conn_id: int, text: str | bytes, now: float) -> list[Output]:
        """Handle one frame from ``conn_id``."""
        self._now = now
        out = self._receive(conn_id, text, now)
        if self._ladder_due:
            out += self._ladder_step(now)
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
        if self._ladder_due:
            out += self._ladder_step(now)
        return out

    # ------------------------------------------------------------------ timers

    def tick(self, now: float) -> list[Output]:
        """Run clocks and grace periods due at ``now``."""
        self._now = now
        out: list[Output] = []
        for match in list(self.matches.values()):
            if (deadline := match.next_deadline()) is not None and deadline <= now:
                out += self._route(match, match.tick(now))
        if self._ladder_due:
            out += self._ladder_step(now)
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has work, or ``None``. Until a game gets an earlier
        deadline (:attr:`rearm`), :meth:`tick` has nothing to do before then."""
        times = [d for m in self.matches.values() if (d := m.next_deadline()) is not None]
        self._armed = min(times) if times else None
        self.rearm = False
        return self._armed

    def _note_deadline(self, match: Match) -> None:
        """Set :attr:`rearm` if ``match`` now has a deadline before the armed one."""
        deadline = match.next_deadline()
        if deadline is not None and (self._armed is None or deadline < self._armed):
            self.rearm = True

    def shutdown(self, now: float) -> list[Output]:
        """Abort every running game (recorded as ``aborted``) and refuse new ones."""
        self.closing = True
        self._now = now
        out: list[Output] = []
        for match in list(self.matches.values()):
            out += self._route(match, match.abort(now))
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
            return self._play(conn, session, message, now)
        if isinstance(message, Resign):
            return self._resign(conn, session, message, now)
        assert isinstance(message, ListBots | StartMatch)
        return self._admin(conn, session, message, now)

    def _hello(self, conn: Connection, hello: Hello, now: float) -> list[Output]:
        if conn.session is not None:
            raise ProtocolError(ErrorCode.ALREADY_AUTHENTICATED, "hello was already accepted")
        if conn.pending is not None:
            raise ProtocolError(ErrorCode.ALREADY_AUTHENTICATED,
                                "hello is being checked: wait for welcome")
        if hello.protocol != PROTOCOL_VERSION:
            return self._refuse(conn, ErrorCode.UNSUPPORTED_VERSION,
                                f"protocol {hello.protocol} is not supported; this server "
                                f"speaks {PROTOCOL_VERSION}")
        problem = _check_labels(hello)
        if problem is not None:
            return self._violation(conn, ErrorCode.BAD_VALUE, problem, now)
        refused = self._ladder_refused(conn, hello)
        if refused is not None:
            return refused
        if conn.foreign_origin is not None:
            return self._refuse(conn, ErrorCode.FORBIDDEN_ORIGIN,
                                f"web pages from origin {conn.foreign_origin!r:.100} may not "
                                "connect to this server (only its own pages, and origins "
                                "its operator allows with yard serve --allow-origin ORIGIN)")
        if hello.register:
            refused = self._registration_refused(conn, hello)
            if refused is not None:
                return refused
        if hello.role is Role.BOT:
            fixed = self.config.bot_tokens.get(hello.name)
            if fixed is None and self.config.accounts:
                conn.pending = hello  # the shell checks the token off the loop
                return [Authenticate(conn.id, hello.name, hello.token, hello.register)]
            if (fixed is not None or self.config.bot_tokens) and \
                    not _secret_matches(fixed, hello.token):
                return self._refuse(conn, ErrorCode.BAD_TOKEN,
                                    f"bot {hello.name!r:.40} needs a valid token")
        if hello.role is Role.ADMIN and not _secret_matches(self.config.admin_token,
                                                            hello.token):
            return self._refuse(conn, ErrorCode.BAD_TOKEN,
                                "admin actions need the admin token (yard serve prints "
                                "where its token file is)")
        return self._accept(conn, hello, now)

    def _registration_refused(self, conn: Connection, hello: Hello) -> list[Output] | None:
        """The refusal of a ``hello`` with ``register``, or ``None`` if it may register
        (whether the name is free is for the account check)."""
        if not (self.config.accounts and self.config.open_registration):
            return self._refuse(conn, ErrorCode.FORBIDDEN,
                                "this server does not register bots (its operator adds "
                                "accounts: yard accounts add NAME, or starts it with "
                                "yard serve --accounts --open-registration)")
        if hello.role is not Role.BOT or hello.resume is not None:
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                "hello.register is for a bot's first connection (role bot, "
                                "no resume)")
        if hello.name in self.config.bot_tokens:
            return self._refuse(conn, ErrorCode.NAME_TAKEN,
                                f"bot name {hello.name!r:.40} is taken")
        return None

    def authenticated(self, conn_id: int, verdict: AccountVerdict, now: float
                      ) -> list[Output]:
        """The shell's answer to :class:`Authenticate` for ``conn_id``: go on with its
        ``hello``, or refuse it."""
        self._now = now
        conn = self.conns.get(conn_id)
        if conn is None or conn.pending is None:
            if verdict.status is AccountStatus.REGISTERED:
                log.warning("connection %d closed before its new account's token was sent",
                            conn_id)
            return []
        hello, conn.pending = conn.pending, None
        name = f"{hello.name!r:.40}"
        match verdict.status:
            case AccountStatus.OK | AccountStatus.REGISTERED:
                return self._accept(conn, hello, now, hello.name, verdict.token)
            case AccountStatus.UNKNOWN:
                how = (", or register it (hello with \"register\": true)"
                       if self.config.open_registration else "")
                return self._refuse(conn, ErrorCode.BAD_TOKEN,
                                    f"bot {name} has no account on this server: ask its "
                                    f"operator for one (yard accounts add NAME){how}")
            case AccountStatus.WRONG_TOKEN:
                return self._refuse(conn, ErrorCode.BAD_TOKEN,
                                    f"bot {name} needs its account's token")
            case AccountStatus.REVOKED:
                return self._refuse(conn, ErrorCode.BAD_TOKEN,
                                    f"the token of account {name} was revoked")
            case AccountStatus.TAKEN:
                return self._refuse(conn, ErrorCode.NAME_TAKEN,
                                    f"bot name {name} is taken: connect with its account's "
                                    "token, or register another name")
        return self._refuse(conn, ErrorCode.ACCOUNTS_UNAVAILABLE,
                            "the server cannot check accounts now; try again later")

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
                return self._refuse(conn, ErrorCode.ACCOUNT_LIMIT,
                                    f"account {account!r:.40} has {live} connections open "
                                    f"(at most {limit} per account)")
        name = hello.name if hello.role is not Role.HUMAN else HUMAN_PREFIX + hello.name
        session = Session(self.new_id("s"), name, hello.version, hello.role,
                          hello.role is Role.ADMIN, secrets.token_urlsafe(18), conn.id,
                          instance=hello.instance, account=account,
                          ladder=frozenset(hello.ladder or ()), max_games=hello.max_games or 1)
        self.sessions[session.id] = session
        conn.session = session
        log.info("session %s: %s %s (%s%s%s%s)", session.id, session.name, session.version,
                 session.role.value, "" if hello.instance is None
                 else f", instance {hello.instance}", "" if account_token is None
                 else ", new account", "" if not session.ladder
                 else f", ladder {','.join(sorted(session.ladder))} x{session.max_games}")
        out: list[Output] = [Send(conn.id, self._welcome(session, [], account_token))]
        if session.ladder and self.ladder is not None:
            self.ladder.join(session.name, self._ladder_rules_of(session.name))
            checking = {c[0] for c in [*self._checks.values(), *self._check_queue]}
            if self.ladder.needs_check(session.name) and session.name not in checking:
                self._check_queue.append((session.name, 1, sorted(session.ladder)[0]))
            out += self._ladder_step(now)
        return out

    def _resume(self, conn: Connection, hello: Hello, token: str, now: float
                ) -> list[Output]:
        # The token only works together with the name and role it was issued to (whose
        # bot or admin token ``_hello`` has checked), and only once: it is rotated.
        session = next((s for s in self.sessions.values()
                        if _secret_matches(s.resume_token, token)), None)
        name = hello.name if hello.role is not Role.HUMAN else HUMAN_PREFIX + hello.name
        if session is None or session.name != name or session.role is not hello.role:
            return self._refuse(conn, ErrorCode.BAD_RESUME_TOKEN,
                                "no session of yours with that resume token (expired, "
                                "already used or unknown)")
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
            out += self._route(self.matches[game], self.matches[game].attach(session.id, now))
        log.info("session %s resumed (%d games)", session.id, len(games))
        return out

    def _welcome(self, session: Session, games: list[str], token: str | None = None
                 ) -> Welcome:
        return Welcome(session.id, session.resume_token, SERVER_VERSION, PROTOCOL_VERSION,
                       games, token)

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
        return self._route(match, match.handle_move(session.id, msg, now))

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
        return self._route(match, match.handle_bot_error(session.id, msg, now))

    def _resign(self, conn: Connection, session: Session, msg: Resign, now: float
                ) -> list[Output]:
        """A player gives a game up: its side loses (``resigned``, not a fault)."""
        match = self.matches.get(msg.game)
        if match is None or not match.holds(session.id):
            return [Send(conn.id, Error(ErrorCode.UNKNOWN_GAME,
                                        f"no game {msg.game!r:.40} with a seat of yours",
                                        msg.game[:40]))]
        return self._route(match, match.forfeit_session(session.id, Termination.RESIGNED,
                                                        now, "resigned"))

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

    # ------------------------------------------------------------------ admin

    def _admin(self, conn: Connection, session: Session, msg: ListBots | StartMatch,
               now: float) -> list[Output]:
        if not session.admin:
            raise ProtocolError(ErrorCode.FORBIDDEN, f"{msg.TYPE} needs the admin token")
        if isinstance(msg, ListBots):
            return [Send(conn.id, Bots(self.bot_list()))]
        if self.closing:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        spec = self._match_spec(msg)
        self.admins[spec.game_id] = session.id
        return self._start(spec, now, Send(conn.id, MatchStarted(spec.game_id, msg.tag)))

    def _start(self, spec: MatchSpec, now: float, *first: Output) -> list[Output]:
        """Start the game ``spec`` (``first``: what to send before its messages). A spec
        without a seat seed gets one from the server's key (never from its deal, which the
        two games of a pair share)."""
        if spec.seat_seed is None:
            spec = replace(spec, seat_seed=keyed_seat_seed(self.seat_key, spec.game_id))
        match = Match(spec, self.wall)
        self.matches[match.game_id] = match
        for sid in match.sessions():
            self.sessions[sid].games.add(match.game_id)
        return [*first, *self._route(match, match.start(now))]

    def bot_list(self) -> list[BotInfo]:
        """Connected bots by name, with version, live session count and instances."""
        sessions: dict[str, list[Session]] = {}
        for s in self._live_bots():
            sessions.setdefault(s.name, []).append(s)
        return [BotInfo(name, group[-1].version, len(group),
                        sorted({s.instance for s in group if s.instance is not None}))
                for name, group in sorted(sessions.items())]

    def _check_account_games(self, chosen: Iterable[Session]) -> None:
        """Refuse a game that would give an account more than ``max_account_games`` games
        at once."""
        limit = self.config.max_account_games
        for account in sorted({s.account for s in chosen if s.account is not None}):
            games = {g for s in self.sessions.values() if s.account == account
                     for g in s.games}
            if len(games) >= limit:
                raise ProtocolError(ErrorCode.ACCOUNT_LIMIT,
                                    f"bot {account!r:.40} plays {len(games)} games at once "
                                    f"(at most {limit} per account)")

    def _live_bots(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.role is Role.BOT and s.conn is not None]

    def _pick(self, name: str, instance: str | None) -> Session:
        """The least busy live session of bot ``name`` (of that ``instance`` when given)."""
        candidates = [s for s in self._live_bots()
                      if s.name == name and (instance is None or s.instance == instance)]
        if not candidates:
            which = "" if instance is None else f" (instance {instance!r:.40})"
            raise ProtocolError(ErrorCode.BOT_NOT_CONNECTED,
                                f"bot {name!r:.40}{which} is not connected")
        return min(candidates, key=lambda s: (len(s.games), s.id))

    def _match_spec(self, msg: StartMatch) -> MatchSpec:
        try:
            rules = (load_ruleset(msg.rules) if isinstance(msg.rules, str)
                     else rules_from_definition(msg.rules))
            if msg.n_detectives is not None:
                rules = rules.with_detectives(msg.n_detectives)
        except YardError as exc:
            raise ProtocolError(ErrorCode.BAD_MATCH, f"start_match: {exc}") from None
        if not msg.detectives:
            raise ProtocolError(ErrorCode.BAD_MATCH, "start_match: no detective bot named")
        tc = msg.time_control or self.config.time_control
        if not tc.move_s > 0 or tc.bank_s < 0:
            raise ProtocolError(ErrorCode.BAD_MATCH, "start_match: move_s must be > 0 and "
                                "bank_s >= 0")
        policy = msg.policy or Policy()
        if policy.max_illegal < 1:
            raise ProtocolError(ErrorCode.BAD_MATCH, "start_match: max_illegal must be >= 1")
        names = [msg.mrx, *(msg.detectives[i % len(msg.detectives)]
                            for i in range(rules.detectives))]
        chosen = {name: self._pick(name, msg.instance) for name in dict.fromkeys(names)}
        self._check_account_games(chosen.values())
        players = [Player(chosen[n].id, n, chosen[n].version, chosen[n].instance)
                   for n in names]
        seed = msg.seed if msg.seed is not None else secrets.randbelow(2**31)
        return MatchSpec(self.new_id("g"), rules, players, seed, tc, policy,
                         self.config.grace_s, msg.tag, msg.tournament_id, msg.schedule_id,
                         msg.match_over, msg.mrx_seed, msg.seat_seed)

    # ------------------------------------------------------------------ ladder and play

    def _ladder_refused(self, conn: Connection, hello: Hello) -> list[Output] | None:
        """The refusal of a ``hello`` whose ladder fields or role this server cannot
        serve, or ``None``."""
        if hello.role is Role.HUMAN:
            if not self.config.ladder:
                return self._refuse(conn, ErrorCode.FORBIDDEN,
                                    "this server has no games for people (its operator "
                                    "starts them with yard serve --ladder RULES)")
            if hello.ladder or hello.register:
                return self._refuse(conn, ErrorCode.BAD_VALUE,
                                    "a person's hello has no ladder or register")
            return None
        if hello.role is Role.BOT and hello.name.startswith(HUMAN_PREFIX):
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                f"bot names may not start with {HUMAN_PREFIX!r} (people's "
                                "names on this server do)")
        if hello.ladder is None and hello.max_games is None:
            return None
        if hello.role is not Role.BOT:
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                "hello.ladder and hello.max_games are for bots")
        limit = self.config.ladder_max_games
        if hello.max_games is not None and not 1 <= hello.max_games <= limit:
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                f"hello.max_games must be 1 to {limit}, got {hello.max_games}")
        if not self.config.ladder:
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                "this server runs no ladder (its operator starts one with "
                                "yard serve --ladder RULES)")
        unknown = [r for r in hello.ladder or () if r not in self.config.ladder]
        if unknown or not hello.ladder:
            return self._refuse(conn, ErrorCode.BAD_VALUE,
                                f"hello.ladder {unknown or hello.ladder!r:.80}: this server's "
                                f"ladder plays {', '.join(self.config.ladder)}")
        return None

    def _ladder_sessions(self, name: str | None = None) -> list[Session]:
        """Live ladder bot sessions (of bot ``name`` when given)."""
        return [s for s in self._live_bots() if s.ladder and (name is None or s.name == name)]

    def _ladder_rules_of(self, name: str) -> frozenset[str]:
        rules: frozenset[str] = frozenset()
        for session in self._ladder_sessions(name):
            rules |= session.ladder
        return rules

    def _ladder_left(self, session: Session, now: float) -> None:
        """``session`` lost its connection: the ladder forgets what waited for its bot, if
        no other session of that bot is live."""
        if self.ladder is not None and session.ladder and not self._ladder_sessions(
                session.name):
            self.ladder.left(session.name, self.wall(now) if self.wall else None)

    def _ladder_step(self, now: float) -> list[Output]:
        """Start the games the ladder proposes for the bots free now."""
        self._ladder_due = False
        if self.ladder is None or self.closing:
            return []
        out: list[Output] = []
        for check in list(self._check_queue):
            spec = self._check_spec(*check)
            if spec is not None:
                self._check_queue.remove(check)
                self._checks[spec.game_id] = check
                out += self._start(spec, now)
        free: dict[str, int] = {}
        for session in self._ladder_sessions():
            free[session.name] = free.get(session.name, 0) + max(
                0, session.max_games - len(session.games))
        for game in self.ladder.propose(free, now):
            spec = self._ladder_spec(game)
            if spec is not None:
                out += self._start(spec, now)
        return out

    def _ladder_spec(self, game: LadderGame) -> MatchSpec | None:
        """The match of ``game``, on sessions of its bots with a free slot."""
        chosen: dict[str, Session] = {}
        for name in dict.fromkeys((game.mrx, game.detective)):
            free = [s for s in self._ladder_sessions(name)
                    if game.rules in s.ladder and len(s.games) < s.max_games]
            if not free:
                return None
            chosen[name] = min(free, key=lambda s: (len(s.games), s.id))
        rules = load_ruleset(game.rules)
        names = [game.mrx, *[game.detective] * rules.detectives]
        players = [Player(chosen[n].id, n, chosen[n].version, chosen[n].instance)
                   for n in names]
        return MatchSpec(self.new_id("g"), rules, players, game.seed,
                         self.config.time_control, Policy(), self.config.grace_s,
                         f"ladder leg {game.leg}", ladder_id(game.rules), None, False,
                         game.mrx_seed)

    def _check_spec(self, name: str, leg: int, rules_name: str) -> MatchSpec | None:
        """The ladder check game ``leg`` of bot ``name`` (1: it plays Mister X, 2: the
        detectives) against the server's own random player; ``None`` while the bot has
        no free slot (or has gone: the check is then dropped)."""
        sessions = self._ladder_sessions(name)
        if not sessions:
            self._check_queue = [c for c in self._check_queue if c[0] != name]
            return None
        free = [s for s in sessions if len(s.games) < s.max_games]
        if not free:
            return None
        bot = min(free, key=lambda s: (len(s.games), s.id))
        checker = self.sessions.setdefault(CHECKER_SESSION, Session(
            CHECKER_SESSION, CHECKER_NAME, SERVER_VERSION, Role.BOT, False,
            secrets.token_urlsafe(18), None))
        rules = load_ruleset(rules_name)
        me = Player(bot.id, bot.name, bot.version, bot.instance)
        house = Player(checker.id, checker.name, checker.version)
        players = ([me, *[house] * rules.detectives] if leg == 1
                   else [house, *[me] * rules.detectives])
        return MatchSpec(self.new_id("g"), rules, players, secrets.randbelow(2**31),
                         self.config.time_control, Policy(), self.config.grace_s,
                         "ladder check", None, None, False, secrets.randbelow(2**31))

    def _checker_moves(self, match: Match, turns: list[YourTurn]) -> list[Output]:
        """The server's own random player answers its turns in a ladder check game."""
        out: list[Output] = []
        for turn in turns:
            move = MoveMsg(turn.game, turn.turn, self._check_rng.choice(turn.legal))
            if not match.finished:
                out += self._route(match, match.handle_move(CHECKER_SESSION, move, self._now))
        return out

    def _check_over(self, match: Match, record: GameRecord) -> list[Output]:
        """A ladder check game ended (it is not stored): go on to the second, or say
        whether the bot passed."""
        assert self.ladder is not None
        name, leg, rules = self._checks.pop(match.game_id)
        outcome = record.outcome
        self._ladder_due = True
        if outcome.termination is Termination.ABORTED:
            return []
        at_fault = None if outcome.seat is None else match.spec.players[outcome.seat].name
        if at_fault != name:
            if leg == 1:
                self._check_queue.append((name, 2, rules))
            else:
                self.ladder.checked(name, None)
                log.info("ladder: %s passed the ladder check", name)
            return []
        role = "Mister X" if leg == 1 else "the detectives"
        reason = (f"ladder check failed: as {role} on {rules} against the server's random "
                  f"player, the game ended {outcome.termination.value} by your fault; fix "
                  "the bot and connect again")
        self.ladder.checked(name, reason)
        log.warning("ladder: %s %s", name, reason)
        return [Send(s.conn, Error(ErrorCode.LADDER_CHECK_FAILED, reason))
                for s in self._ladder_sessions(name) if s.conn is not None]

    def _ladder_result(self, match: Match, record: GameRecord, now: float) -> list[Output]:
        """Rate a finished ladder or play game; tell a bot it was paused."""
        assert self.ladder is not None
        spec = match.spec
        rules = ladder_rules(spec.tournament_id)
        outcome = record.outcome
        at_fault = None if outcome.seat is None else spec.players[outcome.seat].name
        mrx, detective = spec.players[0].name, spec.players[1].name
        if rules is None:
            rules = play_rules(spec.tournament_id)
            if rules is not None:
                self.ladder.played(Result(rules, mrx, detective, outcome.winner,
                                          outcome.termination, at_fault))
            return []
        self._ladder_due = True
        paused = self.ladder.result(Result(rules, mrx, detective, outcome.winner,
                                           outcome.termination, at_fault), now)
        if paused is None or at_fault is None:
            return []
        log.warning("ladder: %s %s", at_fault, paused)
        return [Send(s.conn, Error(ErrorCode.LADDER_PAUSED, paused))
                for s in self._ladder_sessions(at_fault) if s.conn is not None]

    def _play(self, conn: Connection, session: Session, msg: Play, now: float
              ) -> list[Output]:
        """A person asks for a game against a ladder bot."""
        if session.role is not Role.HUMAN:
            raise ProtocolError(ErrorCode.FORBIDDEN, "play is for people (hello role human)")
        if self.closing:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        if msg.rules not in self.config.ladder:
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                f"play.rules {msg.rules!r:.40}: this server plays "
                                f"{', '.join(self.config.ladder)}")
        if session.games:
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                "finish (or resign) your game before asking for another")
        bots = [s for s in self._ladder_sessions(msg.opponent) if msg.rules in s.ladder]
        paused = None if self.ladder is None else self.ladder.paused(msg.opponent, now)
        if paused is not None:
            raise ProtocolError(ErrorCode.BOT_BUSY, f"bot {msg.opponent!r:.40} is {paused}")
        if not bots:
            raise ProtocolError(ErrorCode.BOT_NOT_CONNECTED,
                                f"no bot {msg.opponent!r:.40} on this server's "
                                f"{msg.rules} ladder now")
        free = [s for s in bots if len(s.games) < s.max_games]
        if not free:
            raise ProtocolError(ErrorCode.BOT_BUSY,
                                f"bot {msg.opponent!r:.40} is playing as many games as it "
                                "takes; try again in a moment or pick another")
        bot = min(free, key=lambda s: (len(s.games), s.id))
        rules = load_ruleset(msg.rules)
        me = Player(session.id, session.name, session.version)
        them = Player(bot.id, bot.name, bot.version, bot.instance)
        players = ([me, *[them] * rules.detectives] if msg.side is Side.MRX
                   else [them, *[me] * rules.detectives])
        spec = MatchSpec(self.new_id("g"), rules, players, secrets.randbelow(2**31),
                         self.config.play_time_control, Policy(), self.config.grace_s,
                         "play", play_id(msg.rules), None, False, secrets.randbelow(2**31))
        return self._start(spec, now, Send(conn.id, MatchStarted(spec.game_id, "play")))

    def ladder_standings(self, now: float) -> dict[str, list[dict[str, object]]]:
        """The live ladder per ruleset at ``now`` (:meth:`server.ladder.Ladder.standings`),
        with who is connected; empty without a ladder."""
        if self.ladder is None:
            return {}
        connected = {s.name for s in self._ladder_sessions()}
        return {rules: self.ladder.standings(rules, connected, now)
                for rules in self.ladder.rules}

    def people_standings(self) -> dict[str, list[dict[str, object]]]:
        """The Play page's rating pool per ruleset; empty without a ladder."""
        if self.ladder is None:
            return {}
        return {rules: self.ladder.people(rules) for rules in self.ladder.rules}

    # ------------------------------------------------------------------ routing

    def _route(self, match: Match, outputs: Outputs) -> list[Output]:
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
        return out + self._checker_moves(match, checker) if checker else out

    def _route_players(self, match: Match, outputs: Outputs) -> list[Output]:
        """:meth:`_route` for a game nobody watches."""
        out: list[Output] = []
        sessions = self.sessions
        checker: list[YourTurn] = []
        for recipient, message in outputs:
            if recipient is not None and (conn := sessions[recipient].conn) is not None:
                if type(message) is YourTurn:  # see _route
                    self.conns[conn].bucket.credit()
                elif type(message) is GameStart:
                    out += self._board(conn, match)
                out.append(Send(conn, message))
            elif recipient == CHECKER_SESSION and type(message) is YourTurn:
                checker.append(message)
        out = self._after_route(match, out)
        return out + self._checker_moves(match, checker) if checker else out

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
        if match.game_id in self._checks:
            return self._check_over(match, record)
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
        out: list[Output] = (self._ladder_result(match, record, self._now) if self.ladder
                             else [])
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
                out += self._route(match, match.forfeit_session(
                    session.id, Termination.PROTOCOL_VIOLATION, now,
                    f"{conn.violations} protocol violations, last: {code.value}"))
        return out

    def _rate_limited(self, conn: Connection) -> list[Output]:
        if conn.limited_notice:
            return []
        conn.limited_notice = True
        return [Send(conn.id, Error(ErrorCode.RATE_LIMITED,
                                    "too many messages; this one was dropped"))]

    def _refuse(self, conn: Connection, code: ErrorCode, text: str) -> list[Output]:
        return [Send(conn.id, Error(code, text, "hello")), Close(conn.id, text)]


CLIENT_TYPES = (Hello, MoveMsg, BotErrorMsg, Watch, ListBots, StartMatch, Play, Resign, Ping,
                Pong)
"""The message types a client may send; any other is a protocol violation."""

CHECKER_SESSION = "s-yard-check"
CHECKER_NAME = "yard-check"
"""The server's own random player in ladder check games (a session with no connection)."""

HUMAN_PREFIX = "human:"
"""People (``hello`` role ``human``) play under ``human:NAME``: never a bot's name."""

LABEL_LIMIT = 64
"""Most characters in a ``hello`` name, version or instance."""


def _check_labels(hello: Hello) -> str | None:
    """Why ``hello``'s name, version or instance is refused, or ``None``: the name must be
    1 to 64 printable characters, version and instance at most 64 (stored with games and
    written to logs, so no control characters)."""
    fields = {"name": hello.name, "version": hello.version, "instance": hello.instance}
    for key, value in fields.items():
        if value is None:
            continue
        if key == "name" and not value:
            return "hello.name must not be empty"
        if len(value) > LABEL_LIMIT:
            return f"hello.{key} is longer than {LABEL_LIMIT} characters ({len(value)})"
        if not value.isprintable():
            return f"hello.{key} contains control or unprintable characters"
    return None


@lru_cache(maxsize=64)
def board_message(board: Board) -> BoardMsg:
    """``board`` as the protocol's ``board`` message (the JSON map format, plus the grid's
    size)."""
    data = board_to_dict(board)
    return BoardMsg(data["name"], data["stations"], data["edges"], data["detective_starts"],
                    data["mrx_starts"], data.get("positions"),
                    board.width if board.is_grid else None,
                    board.height if board.is_grid else None)


def _secret_matches(expected: str | None, given: str | None) -> bool:
    """``given`` equals the secret ``expected``, compared in constant time (no timing leak
    of how much of a token is right); ``False`` when either is missing."""
    if expected is None or given is None:
        return False
    return secrets.compare_digest(expected.encode(), given.encode())
