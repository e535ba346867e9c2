"""The standing ladder's games and people's games against its bots, in the sans-I/O core.

:class:`LadderGames` is a part of :class:`server.core.Core` (which owns one): it refuses
``hello`` ladder fields this server cannot serve, starts the games the ladder's matchmaking
(:class:`server.ladder.Ladder`) proposes for the bots free now, runs the ladder check (a new
bot's two games against the server's own random player), starts a person's ``play`` game
against a ladder bot, and rates every finished ladder and play game. The core starts and
routes the games (:class:`Referee`).
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from game import Termination
from protocol import (
    Error,
    ErrorCode,
    Hello,
    MatchStarted,
    MoveMsg,
    Play,
    Policy,
    ProtocolError,
    Queued,
    Rating,
    Role,
    Side,
    Standing,
    YourTurn,
)
from records import GameRecord
from server.auth import is_loopback
from server.config import ServerConfig
from server.house_pace import HousePace
from server.ladder import (
    Ladder,
    LadderGame,
    Result,
    ladder_id,
    ladder_rules,
    play_id,
    play_rules,
)
from server.match import Match, MatchSpec, Outputs, Player
from server.outputs import Output, Send, refuse_hello
from server.play_queue import Durations, PlayQueue, Waiting, expected_wait
from server.session import (
    SERVER_VERSION,
    Connection,
    Session,
    is_guest,
    live_bots,
    open_bots,
)

log = logging.getLogger(__name__)

LADDER_KIND, PLAY_KIND = "ladder", "play"
"""What a running game counts as for expected waits (:class:`server.play_queue.Durations`:
a bot's own games, or people's games)."""

CHECKER_SESSION = "s-yard-check"
CHECKER_NAME = "yard-check"
"""The server's own random player in ladder check games (a session with no connection)."""


class Referee(Protocol):
    """What the ladder's games need of the core (:class:`server.core.Core`)."""

    @property
    def closing(self) -> bool:
        """The server is shutting down: it starts no more games."""
        ...

    def start(self, spec: MatchSpec, now: float, *first: Output, admin: str | None = None
              ) -> list[Output]:
        """Start the game ``spec`` (``first``: what to send before its messages)."""
        ...

    def route(self, match: Match, outputs: Outputs) -> list[Output]:
        """Deliver ``match``'s ``outputs`` (and finish it if it ended)."""
        ...

    def wake_at(self, when: float) -> None:
        """Call :meth:`LadderGames.step` again at ``when`` (through the core's tick)."""
        ...


