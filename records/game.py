"""The record of a finished game: who played which seat (:class:`SeatRecord`), every turn
as refereed (:class:`TurnRecord`), how the server refereed it (:class:`MatchLog`) and the
whole game (:class:`GameRecord`). Written by the server (through the database writer),
stored by :mod:`db`, read by the ratings and replay code. Plain dataclasses.

A :class:`GameRecord` holds the truth (start position, every move, Mister X's path) and,
for a game the server refereed, its :class:`MatchLog`: what happened, compactly, from which
:mod:`server.transcript` rebuilds every message each seat and the spectators were sent.
Records stored before the log existed carry those messages themselves (``transcripts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from game import Outcome


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
