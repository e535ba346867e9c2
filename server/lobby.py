"""The admin lobby: ``list_bots`` and ``start_match``, the games an admin (a tournament
runner, ``yard match``) starts between the bots connected now.

:class:`Lobby` is a part of the sans-I/O core (:class:`server.core.Core` owns one): it checks
an admin's request, picks a live session for each bot named and hands the game to the core to
start (:class:`GameStarter`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import Protocol

from game import YardError, load_ruleset
from game.views import rules_from_definition
from protocol import (
    BotInfo,
    Bots,
    ErrorCode,
    ListBots,
    MatchStarted,
    Policy,
    ProtocolError,
    StartMatch,
)
from server.config import ServerConfig
from server.match import MatchSpec, Player
from server.outputs import Output, Send
from server.session import Connection, Session, open_bots


class GameStarter(Protocol):
    """What the lobby needs of the core (:class:`server.core.Core`)."""

    @property
    def closing(self) -> bool:
        """The server is shutting down: it starts no more games."""
        ...

    def start(self, spec: MatchSpec, now: float, *first: Output, admin: str | None = None
              ) -> list[Output]:
        """Start the game ``spec`` (``first``: what to send before its messages;
        ``admin``: the session told when it ends)."""
        ...


class Lobby:
    """The admin's requests: the bots connected now, and games between them.

    ``sessions`` is the core's own table of sessions (read, never changed here);
    ``new_id`` makes a game id from a prefix."""

    def __init__(self, config: ServerConfig, sessions: dict[str, Session],
                 new_id: Callable[[str], str], core: GameStarter) -> None:
        """A lobby over ``sessions`` that starts games through ``core``."""
        self.config = config
        self.sessions = sessions
        self.new_id = new_id
        self.core = core

    def handle(self, conn: Connection, session: Session, msg: ListBots | StartMatch,
               now: float) -> list[Output]:
        """Answer ``list_bots``, or start the game ``start_match`` asks for (admins only)."""
        if not session.admin:
            raise ProtocolError(ErrorCode.FORBIDDEN, f"{msg.TYPE} needs the admin token")
        if isinstance(msg, ListBots):
            return [Send(conn.id, Bots(self.bot_list()))]
        if self.core.closing:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is shutting down")
        spec = self._match_spec(msg)
        return self.core.start(spec, now, Send(conn.id, MatchStarted(spec.game_id, msg.tag)),
                               admin=session.id)

    def bot_list(self) -> list[BotInfo]:
        """Connected bots by name, with version, live session count and instances (a
        session that is leaving takes no new games: not listed)."""
        sessions: dict[str, list[Session]] = {}
        for s in open_bots(self.sessions.values()):
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

    def _pick(self, name: str, instance: str | None) -> Session:
        """The least busy live session of bot ``name`` (of that ``instance`` when given)
        that is not leaving."""
        candidates = [s for s in open_bots(self.sessions.values())
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
