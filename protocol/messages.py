"""The protocol's message types: one frozen dataclass per ``type``.

Field types are the contract: the codec (:mod:`protocol.codec`) checks them on the way in
and the JSON Schemas in ``protocol/schema`` are generated from them. ``view`` fields carry
``game.View.to_dict()`` output, built by the engine's view function, never from raw state.

>>> from protocol.codec import decode, encode
>>> msg = decode('{"type": "move", "game": "g1", "turn": 3, "move": "taxi:45"}')
>>> msg
MoveMsg(game='g1', turn=3, move='taxi:45', seat=None, effort=None)
>>> encode(msg)
'{"type":"move","game":"g1","turn":3,"move":"taxi:45","seat":null,"effort":null}'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from game.outcome import Termination, Winner
from protocol.errors import ErrorCode, ProtocolError

PROTOCOL_VERSION = 1
"""Bumped on any incompatible change; ``hello`` must quote it."""

OMIT_DEFAULT = {"omit_default": True}
"""Field metadata: the codec leaves the field out of the frame while it has its default, so
a field added later does not reach peers that predate it (they refuse unknown fields)
unless it is used."""


class Role(Enum):
    """What a connection is for: playing seats, starting matches, or watching."""

    BOT = "bot"
    ADMIN = "admin"
    SPECTATOR = "spectator"
    #: A person playing from the server's Play page: plays the games it asks for with
    #: ``play``, rated in the server's human pool.
    HUMAN = "human"


class Side(Enum):
    """A side of the game: which one a person plays (``play.side``), which ones a bot plays
    (``hello.roles``)."""

    MRX = "mrx"
    DETECTIVES = "detectives"


class OnTimeout(Enum):
    """What happens when a seat's clock runs out."""

    FORFEIT = "forfeit"
    RANDOM = "random"


@dataclass(frozen=True)
class Message:
    """Base of every message; ``TYPE`` is the wire ``type`` field."""

    TYPE: ClassVar[str] = ""


@dataclass(frozen=True)
class TimeControl:
    """Per-move limit plus an optional bank, in seconds, measured by the server."""

    move_s: float = 10.0
    bank_s: float = 0.0


@dataclass(frozen=True)
class Policy:
    """Fault policy of one game."""

    on_timeout: OnTimeout = OnTimeout.FORFEIT
    max_illegal: int = 3


@dataclass(frozen=True)
class Clock:
    """Time left when a turn starts: for this move, and in the bank after it."""

    move_s: float
    bank_s: float


@dataclass(frozen=True)
class Effort:
    """What a bot says it spent on one move: MCTS playouts, search nodes, search depth.

    Every key is optional; values are non-negative integers. The server stores them with
    the move (it never checks them: the time it measures itself is the fair measure).
    """

    playouts: int | None = None
    nodes: int | None = None
    depth: int | None = None

    def __post_init__(self) -> None:
        """Refuse a value that is negative or does not fit in 63 bits."""
        for name in EFFORT_KEYS:
            value = getattr(self, name)
            if value is not None and not 0 <= value < EFFORT_LIMIT:
                raise ProtocolError(ErrorCode.BAD_VALUE, f"effort.{name} must be an integer "
                                    f"in [0, 2^63), got {value}")

    def to_dict(self) -> dict[str, int]:
        """The reported keys only."""
        return {k: v for k in EFFORT_KEYS if (v := getattr(self, k)) is not None}


EFFORT_KEYS = ("playouts", "nodes", "depth")
"""The keys of :class:`Effort`, in this order everywhere they are written (the move
message, game records, the ``turns`` table)."""
EFFORT_LIMIT = 2**63
"""Effort values must be below this (they are stored as 64-bit integers)."""


@dataclass(frozen=True)
class BotInfo:
    """A connected bot name with its version, number of live sessions and the instance
    labels those sessions announced (sorted; sessions without one are not listed)."""

    name: str
    version: str
    sessions: int
    instances: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rating:
    """A live ladder rating (OpenSkill): mean ``mu``, uncertainty ``sigma``, ``ordinal``
    (``mu - 3 sigma``, what the ladder ranks by) and rated ``games``."""

    mu: float
    sigma: float
    ordinal: float
    games: int


