"""Plain records of finished games, shared by the server (writer), the database layer
(storage) and the ratings and replay code (readers). No SQLAlchemy here.

A :class:`GameRecord` holds the truth (start position, every move, Mister X's path) and,
for a game the server refereed, its :class:`MatchLog`: what happened, compactly, from which
:mod:`server.transcript` rebuilds every message each seat and the spectators were sent.
Records stored before the log existed carry those messages themselves (``transcripts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from game import Outcome, Termination, Winner


@dataclass
class SeatRecord:
    """Who played a seat: ``seat`` 0 is Mister X, 1.. the detectives. ``instance`` is the
    label of the bot process that played it (a tournament's game slot), if it gave one."""

    seat: int
    bot_name: str
    bot_version: str = ""
    instance: str | None = None


@dataclass
class TurnRecord:
    """One turn as refereed.

    ``move`` is the move's text form (``None`` when the turn ended in a fault without a
    move). ``fault`` is a fault code such as ``timeout``, ``illegal_move``, ``bot_error``,
    ``random_move_on_timeout`` or ``disconnected``; ``None`` for a clean move.
    ``time_used`` is the server's measure, from sending ``your_turn`` to receiving the
    accepted ``move``; ``playouts``, ``nodes`` and ``depth`` are the search effort the bot
    reported with it (``None`` when not reported).
    """

    index: int
    seat: int
    move: str | None
    time_used: float
    fault: str | None = None
    detail: str | None = None
    playouts: int | None = None
    nodes: int | None = None
    depth: int | None = None


@dataclass
class MatchLog:
    """What a refereed game's outputs are a function of, beside the record's ruleset, seed,
    game id and seat names (see :mod:`server.match`).

    ``holders``: the seats each connection (session) held, in the order the match saw them
    (``[[0], [1, 2, 3, 4, 5]]``: one bot played Mister X, another every detective); no
    session ids. ``move_s``/``bank_s``, ``on_timeout``/``max_illegal`` and ``grace_s``: the
    game's time control, fault policy and resume grace period.

    ``events``: every call that changed the game, in order. Times are whole microseconds
    since the start, given as ``dt``, the time since the previous event. A move sent by the
    holder of the seat to move for the current turn (with no ``seat`` or the right one) is
    the string ``"<dt> <move text as received>"``; every other event is a dict with ``dt``
    and ``kind``: ``move`` (``h``: holder index, ``turn``, ``move``, ``seat`` as sent),
    ``tick`` (a deadline passed: timeout or resume grace), ``detach``/``attach`` (``h``
    lost / got back its connection), ``bot_error`` (``h``, ``turn``, ``seat``, ``reason``,
    ``message`` as sent: the bot gave up), ``forfeit`` (``h``, ``termination``, ``detail``:
    a protocol violation) and ``abort`` (``detail``). Reported search effort is not logged
    (accepted moves keep it in their :class:`TurnRecord`).

    ``seat_seed``: the game's secret seed of what its seats were handed at random (each
    side's ``game_start.seed``, the referee's random moves on timeouts; see
    ``server.match.MatchSpec.seat_seed``), one per game; ``None`` in logs of games played
    before it existed, whose seats' seeds came from the record's ``seed``.
    """

    holders: list[list[int]]
    move_s: float
    bank_s: float
    on_timeout: str
    max_illegal: int
    grace_s: float
    events: list[str | dict[str, Any]] = field(default_factory=list)
    seat_seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the game record; ``seat_seed`` only when set)."""
        data: dict[str, Any] = {
            "holders": self.holders, "move_s": self.move_s, "bank_s": self.bank_s,
            "on_timeout": self.on_timeout, "max_illegal": self.max_illegal,
            "grace_s": self.grace_s, "events": self.events}
        if self.seat_seed is not None:
            data["seat_seed"] = self.seat_seed
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchLog:
        """Inverse of :meth:`to_dict` (``KeyError``/``TypeError`` on a malformed one)."""
        return cls([list(h) for h in data["holders"]], data["move_s"], data["bank_s"],
                   data["on_timeout"], data["max_illegal"], data["grace_s"],
                   list(data["events"]), data.get("seat_seed"))


@dataclass
class GameRecord:
    """A finished game, written to the database in one transaction.

    ``log``: how the server refereed it (``None`` for games not played through the server,
    such as imports and in-process games). ``transcripts``: the messages each seat was
    sent, only in records stored before logs existed; use
    :func:`server.transcript.transcripts` to get them for any record.

    ``mrx_seed``: Mister X's own deal seed when the deal was split (``fresh-mrx``
    tournaments: ``game.new_game(ruleset, seed, mrx_seed=mrx_seed)`` deals
    ``start_position``), ``None`` when ``seed`` dealt everyone.
    """

    game_id: str
    ruleset: str
    ruleset_definition: dict[str, Any]
    seed: int | None
    start_position: str
    seats: list[SeatRecord]
    outcome: Outcome
    turns: list[TurnRecord]
    mrx_path: list[int]
    started_at: datetime
    finished_at: datetime
    moves: int = 0
    tournament_id: str | None = None
    schedule_id: int | None = None
    transcripts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    log: MatchLog | None = None
    mrx_seed: int | None = None

    @property
    def mrx_player(self) -> str:
        """The bot that played Mister X."""
        return next(s.bot_name for s in self.seats if s.seat == 0)

    @property
    def detective_player(self) -> str:
        """The detective side as one name: a single bot, or bots joined by ``+`` in seat
        order when detectives were played by different bots."""
        names = [s.bot_name for s in sorted(self.seats, key=lambda s: s.seat) if s.seat > 0]
        return names[0] if len(set(names)) == 1 else "+".join(names)


@dataclass
class ScheduledGame:
    """One planned game of a tournament, stored before the tournament starts.

    ``pair_index`` is the pair number; ``pair_key`` names the role-swapped pair (A hunts B,
    B hunts A, same seed) uniquely within the tournament (default: both players and the
    pair number). ``mrx``/``detectives`` are player specs: a bot name, or a detective team
    such as ``"dqn+alphabeta"`` (seats take the names in turn). ``schedule_id`` is assigned
    by the database; a schedule entry is done exactly when a game with that ``schedule_id``
    exists.

    ``mrx_seed``: Mister X's own deal seed (``game.new_game(..., mrx_seed=)``: the
    detectives' starts come from ``seed``, his from this), ``None`` when ``seed`` deals
    everyone. The schedule table does not store it: it is a function of the tournament's
    spec and the entry (``tournament.spec.TournamentSpec.dealt``), filled in when the game
    is started; entries read from the database carry ``None``. ``seat_seed``: the same for
    the game's seat seed (``server.match.MatchSpec.seat_seed``: what its bots' seeds
    derive from; ``tournament.schedule.Deals.seat_seed``).
    """

    index: int
    pair_index: int
    mrx: str
    detectives: str
    seed: int | None
    schedule_id: int | None = None
    pair_key: str = ""
    mrx_seed: int | None = None
    seat_seed: int | None = None

    def __post_init__(self) -> None:
        if not self.pair_key:
            low, high = sorted((self.mrx, self.detectives))
            self.pair_key = f"{low}|{high}|{self.pair_index}"


@dataclass
class GameSummary:
    """One line of ``yard games``: a stored game without its turns."""

    game_id: str
    ruleset: str
    mrx_player: str
    detective_player: str
    players: dict[str, str]
    winner: Winner | None
    termination: Termination
    moves: int
    started_at: datetime
    finished_at: datetime
    tournament_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``yard games --json``)."""
        return {"game_id": self.game_id, "ruleset": self.ruleset,
                "mrx_player": self.mrx_player, "detective_player": self.detective_player,
                "players": dict(self.players),
                "winner": self.winner.value if self.winner else None,
                "termination": self.termination.value, "moves": self.moves,
                "started_at": self.started_at.isoformat(),
                "finished_at": self.finished_at.isoformat(),
                "tournament_id": self.tournament_id}