class LadderGames:
    """The ladder (``config.ladder``; ``ladder`` is ``None`` without one), its check games
    and people's games.

    ``sessions`` is the core's own table of sessions (the checker's session is added to
    it); ``new_id`` makes a game id from a prefix; ``wall`` turns the core's time into a
    date (when a bot left the ladder)."""

    def __init__(self, config: ServerConfig, sessions: dict[str, Session],
                 new_id: Callable[[str], str], wall: Callable[[float], datetime] | None,
                 core: Referee) -> None:
        """No games yet; a :class:`Ladder` when ``config.ladder`` names rulesets."""
        self.config = config
        self.sessions = sessions
        self.new_id = new_id
        self.wall = wall
        self.core = core
        #: The standing ladder's matchmaking and live ratings (``config.ladder``).
        self.ladder = (Ladder(config.ladder, placement=config.ladder_placement,
                              pause_after=config.ladder_pause_after,
                              pause_s=config.ladder_pause_s, check=config.ladder_check,
                              wall=wall)
                       if config.ladder else None)
        #: A ladder or play game ended: the ladder may start games (:meth:`step`).
        self.due = False
        #: Ladder check games running (game id -> bot, leg, ruleset) and waiting to start.
        self._checks: dict[str, tuple[str, int, str]] = {}
        self._check_queue: list[tuple[str, int, str]] = []
        self._check_rng = random.Random(secrets.randbits(64))
        #: People waiting for a busy bot (served before the ladder refills its slots),
        #: and the place each was last told.
        self.queue = PlayQueue()
        self._told: dict[str, int] = {}
        #: How long games last (per bot name; ``"play"``: people's), for expected waits;
        #: the ladder's and people's games running: game id -> (start, what it counts as).
        self.durations = Durations()
        self._running: dict[str, tuple[float, str]] = {}
        #: The address each running people's game was asked for from (one at a time).
        self._play_address: dict[str, str] = {}
        #: House-vs-house pairs at most ``config.house_rate`` games a minute; when a pair
        #: held back may be made (``None``: none is held back), and the time of the step
        #: asking.
        self.pace = HousePace(config.house_names, config.house_rate, 0.0)
        self.wake: float | None = None
        self._step_now = 0.0
        if self.ladder is not None:
            self.ladder.apart = self._apart
            self.ladder.paired = lambda a, b: self.pace.paired(a, b, self._step_now)

    # ------------------------------------------------------------------ sessions

    def refused(self, conn: Connection, hello: Hello) -> list[Output] | None:
        """The refusal of a ``hello`` whose ladder fields or role this server cannot
        serve, or ``None``."""
        if hello.role is Role.HUMAN:
            return self._person_refused(conn, hello)
        if hello.ladder is None and hello.max_games is None and hello.roles is None:
            return None
        if hello.role is not Role.BOT:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                "hello.ladder, hello.max_games and hello.roles are for bots")
        if hello.roles is not None and not hello.roles:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                "hello.roles is empty: list the sides the bot plays (mrx, "
                                "detectives), or leave it out for both")
        if hello.ladder is None and hello.max_games is None:
            return None
        limit = self.config.ladder_max_games
        if hello.max_games is not None and not 1 <= hello.max_games <= limit:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                f"hello.max_games must be 1 to {limit}, got {hello.max_games}")
        if not self.config.ladder:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                "this server runs no ladder (its operator starts one with "
                                "yard serve --ladder RULES)")
        unknown = [r for r in hello.ladder or () if r not in self.config.ladder]
        if unknown or not hello.ladder:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                f"hello.ladder {unknown or hello.ladder!r:.80}: this server's "
                                f"ladder plays {', '.join(self.config.ladder)}")
        return None

    def _person_refused(self, conn: Connection, hello: Hello) -> list[Output] | None:
        """The refusal of a person's ``hello`` (no games for people here, or ladder fields
        it may not have), or ``None``."""
        if not self.config.ladder:
            return refuse_hello(conn.id, ErrorCode.FORBIDDEN,
                                "this server has no games for people (its operator "
                                "starts them with yard serve --ladder RULES)")
        if hello.ladder or hello.roles:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                "a person's hello has no ladder or roles")
        return None

    def joined(self, session: Session, now: float) -> list[Output]:
        """``session`` (a new session that asked for the ladder) joins it; a bot new to
        the ladder waits for its check games, a paused one is told until when."""
        if self.ladder is None:
            return []
        paused = self.ladder.paused(session.name, now)
        told: list[Output] = ([] if paused is None or session.conn is None else
                              [Send(session.conn, Error(ErrorCode.LADDER_PAUSED, paused))])
        entrant = self.ladder.join(session.name, self._rules_of(session.name),
                                   self._roles_of(session.name))
        checking = {c[0] for c in [*self._checks.values(), *self._check_queue]}
        if self.ladder.needs_check(session.name) and session.name not in checking:
            leg = 1 if Side.MRX in entrant.roles else 2
            self._check_queue.append((session.name, leg, sorted(session.ladder)[0]))
        return [*told, *self.step(now)]

    def left(self, session: Session, now: float) -> None:
        """``session`` lost its connection: the ladder forgets what waited for its bot, if
        no other session of that bot takes games."""
        if self.queue.drop(session.id) is not None:
            self.due = True  # the places behind it move up
        if self.ladder is not None and session.ladder and not self._sessions(session.name):
            self.ladder.left(session.name, self.wall(now) if self.wall else None)
            self.due = self.due or bool(self.queue.for_bot(session.name))

    def leaving(self, session: Session) -> None:
        """``session`` takes no new games (``leave``): the ladder forgets the second games
        that waited for its bot, if no other session of that bot takes games (the first
        games are rated on their own, as every game is)."""
        if self.ladder is not None and session.ladder and not self._sessions(session.name):
            self.ladder.left(session.name)

    def next_deadline(self) -> float | None:
        """When a pause ends (the ladder may start games then), or ``None``."""
        return None if self.ladder is None else self.ladder.pause_ends()

    def pauses_over(self, now: float) -> bool:
        """Lift the pauses over at ``now``; whether the ladder may start games (:meth:`step`)
        because of it."""
        return self.ladder is not None and self.ladder.lift_pauses(now)

    def _sessions(self, name: str | None = None, *, leaving: bool = False) -> list[Session]:
        """Live ladder bot sessions that take new games (of bot ``name`` when given;
        ``leaving``: those that are leaving as well)."""
        live = live_bots if leaving else open_bots
        return [s for s in live(self.sessions.values())
                if s.ladder and (name is None or s.name == name)]

    def _rules_of(self, name: str) -> frozenset[str]:
        rules: frozenset[str] = frozenset()
        for session in self._sessions(name):
            rules |= session.ladder
        return rules

    def _roles_of(self, name: str) -> frozenset[Side]:
        roles: frozenset[Side] = frozenset()
        for session in self._sessions(name):
            roles |= session.roles
        return roles

    # ------------------------------------------------------------------ matchmaking

    def step(self, now: float) -> list[Output]:
        """Start the games the ladder proposes for the bots free now."""
        self.due = False
        if self.ladder is None or self.core.closing:
            return []
        out = self._serve_queue(now)  # people first
        for check in list(self._check_queue):
            spec = self._check_spec(*check)
            if spec is not None:
                self._check_queue.remove(check)
                self._checks[spec.game_id] = check
                self._running[spec.game_id] = (now, LADDER_KIND)
                out += self.core.start(spec, now)
        free: dict[str, int] = {}
        for session in self._sessions():
            free[session.name] = free.get(session.name, 0) + max(
                0, session.max_games - len(session.games))
        for waiting in self.queue.waiting():
            free[waiting.opponent] = 0  # its next free slot is a person's
        self._step_now, self.wake = now, None
        for game in self.ladder.propose(free, now):
            spec = self._ladder_spec(game)
            if spec is not None:
                self._running[spec.game_id] = (now, LADDER_KIND)
                out += self.core.start(spec, now)
        if self.wake is not None:
            self.core.wake_at(self.wake)
        return out

    def _apart(self, a: str, b: str) -> bool:
        """House bots ``a`` and ``b`` may not start a pair now (:attr:`pace`); the step
        is then due again when they may."""
        if not self.pace.apart(a, b, self._step_now):
            return False
        self.wake = self.pace.next_pair(self._step_now)
        return True

    def _ladder_spec(self, game: LadderGame) -> MatchSpec | None:
        """The match of ``game``, on sessions of its bots with a free slot."""
        chosen: dict[str, Session] = {}
        for name in dict.fromkeys((game.mrx, game.detective)):
            free = [s for s in self._sessions(name)
                    if game.rules in s.ladder and len(s.games) < s.max_games]
            if not free:
                return None
            chosen[name] = min(free, key=lambda s: (len(s.games), s.id))
        rules = self.config.ladder_ruleset(game.rules)
        names = [game.mrx, *[game.detective] * rules.detectives]
        players = [Player(chosen[n].id, n, chosen[n].version, chosen[n].instance)
                   for n in names]
        return MatchSpec(self.new_id("g"), rules, players, game.seed,
                         self.config.time_control, Policy(), self.config.grace_s,
                         f"ladder leg {game.leg}", ladder_id(game.rules), None, False,
                         game.mrx_seed)

    def result(self, match: Match, record: GameRecord, now: float) -> list[Output]:
        """Rate a finished ladder or play game (not a guest's); tell a bot it was paused.
        Nothing for any other game, or without a ladder."""
        if self.ladder is None:
            return []
        spec = match.spec
        rules = ladder_rules(spec.tournament_id)
        outcome = record.outcome
        at_fault = None if outcome.seat is None else spec.players[outcome.seat].name
        mrx, detective = spec.players[0].name, spec.players[1].name
        self._ended(match.game_id, record)
        if len(self.queue):
            self.due = True  # a slot may be free for a waiting person (any game's)
        if rules is None:
            rules = play_rules(spec.tournament_id)
            if rules is not None:
                self.due = True  # a slot of its bot is free: the next person's
            if rules is not None and not (is_guest(mrx) or is_guest(detective)):
                self.ladder.played(Result(rules, mrx, detective, outcome.winner,
                                          outcome.termination, at_fault))
            return []
        self.due = True
        paused = self.ladder.result(Result(rules, mrx, detective, outcome.winner,
                                           outcome.termination, at_fault), now)
        out = self._standings(match, rules, now)
        if paused is None or at_fault is None:
            return out
        log.warning("ladder: %s %s", at_fault, paused)
        return [*out, *(Send(s.conn, Error(ErrorCode.LADDER_PAUSED, paused))
                        for s in self._sessions(at_fault, leaving=True) if s.conn is not None)]

    def _standings(self, match: Match, rules: str, now: float) -> list[Output]:
        """``standing`` to each bot of the ladder game ``match`` that just ended and was
        rated: its rating and its rank on the ladder page now (on the connection that
        played it)."""
        assert self.ladder is not None
        if match.outcome is None or match.outcome.termination is Termination.ABORTED:
            return []
        out: list[Output] = []
        seen: set[str] = set()
        for player in match.spec.players:
            session = self.sessions.get(player.session)
            if player.session in seen or session is None or session.conn is None:
                continue
            seen.add(player.session)
            rating = self.ladder.rating(rules, player.name)
            rank, of = self.ladder.rank(rules, player.name, now)
            out.append(Send(session.conn, Standing(
                match.game_id, rules, player.name,
                Rating(round(rating.mu, 3), round(rating.sigma, 3),
                       round(rating.ordinal, 3), rating.games), rank, of)))
        return out

    # ------------------------------------------------------------------ the ladder check

    def _check_spec(self, name: str, leg: int, rules_name: str) -> MatchSpec | None:
        """The ladder check game ``leg`` of bot ``name`` (1: it plays Mister X, 2: the
        detectives) against the server's own random player; ``None`` while the bot has
        no free slot (or has gone: the check is then dropped)."""
        sessions = self._sessions(name)
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
        rules = self.config.ladder_ruleset(rules_name)
        me = Player(bot.id, bot.name, bot.version, bot.instance)
        house = Player(checker.id, checker.name, checker.version)
        players = ([me, *[house] * rules.detectives] if leg == 1
                   else [house, *[me] * rules.detectives])
        return MatchSpec(self.new_id("g"), rules, players, secrets.randbelow(2**31),
                         self.config.time_control, Policy(), self.config.grace_s,
                         "ladder check", None, None, False, secrets.randbelow(2**31))

    def checker_moves(self, match: Match, turns: list[YourTurn], now: float
                      ) -> list[Output]:
        """The server's own random player answers its ``turns`` in a ladder check game."""
        out: list[Output] = []
        for turn in turns:
            move = MoveMsg(turn.game, turn.turn, self._check_rng.choice(turn.legal))
            if not match.finished:
                out += self.core.route(match, match.handle_move(CHECKER_SESSION, move, now))
        return out

    def is_check(self, game_id: str) -> bool:
        """Game ``game_id`` is a ladder check game (not stored: :meth:`check_over`)."""
        return game_id in self._checks

    def check_over(self, match: Match, record: GameRecord) -> list[Output]:
        """A ladder check game ended (it is not stored): go on to the second, or say
        whether the bot passed."""
        assert self.ladder is not None
        name, leg, rules = self._checks.pop(match.game_id)
        self._ended(match.game_id, record)
        outcome = record.outcome
        self.due = True
        if outcome.termination is Termination.ABORTED:
            return []
        at_fault = None if outcome.seat is None else match.spec.players[outcome.seat].name
        if at_fault != name:
            if leg == 1 and Side.DETECTIVES in self.ladder.entrants[name].roles:
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
                for s in self._sessions(name, leaving=True) if s.conn is not None]

    # ------------------------------------------------------------------ people's games

    def play(self, conn: Connection, session: Session, msg: Play, now: float
             ) -> list[Output]:
        """A person asks for a game against a ladder bot: started at once if the bot has a
        free slot and nobody waits for it, else queued (``queued``: the place and the
        expected wait) and started by :meth:`step` when a slot is free."""
        if session.role is not Role.HUMAN:
            raise ProtocolError(ErrorCode.FORBIDDEN, "play is for people (hello role human)")
        if self.core.closing:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        if msg.rules not in self.config.ladder:
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                f"play.rules {msg.rules!r:.40}: this server plays "
                                f"{', '.join(self.config.ladder)}")
        if any(s.games for s in self.sessions.values()
               if s.name == session.name and s.role is Role.HUMAN):  # one per name
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                f"{session.name!r:.50} is playing a game: finish (or "
                                "resign) it before asking for another")
        if self.queue.get(session.id) is not None:
            raise ProtocolError(ErrorCode.BAD_MATCH, "you are waiting for a game already")
        # One game (or place) per address, but not on loopback: behind a reverse proxy
        # every person comes from there.
        address = (None if conn.address is None or is_loopback(conn.address)
                   else conn.address)
        if address is not None and (address in self._play_address.values()
                                    or self.queue.holds_address(address)):
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                "a person at your address plays (or waits for) a game "
                                "already: one at a time per address")
        self._opponent_problem(msg.opponent, msg.rules, msg.side.value, now)
        waiting = Waiting(session.id, msg.rules, msg.side.value, msg.opponent, address, now)
        bot = None if self.queue.for_bot(msg.opponent) else self._free_bot(waiting)
        if bot is None:
            self.queue.add(waiting)
            return self._tell_place(waiting, now)
        return self._start_play(waiting, session, bot, now)

    def _opponent_problem(self, name: str, rules: str, side: str, now: float) -> None:
        """Raise why bot ``name`` cannot play a person who takes ``side`` (the wire value)
        on ``rules`` at all now (paused, not on that ladder, or not playing the other
        side)."""
        paused = None if self.ladder is None else self.ladder.paused(name, now)
        if paused is not None:
            raise ProtocolError(ErrorCode.BOT_BUSY, f"bot {name!r:.40} is {paused}")
        bots = [s for s in self._sessions(name) if rules in s.ladder]
        if not bots:
            raise ProtocolError(ErrorCode.BOT_NOT_CONNECTED,
                                f"no bot {name!r:.40} on this server's {rules} ladder now")
        theirs = _their_side(side)
        if not any(theirs in s.roles for s in bots):
            raise ProtocolError(ErrorCode.BAD_MATCH,
                                f"bot {name!r:.40} does not play "
                                f"{'Mister X' if theirs is Side.MRX else 'the detectives'}: "
                                "pick the other side or another bot")

    def _free_bot(self, waiting: Waiting) -> Session | None:
        """The least busy live session of the bot ``waiting`` asks for with a free slot on
        its ruleset's ladder, or ``None``."""
        theirs = _their_side(waiting.side)
        free = [s for s in self._sessions(waiting.opponent)
                if waiting.rules in s.ladder and theirs in s.roles
                and len(s.games) < s.max_games]
        return min(free, key=lambda s: (len(s.games), s.id)) if free else None

    def _start_play(self, waiting: Waiting, session: Session, bot: Session, now: float
                    ) -> list[Output]:
        """Start the game ``waiting`` asks for, against ``bot``."""
        assert session.conn is not None
        rules = self.config.ladder_ruleset(waiting.rules)
        me = Player(session.id, session.name, session.version)
        them = Player(bot.id, bot.name, bot.version, bot.instance)
        players = ([me, *[them] * rules.detectives] if waiting.side == Side.MRX.value
                   else [them, *[me] * rules.detectives])
        spec = MatchSpec(self.new_id("g"), rules, players, secrets.randbelow(2**31),
                         self.config.play_time_control, Policy(), self.config.grace_s,
                         "play", play_id(waiting.rules), None, False,
                         secrets.randbelow(2**31))
        self._running[spec.game_id] = (now, PLAY_KIND)
        if waiting.address is not None:
            self._play_address[spec.game_id] = waiting.address
        self._told.pop(session.id, None)
        return self.core.start(spec, now, Send(session.conn, MatchStarted(spec.game_id,
                                                                          "play")))

    def _serve_queue(self, now: float) -> list[Output]:
        """Start the waiting people's games whose bots have a free slot (first come first
        served per bot); tell the others their new places. A request whose bot was paused
        or left is dropped with the error a new ``play`` would get."""
        out: list[Output] = []
        for waiting in self.queue.waiting():
            session = self.sessions.get(waiting.session)
            if session is None or session.conn is None:
                self.queue.drop(waiting.session)
                continue
            try:
                self._opponent_problem(waiting.opponent, waiting.rules, waiting.side, now)
            except ProtocolError as exc:
                self.queue.drop(waiting.session)
                self._told.pop(waiting.session, None)
                out.append(Send(session.conn, Error(exc.code, str(exc), Play.TYPE)))
                continue
            if self.queue.place(waiting.session) == 1 and \
                    (bot := self._free_bot(waiting)) is not None:
                self.queue.drop(waiting.session)
                out += self._start_play(waiting, session, bot, now)
        for waiting in self.queue.waiting():
            if self._told.get(waiting.session) != self.queue.place(waiting.session):
                out += self._tell_place(waiting, now)
        return out

    def _tell_place(self, waiting: Waiting, now: float) -> list[Output]:
        """``queued`` for ``waiting``: its place and expected wait."""
        session = self.sessions.get(waiting.session)
        if session is None or session.conn is None:
            return []
        place = self._told[waiting.session] = self.queue.place(waiting.session)
        remaining: list[float] = []
        for bot in self._sessions(waiting.opponent):
            for game in bot.games:
                started, kind = self._running.get(game, (now, LADDER_KIND))
                mean = self.durations.mean(PLAY_KIND if kind == PLAY_KIND else bot.name)
                remaining.append(mean - (now - started))
        # The slots it waits for go to the people ahead of it first: people's games.
        wait = expected_wait(place, remaining, self.durations.mean(PLAY_KIND))
        return [Send(session.conn, Queued(waiting.rules, waiting.opponent, place,
                                          round(wait, 1)))]

    def _ended(self, game_id: str, record: GameRecord) -> None:
        """Game ``game_id`` (a ladder, check or people's game) ended: its length counts
        towards the expected waits."""
        self._play_address.pop(game_id, None)
        running = self._running.pop(game_id, None)
        if running is None:
            return
        seconds = (record.finished_at - record.started_at).total_seconds()
        names = {seat.bot_name for seat in record.seats}
        self.durations.note([PLAY_KIND] if running[1] == PLAY_KIND else names, seconds)

    # ------------------------------------------------------------------ standings

    def standings(self, now: float) -> dict[str, list[dict[str, object]]]:
        """The live ladder per ruleset at ``now`` (:meth:`server.ladder.Ladder.standings`),
        with who is connected; empty without a ladder."""
        if self.ladder is None:
            return {}
        connected = {s.name for s in self._sessions(leaving=True)}
        return {rules: self.ladder.standings(rules, connected, now)
                for rules in self.ladder.rules}

    def people(self) -> dict[str, list[dict[str, object]]]:
        """The Play page's rating pool per ruleset; empty without a ladder."""
        if self.ladder is None:
            return {}
        return {rules: self.ladder.people(rules) for rules in self.ladder.rules}


def _their_side(side: str) -> Side:
    """The side a person's opponent plays when the person takes ``side`` (the wire value)."""
    return Side.DETECTIVES if side == Side.MRX.value else Side.MRX
