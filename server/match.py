"""The sans-I/O match core of one game: moves in, messages out, time passed in.

A :class:`Match` referees one game between seat holders (sessions, named by id). Every
method takes ``now`` (seconds, any monotonic origin) and returns the messages to send as
``(session id or PUBLIC, message)`` pairs; nothing here reads a clock or touches a socket.

Fault policy lives here, in one place:

- timeout: the seat's move limit plus its bank ran out -> forfeit ``timeout`` (default) or a
  random legal move (fault ``random_move_on_timeout``);
- illegal or unparsable move: an ``error`` reply and another try within the remaining time;
  the ``max_illegal``-th bad try in one turn forfeits ``illegal_move``;
- a bot's own report (``bot_error``): it forfeits at once, ``bot_error`` (its code failed)
  or ``illegal_move`` (it has no legal move to send), its text kept as the fault's detail;
- disconnect: the seat holder has ``grace_s`` to resume its session, else ``disconnected``;
  its clock runs on meanwhile, and a seat whose clock runs out while its holder is away
  forfeits ``disconnected`` too (not ``timeout``: its bot is gone, not slow);
- protocol violations: the shell reports them via :meth:`Match.forfeit_session`.

Hidden information: every message is built from ``state.view(seat)`` (Mister X's view only
for his own holder) or from the detectives' view; error texts and orders never depend on
Mister X's station.

Recording: a match keeps no copy of what it sent. Time inside a match is whole microseconds
since :meth:`Match.start` (``now`` rounded up), and every call that changes the game is
logged as an event (:class:`records.MatchLog`: the move text as received, ticks that did
something, detach/attach, forfeits, aborts). The outputs are a pure function of the spec and
those events, so :mod:`server.transcript` re-runs a fresh match on the log and gets every
message exactly as it was sent.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from game import MRX, Move, Outcome, Ruleset, State, Termination, new_game, seat_name, to_text
from game.errors import MoveParseError
from game.views import TICKET_NAME_LIST, detective_log, view_dict
from protocol import (
    BotErrorMsg,
    BotErrorReason,
    Clock,
    Effort,
    Error,
    ErrorCode,
    GameOver,
    GameStart,
    Message,
    MoveMsg,
    MoveOk,
    OnTimeout,
    Policy,
    TimeControl,
    Update,
    Watching,
    YourTurn,
)
from records import GameRecord, MatchLog, SeatRecord, TurnRecord

log = logging.getLogger(__name__)

PUBLIC = None
"""Recipient of messages for spectators (the detectives' perspective)."""

Recipient = str | None
Outputs = list[tuple[Recipient, Message]]

US = 1_000_000
"""Clock ticks per second inside a match (whole microseconds)."""

MAX_REFUSED = 100
"""Refused ``move`` messages (stale turn, not your turn, not your seat) a connection may send
in one game; the next forfeits its seats with ``protocol_violation``. Every move message is
kept in the game's log (so its answer can be rebuilt): this bounds what one client adds."""


RANDOM_MOVE_ON_TIMEOUT = "random_move_on_timeout"
"""The fault code (``TurnRecord.fault``) of a turn the server played at random for a seat
out of time (policy ``on_timeout: random``): the game goes on, so it is no
:class:`game.Termination`. Every other code is a termination's value (the forfeit or abort
that ended the game) or the error a refused try got (``bad_move``, ``illegal_move``)."""


@dataclass(frozen=True)
class Player:
    """Who holds a seat: the session id plus the bot's announced name, version and
    instance (which of several processes of the bot it is, if it said)."""

    session: str
    name: str
    version: str = ""
    instance: str | None = None


@dataclass(frozen=True)
class MatchSpec:
    """Everything needed to start a game."""

    game_id: str
    rules: Ruleset
    players: list[Player]
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: Policy = field(default_factory=Policy)
    grace_s: float = 10.0
    tag: str | None = None
    tournament_id: str | None = None
    schedule_id: int | None = None
    #: Tell the admin that started it as soon as it ends (``match_over``).
    notify_over: bool = False
    #: Mister X's own deal seed (``None``: ``seed`` deals everyone); see ``game.new_game``.
    mrx_seed: int | None = None
    #: The game's secret seed of what its seats are handed at random: each side's
    #: ``game_start.seed`` (:func:`side_seed`) and the referee's random move on a timeout.
    #: One per game, never shared by the two games of a pair (the server derives it from its
    #: own key, :func:`keyed_seat_seed`; a tournament from its deals). ``None``: from
    #: ``seed``, as games stored before it existed were played (their messages rebuild).
    seat_seed: int | None = None


def side_seed(seat_seed: int, seat: int) -> int:
    """A bot's RNG seed for one side of a game, derived one-way from the game's seat seed
    (:attr:`MatchSpec.seat_seed`, or ``seed`` in games stored before it existed), so one
    side's seed tells neither the other side's nor the seat seed."""
    digest = hashlib.sha256(f"yard:{seat_seed}:{seat}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def keyed_seat_seed(key: bytes, game_id: str) -> int:
    """The seat seed (:attr:`MatchSpec.seat_seed`) of game ``game_id`` under a secret
    ``key``: HMAC-SHA256, 63 bits. Without the key, nothing about the game (its id, its
    deal, its players) or any other game's seeds predicts it."""
    digest = hmac.digest(key, f"yard seat seed:{game_id}".encode(), "sha256")
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(slots=True)
class _Turn:
    """The turn in progress (times in microseconds since the start)."""

    number: int
    seat: int
    started: int
    deadline: int
    faults: list[str] = field(default_factory=list)
    illegal: int = 0
    #: The legal moves, in the engine's order.
    moves: Sequence[Move] = ()
    #: Their texts (what ``your_turn`` lists; a move message whose text is one of them is
    #: that legal move, since move texts are canonical).
    texts: list[str] = field(default_factory=list)

    def legal(self, text: str) -> Move | None:
        """The legal move whose text is ``text``, or ``None``."""
        try:
            return self.moves[self.texts.index(text)]
        except ValueError:
            return None


class Match:
    """One refereed game (sans-I/O). Start it with :meth:`start`."""

    def __init__(self, spec: MatchSpec, wall: Callable[[float], datetime] | None = None
                 ) -> None:
        """A match for ``spec`` in its start state (``wall``: clock for records)."""
        self.spec = spec
        self.game_id = spec.game_id
        self.start_state = new_game(spec.rules, spec.seed, mrx_seed=spec.mrx_seed)
        self.state: State = self.start_state
        if len(spec.players) != self.state.n_detectives + 1:
            raise ValueError(f"game {spec.game_id}: {len(spec.players)} players for "
                             f"{self.state.n_detectives + 1} seats")
        self._wall = wall or (lambda t: datetime.fromtimestamp(t, UTC))
        #: What every random value a seat is handed derives from (see ``seat_seed``).
        self._seat_seed = spec.seed if spec.seat_seed is None else spec.seat_seed
        self._rng = random.Random(self._seat_seed)
        self._sessions = tuple(dict.fromkeys(p.session for p in spec.players))
        self._seats: dict[str, tuple[int, ...]] = {
            session: tuple(i for i, p in enumerate(spec.players) if p.session == session)
            for session in self._sessions}
        #: Seat names by seat number.
        self._names = tuple(seat_name(i) for i in range(len(spec.players)))
        self._move_us = round(spec.time_control.move_s * US)
        self._grace_us = round(spec.grace_s * US)
        #: Bank left per seat, in microseconds.
        self.bank = [round(spec.time_control.bank_s * US)] * len(spec.players)
        self.turn: _Turn | None = None
        self.turns: list[TurnRecord] = []
        #: Sessions without a connection, and since when (microseconds since the start).
        self.detached: dict[str, int] = {}
        self.outcome: Outcome | None = None
        self.record: GameRecord | None = None
        #: What changed the game, in order (see :class:`records.MatchLog`).
        self.events: list[str | dict[str, Any]] = []
        self._holder = {session: i for i, session in enumerate(self.sessions())}
        self._refused: dict[str, int] = {}  # refused move messages per session
        self._t0: float | None = None  # ``now`` of the start, in the caller's seconds
        self._last_us = 0  # time of the last logged event
        self._turn_counter = 0

    # ------------------------------------------------------------------ queries

    @property
    def finished(self) -> bool:
        """True once the game has an outcome."""
        return self.outcome is not None

    def sessions(self) -> list[str]:
        """Distinct seat-holding sessions, in seat order."""
        return list(self._sessions)

    def holds(self, session: str) -> bool:
        """True if ``session`` holds a seat in this game."""
        return session in self._seats

    def seats_of(self, session: str) -> list[int]:
        """Seats held by ``session``."""
        return list(self._seats.get(session, ()))

    def next_deadline(self) -> float | None:
        """The earliest time :meth:`tick` has something to do, or ``None``."""
        if self.finished or self._t0 is None:
            return None
        if not self.detached:  # the usual case: only the turn's clock
            return None if self.turn is None else self._t0 + self.turn.deadline / US
        times = [t + self._grace_us for t in self.detached.values()]
        if self.turn is not None:
            times.append(self.turn.deadline)
        return self._t0 + min(times) / US if times else None

    def watching(self, state: State | None = None) -> Watching:
        """A spectator's snapshot (of the current state, or ``state``): detectives'
        perspective only."""
        return Watching(self.game_id, self.spec.rules.definition(), self._players(),
                        (state or self.state).view(None).to_dict())

    # ------------------------------------------------------------------ life cycle

    def start(self, now: float) -> Outputs:
        """Send ``game_start`` to every side and the first ``your_turn``.

        A start that the rules have already decided (no playable deal exists for the
        ruleset) ends at once with its rule termination: no ``your_turn`` is sent, since
        its ``legal`` list would be empty.
        """
        self._t0 = now
        out: Outputs = []
        for session in self.sessions():
            out += self._game_starts(session)
        log.info("game %s started: %s", self.game_id, self._players())
        if self.state.outcome is not None:
            return out + self._finish(self.state.outcome, 0, None, None)
        return out + self._begin_turn(0)

    def tick(self, now: float) -> Outputs:
        """Apply clock and disconnect policies due at ``now``."""
        if self.finished:
            return []
        us = self._us(now)
        if not self._due(us):  # a tick with nothing due changes nothing: not logged
            return []
        gone = self._gone(us)
        if gone is not None:
            return gone
        self._log(us, {"kind": "tick"})
        return self._tick(us)

    def abort(self, now: float, detail: str = "server shutting down") -> Outputs:
        """End the game without a winner (``aborted``)."""
        if self.finished:
            return []
        us = self._us(now)
        self._log(us, {"kind": "abort", "detail": detail})
        return self._abort(us, detail)

    def detach(self, session: str, now: float) -> Outputs:
        """``session`` lost its connection; its grace period starts."""
        if not self.finished and session in self._holder and session not in self.detached:
            us = self._us(now)
            self._log(us, {"kind": "detach", "h": self._holder[session]})
            self._detach(session, us)
        return []

    def attach(self, session: str, now: float) -> Outputs:
        """``session`` resumed: it gets its ``game_start`` again and any pending turn."""
        if self.finished or session not in self._holder:
            self.detached.pop(session, None)
            return []
        us = self._us(now)
        self._log(us, {"kind": "attach", "h": self._holder[session]})
        return self._attach(session, us)

    def forfeit_session(self, session: str, termination: Termination, now: float,
                        detail: str) -> Outputs:
        """``session`` loses the game (its seat to move, else its first seat)."""
        if self.finished or session not in self._holder:
            return []
        us = self._us(now)
        self._log(us, {"kind": "forfeit", "h": self._holder[session],
                       "termination": termination.value, "detail": detail})
        return self._forfeit(session, termination, us, detail)

    # ------------------------------------------------------------------ events

    def _us(self, now: float) -> int:
        """``now`` as whole microseconds since the start, rounded up (a deadline due at
        ``now`` is never missed) and never before the last logged event."""
        if self._t0 is None:
            return self._last_us
        return max(self._last_us, math.ceil((now - self._t0) * US))

    def _log(self, us: int, event: str | dict[str, Any]) -> None:
        """Log an event at ``us``: a plain move as ``"<dt> <move text>"``, anything else as
        a dict; ``dt`` is microseconds since the previous event."""
        dt = us - self._last_us
        self._last_us = us
        if isinstance(event, str):
            self.events.append(f"{dt} {event}")
        else:
            self.events.append({"dt": dt, **event})

    def replay(self, event: str | dict[str, Any], sessions: list[str]) -> Outputs:
        """Apply one logged event (from :class:`records.MatchLog`) with the session ids
        ``sessions`` standing for the holders; used by :mod:`server.transcript`.

        Raises :class:`ValueError` for an event this match cannot have logged.
        """
        if isinstance(event, str):
            dt_text, _, text = event.partition(" ")
            us = self._last_us + int(dt_text)
            turn = self.turn
            if turn is None:
                raise ValueError("a plain move without a turn in progress")
            mover = self.spec.players[turn.seat].session
            self._log(us, text)
            return self._handle_move(mover, MoveMsg(self.game_id, turn.number, text), us,
                                     plain=True)
        kind = event["kind"]
        us = self._last_us + int(event["dt"])
        holder = event.get("h")
        session = sessions[holder] if isinstance(holder, int) else ""
        self._log(us, {k: v for k, v in event.items() if k != "dt"})
        if kind == "move":
            msg = MoveMsg(self.game_id, event["turn"], event["move"], event["seat"])
            return self._handle_move(session, msg, us)
        if kind == "bot_error":
            report = BotErrorMsg(self.game_id, event["message"], event["turn"], event["seat"],
                                 BotErrorReason(event["reason"]))
            return self._handle_bot_error(session, report, us)
        if kind == "tick":
            return self._tick(us)
        if kind == "abort":
            return self._abort(us, event["detail"])
        if kind == "detach":
            self._detach(session, us)
            return []
        if kind == "attach":
            return self._attach(session, us)
        if kind == "forfeit":
            return self._forfeit(session, Termination(event["termination"]), us,
                                 event["detail"])
        raise ValueError(f"unknown event kind {kind!r}")

    def _gone(self, us: int) -> Outputs | None:
        """The forfeit of a seat whose clock ran out by ``us`` while its holder was
        disconnected (and no grace period ended first), logged as such; else ``None``.

        Its bot is gone, not slow: such a seat forfeits ``disconnected``, as one whose grace
        period ends. The clock keeps running while a holder is away (a bot must not gain
        time by dropping its connection), so a bot that dies on its turn would otherwise
        always lose to its clock first (``timeout``), its grace period starting later.
        Under ``on_timeout: random`` the server plays for it as for a slow seat."""
        turn = self.turn
        if turn is None or us < turn.deadline or not self.detached or \
                self.spec.policy.on_timeout is not OnTimeout.FORFEIT:
            return None
        mover = self.spec.players[turn.seat].session
        if mover not in self.detached or any(us >= since + self._grace_us
                                             for since in self.detached.values()):
            return None  # a grace period ended: _tick forfeits that holder first
        detail = "its connection was lost and its clock ran out before it came back"
        self._log(us, {"kind": "forfeit", "h": self._holder[mover],
                       "termination": Termination.DISCONNECTED.value, "detail": detail})
        return self._forfeit(mover, Termination.DISCONNECTED, us, detail)

    def _due(self, us: int) -> bool:
        """Whether :meth:`_tick` at ``us`` has something to do."""
        return not self.finished and (
            any(us >= since + self._grace_us for since in self.detached.values())
            or (self.turn is not None and us >= self.turn.deadline))

    def _tick(self, us: int) -> Outputs:
        if self.finished:
            return []
        if not self.detached:  # the usual case: only the turn's clock
            turn = self.turn
            return [] if turn is None or us < turn.deadline else self._timeout(us)
        for session, since in sorted(self.detached.items(), key=lambda kv: kv[1]):
            if us >= since + self._grace_us:
                return self._forfeit(session, Termination.DISCONNECTED, us,
                                     "no resume within the grace period")
        if self.turn is not None and us >= self.turn.deadline:
            return self._timeout(us)
        return []

    def _abort(self, us: int, detail: str) -> Outputs:
        return self._finish(Outcome(None, Termination.ABORTED), us, Termination.ABORTED.value,
                            detail)

    def _detach(self, session: str, us: int) -> None:
        self.detached.setdefault(session, us)

    def _attach(self, session: str, us: int) -> Outputs:
        self.detached.pop(session, None)
        out = self._game_starts(session)
        if self.turn is not None and self.spec.players[self.turn.seat].session == session:
            out.append((session, self._your_turn(self.turn, us)))
        return out

    def _forfeit(self, session: str, termination: Termination, us: int, detail: str,
                 seat: int | None = None) -> Outputs:
        """``session`` loses: ``seat`` (one of its seats), else its seat to move, else its
        first seat."""
        seats = self.seats_of(session)
        if seat is None or seat not in seats:
            seat = self.turn.seat if self.turn and self.turn.seat in seats else seats[0]
        return self._finish(Outcome.forfeit(seat, termination), us, termination.value, detail,
                            seat)

    # ------------------------------------------------------------------ moves

    def handle_move(self, session: str, msg: MoveMsg, now: float) -> Outputs:
        """Referee a ``move`` message from ``session``."""
        if self.finished:
            return [(session, self._error(ErrorCode.GAME_OVER, "the game is over"))]
        us = self._us(now)
        gone = self._gone(us)
        if gone is not None:  # the game ended before this move came
            return gone
        turn = self.turn
        plain = (turn is not None and session == self.spec.players[turn.seat].session
                 and msg.turn == turn.number and (msg.seat is None
                                                  or msg.seat == self._names[turn.seat]))
        if plain:  # the usual case, logged in short: what replays the same with no seat
            self._log(us, msg.move)
        else:
            self._log(us, {"kind": "move", "h": self._holder.get(session), "turn": msg.turn,
                           "move": msg.move, "seat": msg.seat})
        return self._handle_move(session, msg, us, plain)

    def _handle_move(self, session: str, msg: MoveMsg, now: int, plain: bool = False
                     ) -> Outputs:
        """``plain``: the mover's own turn, number right, seat unnamed or its own (the
        turn checks pass)."""
        out = self._tick(now)
        if self.finished:
            return out or [(session, self._error(ErrorCode.GAME_OVER, "the game is over"))]
        problem = None if plain and not out else self._check_turn(session, msg)
        if problem is not None:
            refused = self._refused[session] = self._refused.get(session, 0) + 1
            if refused > MAX_REFUSED:  # follows from the logged moves: not logged itself
                return [*out, *self._forfeit(session, Termination.PROTOCOL_VIOLATION, now,
                                             f"more than {MAX_REFUSED} refused moves")]
            return [*out, (session, problem)]
        assert self.turn is not None
        move = self.turn.legal(msg.move)
        if move is None:  # not the text of a legal move: say why
            try:
                move = Move.parse(msg.move)
            except MoveParseError as exc:
                return self._bad_try(session, ErrorCode.BAD_MOVE, str(exc), now)
            text = (f"{move} is not a legal move for {seat_name(self.turn.seat)} "
                    f"(turn {self.turn.number})")
            return self._bad_try(session, ErrorCode.ILLEGAL_MOVE, text, now)
        ok = MoveOk(self.game_id, self.turn.number, self._names[self.turn.seat], msg.move)
        return [(session, ok), *self._play(move, now, None, msg.effort, msg.move)]

    def handle_bot_error(self, session: str, msg: BotErrorMsg, now: float) -> Outputs:
        """Referee a ``bot_error`` from ``session``: the bot gives up, and its seat (the one
        named, else the seat to move if it holds it, else its first) forfeits at once with
        ``bot_error`` or ``illegal_move``. A report for a turn that is not the current one
        of its seats is refused like such a move (``stale_turn``, ``not_your_turn``...)."""
        if self.finished:
            return [(session, self._error(ErrorCode.GAME_OVER, "the game is over"))]
        us = self._us(now)
        gone = self._gone(us)
        if gone is not None:
            return gone
        self._log(us, {"kind": "bot_error", "h": self._holder.get(session), "turn": msg.turn,
                       "seat": msg.seat, "reason": msg.reason.value, "message": msg.message})
        return self._handle_bot_error(session, msg, us)

    def _handle_bot_error(self, session: str, msg: BotErrorMsg, now: int) -> Outputs:
        out = self._tick(now)
        if self.finished:
            return out or [(session, self._error(ErrorCode.GAME_OVER, "the game is over"))]
        held = self._seats.get(session, ())
        problem = None
        if msg.turn is not None or not held:
            problem = self._check_turn(session, msg)
        elif msg.seat is not None and msg.seat not in [seat_name(s) for s in held]:
            problem = self._error(ErrorCode.NOT_YOUR_SEAT, f"seat {msg.seat!r:.20} is not yours")
        if problem is not None:
            refused = self._refused[session] = self._refused.get(session, 0) + 1
            if refused > MAX_REFUSED:
                return [*out, *self._forfeit(session, Termination.PROTOCOL_VIOLATION, now,
                                             f"more than {MAX_REFUSED} refused moves")]
            return [*out, (session, problem)]
        termination = (Termination.ILLEGAL_MOVE if msg.reason is BotErrorReason.ILLEGAL_MOVE
                       else Termination.BOT_ERROR)
        seat = None if msg.seat is None else self._names.index(msg.seat)
        return [*out, *self._forfeit(session, termination, now,
                                     msg.message or "no reason given", seat)]

    def _check_turn(self, session: str, msg: MoveMsg | BotErrorMsg) -> Error | None:
        turn = self.turn
        assert turn is not None
        held = self._seats.get(session, ())
        if not held:
            return self._error(ErrorCode.NOT_YOUR_SEAT, "this connection holds no seat here")
        if msg.seat is not None and msg.seat not in [seat_name(s) for s in held]:
            return self._error(ErrorCode.NOT_YOUR_SEAT, f"seat {msg.seat!r:.20} is not yours")
        if msg.turn != turn.number:
            return self._error(ErrorCode.STALE_TURN, f"turn {msg.turn} is not the current "
                               f"turn ({turn.number})")
        if turn.seat not in held or (msg.seat is not None and msg.seat != seat_name(turn.seat)):
            return self._error(ErrorCode.NOT_YOUR_TURN,
                               f"turn {turn.number} belongs to {seat_name(turn.seat)}")
        return None

    def _bad_try(self, session: str, code: ErrorCode, text: str, now: int) -> Outputs:
        """A refused try (``code``: ``bad_move`` or ``illegal_move``, also its fault code);
        the ``max_illegal``-th in one turn forfeits ``illegal_move``."""
        turn = self.turn
        assert turn is not None
        turn.illegal += 1
        turn.faults.append(f"{code.value}: {text}")
        if turn.illegal >= self.spec.policy.max_illegal:
            return self._finish(Outcome.forfeit(turn.seat, Termination.ILLEGAL_MOVE), now,
                                code.value, f"{turn.illegal} bad tries", turn.seat)
        left = self.spec.policy.max_illegal - turn.illegal
        return [(session, self._error(code, f"{text}; {left} tries left"))]

    def _timeout(self, now: int) -> Outputs:
        turn = self.turn
        assert turn is not None
        if self.spec.policy.on_timeout is OnTimeout.RANDOM:
            move = self._rng.choice(list(self.state.legal_moves()))
            return self._play(move, now, RANDOM_MOVE_ON_TIMEOUT)
        return self._finish(Outcome.forfeit(turn.seat, Termination.TIMEOUT), now,
                            Termination.TIMEOUT.value, "no move before the deadline", turn.seat)

    def _play(self, move: Move, now: int, fault: str | None,
              effort: Effort | None = None, text: str | None = None) -> Outputs:
        turn = self.turn
        assert turn is not None
        before = self.state
        # ``move`` is one of ``before``'s legal moves (from ``turn.moves`` or chosen from
        # them on a timeout): no second legality check.
        self.state = state = before.apply_unchecked(move)
        text = text or str(move)
        used = now - turn.started
        if used > self._move_us:  # the bank pays for the time over the move limit
            self.bank[turn.seat] = max(0, self.bank[turn.seat] - (used - self._move_us))
        if fault is None and not turn.faults:  # a clean move (the usual case)
            record = (TurnRecord(turn.number, turn.seat, text, used / US) if effort is None
                      else TurnRecord(turn.number, turn.seat, text, used / US, None, None,
                                      effort.playouts, effort.nodes, effort.depth))
        else:
            faults = [*turn.faults, *([fault] if fault else [])]
            reported = effort or _NO_EFFORT
            record = TurnRecord(turn.number, turn.seat, text, used / US,
                                fault or _last_code(turn.faults),
                                "; ".join(faults) or None, reported.playouts,
                                reported.nodes, reported.depth)
        self.turns.append(record)
        update = self._update(before, text, turn)
        out: Outputs = [(session, update) for session in self._sessions]
        out.append((PUBLIC, update))
        if state.outcome is not None:
            return out + self._finish(state.outcome, now, None, None)
        out += self._begin_turn(now)
        return out

    def _update(self, before: State, move: str, turn: _Turn) -> Update:
        if turn.seat != MRX:
            public = move
        else:
            # Built from the detectives' view: tickets, plus stations on reveal slots only.
            entries = detective_log(self.state)[len(before.log):]
            names = TICKET_NAME_LIST
            public = "+".join(names[e.ticket] if e.station is None
                              else f"{names[e.ticket]}:{e.station}" for e in entries)
        nxt = None if self.state.outcome else self._names[self.state.to_move]
        return Update(self.game_id, turn.number, self._names[turn.seat], public, nxt)

    # ------------------------------------------------------------------ turns

    def _begin_turn(self, now: int) -> Outputs:
        # The engine gives every unfinished state a seat with a legal move, so a
        # ``your_turn`` never carries an empty ``legal`` list.
        assert self.state.outcome is None and self.state.legal_moves()
        self._turn_counter += 1
        seat = self.state.to_move
        deadline = now + self._move_us + self.bank[seat]
        moves = self.state.legal_moves()
        texts = move_texts(moves)
        self.turn = turn = _Turn(self._turn_counter, seat, now, deadline, [], 0, moves,
                                 texts)
        return [(self.spec.players[seat].session, self._your_turn(turn, now))]

    def _your_turn(self, turn: _Turn, now: int) -> YourTurn:
        move_left = max(0, turn.started + self._move_us - now)
        bank_left = max(0, min(self.bank[turn.seat], turn.deadline - now))
        # view_dict is state.view(seat).to_dict() without the view object: this seat's
        # view only (Mister X's station only in his own).
        return YourTurn(self.game_id, turn.number, self._names[turn.seat],
                        view_dict(self.state, turn.seat), turn.texts,
                        Clock(round(move_left / US, 3), round(bank_left / US, 3)))

    def _game_starts(self, session: str) -> Outputs:
        held = self.seats_of(session)
        sides = [[s for s in held if s == MRX], [s for s in held if s != MRX]]
        out: Outputs = []
        for seats in (s for s in sides if s):
            message = GameStart(self.game_id, self.spec.rules.definition(),
                                [seat_name(s) for s in seats], self._players(),
                                self.spec.time_control, self.state.view(seats[0]).to_dict(),
                                side_seed(self._seat_seed, seats[0]))
            out.append((session, message))
        return out

    # ------------------------------------------------------------------ ending

    def _finish(self, outcome: Outcome, now: int, fault: str | None, detail: str | None,
                seat: int | None = None) -> Outputs:
        """End the game with ``outcome``; ``fault`` (a fault code, with its ``detail``):
        the game ended in a forfeit or abort, recorded as a last turn without a move."""
        self.outcome = outcome
        turn = self.turn
        if fault is not None:
            index = turn.number if turn else self._turn_counter + 1
            at = seat if seat is not None else (turn.seat if turn else MRX)
            used = (now - turn.started) / US if turn else 0.0
            notes = [*(turn.faults if turn else []), f"{fault}: {detail}"]
            self.turns.append(TurnRecord(index, at, None, used, fault, "; ".join(notes)))
        self.turn = None
        path = [self.start_state.mrx_station, *(station for _, station in self.state.log)]
        over = GameOver(self.game_id, outcome.winner, outcome.termination,
                        None if outcome.seat is None else seat_name(outcome.seat),
                        self.state.move_number, path)
        self.record = self._record(now)
        log.info("game %s over: %s", self.game_id, outcome.to_dict())
        return self._broadcast(over)

    def _record(self, now: int) -> GameRecord:
        assert self.outcome is not None
        spec = self.spec
        t0 = self._t0 or 0.0
        holders = [self.seats_of(s) for s in self.sessions()]
        match_log = MatchLog(holders, spec.time_control.move_s, spec.time_control.bank_s,
                             spec.policy.on_timeout.value, spec.policy.max_illegal,
                             spec.grace_s, list(self.events), spec.seat_seed)
        return GameRecord(
            game_id=spec.game_id, ruleset=spec.rules.name,
            ruleset_definition=spec.rules.definition(), seed=spec.seed,
            start_position=to_text(self.start_state),
            seats=[SeatRecord(i, p.name, p.version, p.instance)
                   for i, p in enumerate(spec.players)],
            outcome=self.outcome, turns=list(self.turns),
            mrx_path=[self.start_state.mrx_station, *(s for _, s in self.state.log)],
            started_at=self._wall(t0), finished_at=self._wall(t0 + now / US),
            moves=self.state.move_number, tournament_id=spec.tournament_id,
            schedule_id=spec.schedule_id, log=match_log, mrx_seed=spec.mrx_seed)

    # ------------------------------------------------------------------ helpers

    def _broadcast(self, message: Message) -> Outputs:
        return [*((s, message) for s in self._sessions), (PUBLIC, message)]

    def _players(self) -> dict[str, str]:
        return {seat_name(i): p.name for i, p in enumerate(self.spec.players)}

    def _error(self, code: ErrorCode, text: str) -> Error:
        return Error(code, f"game {self.game_id}: {text}", self.game_id)


_NO_EFFORT = Effort()


_MOVE_TEXTS: dict[Move, str] = {}
_MOVE_TEXTS_MAX = 1 << 18
"""Most move texts kept (a board has a fixed set of moves; many boards could add up)."""


def move_texts(moves: Sequence[Move]) -> list[str]:
    """``[str(m) for m in moves]``, each text made once per distinct move (the legal moves
    of every turn are listed by text)."""
    texts = _MOVE_TEXTS
    try:
        return [texts[m] for m in moves]
    except KeyError:
        if len(texts) > _MOVE_TEXTS_MAX:
            texts.clear()
        out = []
        for m in moves:
            text = texts.get(m)
            if text is None:
                text = texts[m] = str(m)
            out.append(text)
        return out


def _last_code(faults: list[str]) -> str | None:
    return faults[-1].partition(":")[0] if faults else None