# ---------------------------------------------------------------- client -> server


@dataclass(frozen=True)
class Hello(Message):
    """First message of every connection. ``resume`` reclaims a dropped session.
    ``instance`` tells apart several processes of one bot (e.g. a tournament's game slot).
    ``register`` asks a server with open registration for an account under ``name``
    (left out of the frame when false); a person (role ``human``) claims ``name`` with it,
    and proves the claim on later ``hello``s with the ``token`` its ``welcome`` carried
    (without either, the person plays as a guest). ``ladder``: the rulesets of the server's
    standing ladder this bot wants to be matched on, at most ``max_games`` games at once
    (default 1); ``roles``: the sides it plays there and on the Play page (default both);
    all three left out of the frame when null."""

    TYPE: ClassVar[str] = "hello"
    protocol: int
    name: str
    version: str = ""
    token: str | None = None
    resume: str | None = None
    role: Role = Role.BOT
    instance: str | None = None
    register: bool = field(default=False, metadata=OMIT_DEFAULT)
    ladder: list[str] | None = field(default=None, metadata=OMIT_DEFAULT)
    max_games: int | None = field(default=None, metadata=OMIT_DEFAULT)
    roles: list[Side] | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class MoveMsg(Message):
    """A move for turn ``turn`` of ``game``; ``seat`` is optional (the turn knows it);
    ``effort`` optionally reports the search effort spent on it."""

    TYPE: ClassVar[str] = "move"
    game: str
    turn: int
    move: str
    seat: str | None = None
    effort: Effort | None = None


class BotErrorReason(Enum):
    """Why a bot gives up a game (``bot_error.reason``)."""

    #: Its own code failed: an exception in ``choose`` (or in starting the game).
    ERROR = "error"
    #: It produced no legal move (``None``, a move not in ``legal``, not a move at all).
    ILLEGAL_MOVE = "illegal_move"


BOT_ERROR_TEXT = 200
"""Most characters of ``bot_error.message`` (one printable line)."""


@dataclass(frozen=True)
class BotErrorMsg(Message):
    """The bot gives up ``game`` at once instead of letting its clock run out: its code
    failed (``reason`` ``error``: the game ends ``bot_error``) or it has no legal move to
    send (``illegal_move``). ``turn`` (and optionally ``seat``) name the turn it failed
    on; ``null`` for a failure outside a turn. ``message``: one printable line of at most
    200 characters, stored with the game as the reason (the Python SDK sends the
    exception's type and first line, never a traceback)."""

    TYPE: ClassVar[str] = "bot_error"
    game: str
    message: str
    turn: int | None = None
    seat: str | None = None
    reason: BotErrorReason = BotErrorReason.ERROR


@dataclass(frozen=True)
class Watch(Message):
    """Spectate ``game``: detective-perspective updates live, the truth at the end."""

    TYPE: ClassVar[str] = "watch"
    game: str


@dataclass(frozen=True)
class ListBots(Message):
    """Admin: ask for the connected bots."""

    TYPE: ClassVar[str] = "list_bots"


@dataclass(frozen=True)
class StartMatch(Message):
    """Admin: start a game between connected bots (detective names cycle over seats);
    with ``instance``, only bot sessions that announced that instance play it; with
    ``match_over``, the admin also gets ``match_over`` as soon as the game ends; with
    ``mrx_seed``, ``seed`` deals the detectives and ``mrx_seed`` Mister X (left out of the
    frame when null); ``seat_seed``: the game's secret seed of what its seats are handed at
    random (each side's ``game_start.seed``), for runs that must reproduce them (a
    tournament with ``--seed``); without it the server derives one from its own secret key
    (left out of the frame when null). Never give two games the same one."""

    TYPE: ClassVar[str] = "start_match"
    rules: str | dict[str, Any]
    mrx: str
    detectives: list[str]
    seed: int | None = None
    n_detectives: int | None = None
    time_control: TimeControl | None = None
    policy: Policy | None = None
    tag: str | None = None
    tournament_id: str | None = None
    schedule_id: int | None = None
    instance: str | None = None
    match_over: bool = False
    mrx_seed: int | None = field(default=None, metadata=OMIT_DEFAULT)
    seat_seed: int | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class Play(Message):
    """A person (``hello`` role ``human``) asks for a game on ``rules`` as ``side``
    against bot ``opponent``, a connected ladder bot of that ruleset; answered by
    ``match_started``, then the game's messages as a bot gets them."""

    TYPE: ClassVar[str] = "play"
    rules: str
    side: Side
    opponent: str


