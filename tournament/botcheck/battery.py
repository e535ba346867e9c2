"""The checks: every game and probe ``yard bot-check`` runs against one launched bot.

:class:`Battery` starts an in-process match server (games go to memory, not a database),
the :class:`~tournament.botcheck.proxy.Proxy` in front of it, the reference bot, and the bot
under test (like in a tournament: a bot spec or an ``--engine``); then runs the checks in
order, one :class:`Check` each. A bot that crashed or did not come back after a dropped
connection is started again before the next game.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path

from bots.client import BotClient
from game import Termination, load_ruleset
from host.writer import GameWriter
from protocol import ErrorCode, OnTimeout, Policy, StartMatch, TimeControl
from protocol.messages import MatchResult
from records import GameRecord
from server.admin import AdminClient, AdminError
from server.app import MatchServer
from server.config import ServerConfig
from tournament.botcheck.claims import Claims
from tournament.botcheck.proxy import EXTRA_KEY, Mode, Observer, Proxy
from tournament.botcheck.reference import REFERENCE, ReferenceBot
from tournament.engines import ROLES, Engine, EngineError, start_engine
from tournament.processes import Child, ProcessError

RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}
OWN_FAULTS = {Termination.BOT_ERROR, Termination.ILLEGAL_MOVE, Termination.TIMEOUT}
"""Forfeits by the bot's own doing (not a dropped connection or the harness)."""


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: str  # pass, fail, skip
    reason: str

    def line(self) -> str:
        """``PASS name: reason``."""
        return f"{self.status.upper()} {self.name}: {self.reason}"


class _Sink:
    def __init__(self) -> None:
        self.records: dict[str, GameRecord] = {}

    def save_game(self, record: GameRecord) -> object:
        self.records[record.game_id] = record
        return None