@dataclass
class ResultRow:
    """One game's result as the ratings package consumes it.

    For a scheduled game the players are the schedule's player specs (a team stays
    ``"dqn+alphabeta"`` in both roles); otherwise they come from the seats
    (:attr:`GameRecord.mrx_player`, :attr:`GameRecord.detective_player`). ``pair_key`` names
    the role-swapped pair the game belongs to (``"<tournament id>/<schedule pair key>"``),
    or ``None`` for a game outside any schedule.
    """

    game_id: str
    ruleset: str
    mrx_player: str
    detective_player: str
    winner: Winner | None
    termination: Termination
    moves: int
    tournament_id: str | None = None
    schedule_id: int | None = None
    pair_key: str | None = None


@dataclass
class TournamentInfo:
    """A stored tournament: its spec and how much of its schedule has been played."""

    tournament_id: str
    spec: dict[str, Any]
    created_at: datetime
    scheduled: int = 0
    played: int = 0
    #: What the runner recorded (``sprt``: the test's last state; ``finished``: the
    #: runner ended the tournament early, e.g. on an SPRT decision).
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """True when a schedule exists and every entry has a stored game, or when the
        runner marked the tournament finished early (a decided SPRT)."""
        return bool(self.state.get("finished")) or (
            self.scheduled > 0 and self.played >= self.scheduled)


@dataclass
class ComputeRow:
    """The compute one bot process spent on its moves in a set of games, as sums and counts
    (so rows add up): ``bot`` name and ``instance`` (``None``: not announced), ``moves`` it
    chose itself, their total server-measured ``time_s``, and per effort key the total
    reported and the number of moves that reported it."""

    bot: str
    instance: str | None
    moves: int = 0
    time_s: float = 0.0
    playouts: int = 0
    playout_moves: int = 0
    nodes: int = 0
    node_moves: int = 0
    depth: int = 0
    depth_moves: int = 0


@dataclass
class AccountInfo:
    """A bot account as stored: ``name``, how it was made (``source``: ``cli`` or
    ``registration``), when, when its token was last accepted, and when it was revoked
    (``None``: active). ``token_hash`` is the salted hash the server checks tokens against
    (:mod:`db.store.accounts`); it is never shown."""

    name: str
    source: str
    created_at: datetime
    last_used: datetime | None = None
    revoked_at: datetime | None = None
    token_hash: str = field(default="", repr=False)

    @property
    def active(self) -> bool:
        """Whether its token is accepted (not revoked)."""
        return self.revoked_at is None