@dataclass(frozen=True)
class Resign(Message):
    """A player gives ``game`` up: its side loses at once (termination ``resigned``)."""

    TYPE: ClassVar[str] = "resign"
    game: str


@dataclass(frozen=True)
class Leave(Message):
    """A bot (or person) asks for no new games: the server starts none on this session
    from now on, ladder or admin, and the games it has go on to their end. Answered by
    ``leaving``, which lists them; once they are over the client may close without a
    forfeit."""

    TYPE: ClassVar[str] = "leave"


@dataclass(frozen=True)
class Ping(Message):
    """Keep-alive; answered by ``pong`` with the same nonce. Either side may send it."""

    TYPE: ClassVar[str] = "ping"
    nonce: int | None = None


@dataclass(frozen=True)
class Pong(Message):
    """Answer to ``ping``."""

    TYPE: ClassVar[str] = "pong"
    nonce: int | None = None


# ---------------------------------------------------------------- server -> client


@dataclass(frozen=True)
class Welcome(Message):
    """Reply to ``hello``: the session id, its resume token, and games resumed. ``token``:
    the new account's (or claimed name's) token after a ``hello`` with ``register`` (sent
    once; left out of the frame otherwise). ``grace_s``: seconds the session's games wait
    for it to resume after its connection drops (left out by servers that do not say)."""

    TYPE: ClassVar[str] = "welcome"
    session: str
    resume_token: str
    server: str
    protocol: int
    resumed: list[str] = field(default_factory=list)
    token: str | None = field(default=None, metadata=OMIT_DEFAULT)
    grace_s: float | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class Leaving(Message):
    """Reply to ``leave``: no new game starts on this session; ``games`` are the ones it
    still plays (sorted; empty: it may close now)."""

    TYPE: ClassVar[str] = "leaving"
    games: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Standing(Message):
    """After each of its ladder games (``game``, on ruleset ``rules``), where bot ``name``
    stands: its live rating after that game and its ``rank`` among the ``of`` rated bots of
    that ladder (1: the top)."""

    TYPE: ClassVar[str] = "standing"
    game: str
    rules: str
    name: str
    rating: Rating
    rank: int
    of: int


@dataclass(frozen=True)
class GameStart(Message):
    """A game begins (or is resumed) for the seats this connection holds on one side."""

    TYPE: ClassVar[str] = "game_start"
    game: str
    rules: dict[str, Any]
    seats: list[str]
    players: dict[str, str]
    time_control: TimeControl
    view: dict[str, Any]
    seed: int


@dataclass(frozen=True)
class YourTurn(Message):
    """It is ``seat``'s turn: the seat's full view, its legal moves and its clock."""

    TYPE: ClassVar[str] = "your_turn"
    game: str
    turn: int
    seat: str
    view: dict[str, Any]
    legal: list[str]
    clock: Clock


@dataclass(frozen=True)
class MoveOk(Message):
    """The move for ``turn`` was accepted."""

    TYPE: ClassVar[str] = "move_ok"
    game: str
    turn: int
    seat: str
    move: str


@dataclass(frozen=True)
class Error(Message):
    """Something was wrong; ``ref`` names what it refers to (game id or message type)."""

    TYPE: ClassVar[str] = "error"
    code: ErrorCode
    message: str
    ref: str | None = None