class Battery:
    """Runs every check against one launched bot."""

    def __init__(self, engine: Engine, claims: Claims, *, seed: int = 1,
                 move_time: float = 5.0, deadline: float = 1.0, grace: float = 3.0,
                 log: Path | None = None) -> None:
        """The checks of ``engine`` against ``claims``, not yet run."""
        self.engine = engine
        self.claims = claims
        self.seed = seed
        self.move_time = move_time
        self.deadline = deadline
        self.grace = grace
        self.log = log
        self.observer = Observer()
        self.sink = _Sink()
        self.checks: list[Check] = []
        self.proxy = Proxy("", self.observer)
        self.child: Child | None = None
        self.urls = ("", "")
        self.admin_token: str | None = None

    async def run(self) -> list[Check]:
        """Every check, in order; a bot that does not connect fails ``connects`` only."""
        server = MatchServer(ServerConfig(grace_s=self.grace), GameWriter(self.sink), port=0)
        self.admin_token = server.admin_token
        await server.start()
        proxy = self.proxy = Proxy(server.url, self.observer)
        await proxy.start()
        reference = BotClient(lambda: ReferenceBot(), server.url, REFERENCE)
        ref_task = asyncio.create_task(reference.run())
        self.urls = (proxy.url, server.url)
        try:
            await asyncio.wait_for(reference.connected.wait(), 30)
            try:
                await self._launch()
            except (ProcessError, EngineError) as exc:
                self._add("connects", False, str(exc))
                return self.checks
            self._add("connects", True, f"connected as {self.engine.name!r}")
            async with AdminClient(server.url, server.admin_token,
                                   name="yard-bot-check") as admin:
                await self._ping(proxy)
                for rules in self.claims.rules:
                    for role in ROLES:
                        await self._plain(admin, rules, role)
                await self._double_secret(admin)
                await self._resume(admin, proxy)
                await self._deadline(admin)
                await self._extra(admin)
        except (AdminError, TimeoutError) as exc:
            self._add("harness", False, f"the check itself failed: {exc or 'timed out'}")
        finally:
            if self.child is not None:
                await self.child.stop()
            reference.stopped = True
            ref_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await ref_task
            await proxy.stop()
            await server.stop()
        return self.checks

    # ------------------------------------------------------------------ helpers

    async def _launch(self) -> None:
        if self.child is not None:
            await self.child.stop()
            self.child = None
        self.child = await start_engine(self.engine, self.urls[0], stderr_log=self.log,
                                        watch_url=self.urls[1], timeout=30,
                                        admin_token=self.admin_token)

    def _add(self, name: str, ok: bool | None, reason: str) -> None:
        status = "skip" if ok is None else "pass" if ok else "fail"
        self.checks.append(Check(name, status, reason))

    def _bot_conn(self) -> int | None:
        conns = [c for c, hello in self.observer.hellos if hello.get("role", "bot") == "bot"]
        live = [c for c in conns if c in self.proxy.clients]
        return live[-1] if live else None

    async def _ensure_bot(self) -> None:
        """Before a game: a bot that is gone (it crashed, or did not come back after the
        dropped connection) is given the grace period to return, then started again."""
        if self._bot_conn() is not None:
            return
        gone = self.child is not None and self.child.proc.returncode is not None
        if gone or not await self.proxy.wait_until(lambda: self._bot_conn() is not None,
                                                  self.grace):
            await self._launch()

    async def _game(self, admin: AdminClient, rules: str, role: str, mode: Mode,
                    move_time: float | None = None
                    ) -> tuple[MatchResult, GameRecord, set[int]]:
        try:
            await self._ensure_bot()
        except (ProcessError, EngineError) as exc:
            raise AdminError(ErrorCode.BOT_NOT_CONNECTED,
                             f"the bot is gone and could not be started again: {exc}"
                             ) from None
        self.observer.start(mode)
        bot, ref = self.engine.name, REFERENCE
        request = StartMatch(rules, bot if role == "mrx" else ref,
                             [bot if role == "detectives" else ref], seed=self.seed,
                             seat_seed=self.seed,  # reproducible: the bot's seeds too
                             time_control=TimeControl(move_time or self.move_time, 0.0),
                             policy=Policy(OnTimeout.FORFEIT, 3))
        game = await admin.start_match(request)
        limit = (move_time or self.move_time) * 400 + 4 * self.grace
        result = await admin.result(game, limit)
        self.observer.mode = Mode.PLAIN
        record = self.sink.records[game]
        seats = {s.seat for s in record.seats if s.bot_name == bot}
        return result, record, seats

    def _verdict(self, result: MatchResult, record: GameRecord, seats: set[int]) -> str:
        """"" for a clean game of the bot, else why not."""
        if result.termination not in RULE_ENDINGS and result.seat is not None and \
                _seat_number(result.seat) not in seats:
            return (f"the reference bot forfeited ({result.termination.value}); this is a "
                    f"yard bug, not the bot's")
        problem = self._verdict_of_faults(record, seats)
        if problem:
            return problem
        if result.termination not in RULE_ENDINGS:
            return f"the game ended by {result.termination.value}"
        return ""

    def _verdict_of_faults(self, record: GameRecord, seats: set[int]) -> str:
        """The bot's first fault in ``record`` with its reason (for ``bot_error``: what the
        bot itself said, ``choose raised ValueError: ...``), or ""."""
        faults = [t for t in record.turns if t.seat in seats and t.fault is not None]
        if faults:
            turn = faults[0]
            seat = "mrx" if turn.seat == 0 else f"d{turn.seat}"
            detail = (turn.detail or "").removeprefix(f"{turn.fault}: ")[:200]
            exited = ""
            if self.child is not None and self.child.proc.returncode is not None:
                exited = f"; the bot exited with status {self.child.proc.returncode}"
            return f"{turn.fault} at turn {turn.index} ({seat})" + \
                (f": {detail}" if detail else "") + exited
        return ""

    def _own_fault(self, record: GameRecord, seats: set[int]) -> str:
        """The bot's own forfeit of ``record`` (``bot_error at turn 1 (mrx): choose raised
        ...``), or "" when it did not forfeit by a fault of its own."""
        outcome = record.outcome
        if outcome.seat not in seats or outcome.termination not in OWN_FAULTS:
            return ""
        return self._verdict_of_faults(record, seats)

    # ------------------------------------------------------------------ checks

    async def _ping(self, proxy: Proxy) -> None:
        conn = self._bot_conn()
        if conn is None:
            self._add("ping", False, "no live connection of the bot")
            return
        nonce = 424242
        await proxy.send(conn, {"type": "ping", "nonce": nonce})
        ok = await proxy.wait_until(lambda: nonce in self.observer.pongs, 5.0)
        self._add("ping", ok, "answered with the same nonce" if ok else
                  "no pong with the same nonce within 5 s")

    async def _plain(self, admin: AdminClient, rules: str, role: str) -> None:
        name = f"{rules} as {role}"
        if role not in self.claims.roles:
            self._add(name, None, f"the bot does not play {role}")
            return
        result, record, seats = await self._game(admin, rules, role, Mode.PLAIN)
        problem = self._verdict(result, record, seats)
        self._add(name, not problem, problem or
                  f"{len(record.turns)} turns, {result.termination.value}")

    async def _double_secret(self, admin: AdminClient) -> None:
        name = "double and secret moves"
        rules = next((r for r in self.claims.rules
                      if (rs := load_ruleset(r)).double_moves and rs.secret_moves), None)
        if rules is None:
            self._add(name, None, "no claimed ruleset has double and secret moves")
            return
        notes: list[str] = []
        if "mrx" in self.claims.roles:
            result, record, seats = await self._game(admin, rules, "mrx", Mode.DOUBLE_SECRET)
            problem = self._verdict(result, record, seats)
            offered = dict(self.observer.offered)
            for key, (kind, subset) in offered.items():
                answer = self.observer.answers.get(key)
                if answer is not None and answer not in subset:
                    problem = problem or (f"offered only {kind} moves ({', '.join(subset[:3])}"
                                          f"{', ...' if len(subset) > 3 else ''}), it "
                                          f"answered {answer}")
            kinds = sorted({kind for kind, _ in offered.values()})
            if not problem and kinds != ["double", "secret"]:
                problem = (f"the game did not reach both kinds of move (offered: "
                           f"{', '.join(kinds) or 'none'})")
            if problem:
                self._add(name, False, f"as mrx on {rules}: {problem}")
                return
            notes.append("as mrx it played the double and the secret move offered")
        if "detectives" in self.claims.roles:
            result, record, seats = await self._game(admin, rules, "detectives", Mode.PLAIN)
            problem = self._verdict(result, record, seats)
            seen = self.observer.mrx_updates
            if not problem and not (any("+" in m for m in seen) and
                                    any(m.startswith("secret") for m in seen)):
                problem = "the reference Mister X found no double and secret move to play"
            if problem:
                self._add(name, False, f"as detectives on {rules}: {problem}")
                return
            notes.append("as detectives it followed Mister X's double and secret moves")
        self._add(name, True, f"{rules}: {'; '.join(notes)}")

    def _longest(self) -> str:
        """The claimed ruleset with the longest games."""
        return max(self.claims.rules, key=lambda r: load_ruleset(r).max_moves)

    async def _resume(self, admin: AdminClient, proxy: Proxy) -> None:
        role = "detectives" if "detectives" in self.claims.roles else "mrx"
        rules = self._longest()
        before = len(self.observer.hellos)
        token_of = dict(self.observer.tokens)
        result, record, seats = await self._game(admin, rules, role, Mode.RESUME)
        dropped = self.observer.dropped_conn
        if dropped is None:
            own = self._own_fault(record, seats)
            if own:  # a failure of its own, already named by the game checks: no follow-on
                self._add("resume", None, f"not checked: the game on {rules} ended before "
                          f"the bot's second move, by its own fault ({own})")
                return
            self._add("resume", False, f"the game on {rules} ended before the bot's second "
                      f"move; nothing was dropped")
            return
        token = token_of.get(dropped) or self.observer.tokens.get(dropped)
        later = [hello for _, hello in self.observer.hellos[before:]]
        problem = self._verdict(result, record, seats)
        if not later:
            reason = f"it did not reconnect within the {self.grace:g} s grace period"
        elif all(h.get("resume") != token for h in later):
            reason = ("it reconnected without the resume_token from its welcome (a new "
                      "session), so its seats were lost")
        else:
            reason = ""
        if reason or problem:
            self._add("resume", False, f"connection dropped mid-game on {rules}: "
                      f"{reason or problem}" + (f"; game: {problem}" if reason and problem
                                                 else ""))
            return
        self._add("resume", True, f"reconnected with its resume token and finished the game "
                  f"on {rules} ({result.termination.value})")

    async def _deadline(self, admin: AdminClient) -> None:
        name = "deadline"
        role = "mrx" if "mrx" in self.claims.roles else "detectives"
        rules = self.claims.rules[0]
        result, record, seats = await self._game(admin, rules, role, Mode.PLAIN,
                                                 move_time=self.deadline)
        problem = self._verdict(result, record, seats)
        slowest = max((t.time_used for t in record.turns if t.seat in seats), default=0.0)
        self._add(name, not problem, problem or f"{self.deadline:g} s per move on {rules} as "
                  f"{role}; slowest move {slowest:.3f} s")

    async def _extra(self, admin: AdminClient) -> None:
        name = "unknown fields"
        role = "detectives" if "detectives" in self.claims.roles else "mrx"
        rules = self.claims.rules[0]
        result, record, seats = await self._game(admin, rules, role, Mode.EXTRA_FIELDS)
        problem = self._verdict(result, record, seats)
        self._add(name, not problem, problem or
                  f"ignored {EXTRA_KEY!r} in every message of a game on {rules}")


def _seat_number(seat: str) -> int:
    return 0 if seat == "mrx" else int(seat.lstrip("d"))