@dataclass(frozen=True)
class Update(Message):
    """A public event: ``seat`` moved. Mister X's move shows tickets only (and the
    station on reveal moves), exactly as in the detectives' view."""

    TYPE: ClassVar[str] = "update"
    game: str
    turn: int
    seat: str
    move: str
    to_move: str | None


@dataclass(frozen=True)
class GameOver(Message):
    """The game ended; ``mrx_path`` reveals Mister X's every station from the start."""

    TYPE: ClassVar[str] = "game_over"
    game: str
    winner: Winner | None
    termination: Termination
    seat: str | None
    moves: int
    mrx_path: list[int]


@dataclass(frozen=True)
class Watching(Message):
    """Reply to ``watch``: the game's players and its detective-perspective view now."""

    TYPE: ClassVar[str] = "watching"
    game: str
    rules: dict[str, Any]
    players: dict[str, str]
    view: dict[str, Any]


@dataclass(frozen=True)
class BoardMsg(Message):
    """The board of the games that follow, as data: sent once per connection and board,
    just before the first ``game_start`` (or ``watching``) on it. Stations are numbered
    ``1..stations``; ``edges`` maps each transport (``taxi``, ``bus``, ``underground``,
    ``ferry``) to undirected ``[a, b]`` station pairs; the start stations are where deals
    draw from; ``positions`` (when the map has them) are drawing coordinates by station
    (text keys). A grid has ``width`` and ``height``: station ``s`` is at row
    ``(s - 1) // width``, column ``(s - 1) % width``, both from 0. The same object, without
    ``type``, ``width`` and ``height``, is a custom map file."""

    TYPE: ClassVar[str] = "board"
    name: str
    stations: int
    edges: dict[str, list[list[int]]]
    detective_starts: list[int]
    mrx_starts: list[int]
    positions: dict[str, list[int]] | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Bots(Message):
    """Reply to ``list_bots``."""

    TYPE: ClassVar[str] = "bots"
    bots: list[BotInfo]


@dataclass(frozen=True)
class MatchStarted(Message):
    """Reply to ``start_match``: the new game's id."""

    TYPE: ClassVar[str] = "match_started"
    game: str
    tag: str | None = None


@dataclass(frozen=True)
class Queued(Message):
    """Reply to ``play`` when bot ``opponent`` has no free game slot now: the person waits
    for one at ``place`` in that bot's queue (1: next), for about ``wait_s`` seconds. Sent
    again whenever the place changes; ``match_started`` follows when the game starts."""

    TYPE: ClassVar[str] = "queued"
    rules: str
    opponent: str
    place: int
    wait_s: float


@dataclass(frozen=True)
class MatchOutcome(Message):
    """How a game ended, as its admin hears it: the base of ``match_result`` and
    ``match_over`` (one wire form, two moments). Not a message itself: no ``type``."""

    game: str
    winner: Winner | None
    termination: Termination
    seat: str | None
    moves: int
    tag: str | None = None
    tournament_id: str | None = None
    schedule_id: int | None = None


@dataclass(frozen=True)
class MatchResult(MatchOutcome):
    """Pushed to the admin connection that started a game, after its record is stored."""

    TYPE: ClassVar[str] = "match_result"


@dataclass(frozen=True)
class MatchOver(MatchOutcome):
    """Pushed to the admin that started a game with ``match_over`` set, as soon as the game
    ends (before its record is stored; ``match_result`` or ``store_failed`` follows)."""

    TYPE: ClassVar[str] = "match_over"


MESSAGE_TYPES: dict[str, type[Message]] = {
    cls.TYPE: cls for cls in (
        Hello, MoveMsg, BotErrorMsg, Watch, ListBots, StartMatch, Play, Resign, Leave, Ping,
        Pong, Welcome, Leaving, Standing,
        GameStart, YourTurn, MoveOk, Error, Update, GameOver, Watching, BoardMsg, Bots,
        MatchStarted, Queued, MatchResult, MatchOver)
}
"""Every message class by its wire ``type``."""
