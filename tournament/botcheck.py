"""``yard bot-check``: a compliance battery for bot authors.

The bot under test is launched like in a tournament (a bot spec or an ``--engine``) and
connects to a local match server through a proxy; a reference bot plays the other side.
Checks, one line each (``PASS``/``FAIL``/``SKIP``):

- ``connects``: the bot starts and connects under its name;
- ``ping``: it answers a protocol ``ping`` with a ``pong`` carrying the same nonce;
- ``RULES as ROLE``: a legal game on each ruleset it claims, in each role it plays;
- ``double and secret moves``: as Mister X it is offered only double moves, then only
  secret moves, and must pick one of those offered; as detectives it must follow a Mister X
  who plays a double and a secret move (rulesets that have them);
- ``resume``: the proxy drops its connection mid-game; it must reconnect with the
  ``resume_token`` from its ``welcome`` within the grace period and finish the game;
- ``deadline``: a game with a short move time (``--deadline``) and no bank, without timeout;
- ``unknown fields``: every message of one game carries extra fields it must ignore.

The proxy's frame rules are a sans-I/O :class:`Observer`; :class:`Proxy` only moves frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from bots.base import Bot
from bots.client import BotClient
from bots.registry import bot_class, default_name
from bots.spec import BotSpec
from db.records import GameRecord
from game import MRX, Move, Termination, Ticket, View, load_ruleset
from game.errors import YardError
from game.rules import builtin_rulesets
from protocol import ErrorCode, OnTimeout, Policy, StartMatch, TimeControl
from protocol.messages import MatchResult
from server.admin import AdminClient, AdminError
from server.app import MatchServer
from server.core import ServerConfig
from tournament.engines import (
    ROLES,
    Engine,
    EngineError,
    engine_table,
    spec_engine,
    start_engine,
)
from tournament.processes import Child, ProcessError

REFERENCE = "yard-reference"
EXTRA_KEY = "x_yard_check"
RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}


class BotCheckError(YardError):
    """``yard bot-check`` was called wrongly (not: the bot failed a check)."""


class Mode(Enum):
    """What the proxy does to the game being played."""

    PLAIN = "plain"
    DOUBLE_SECRET = "double and secret moves"
    RESUME = "resume"
    EXTRA_FIELDS = "unknown fields"


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: str  # pass, fail, skip
    reason: str

    def line(self) -> str:
        """``PASS name: reason``."""
        return f"{self.status.upper()} {self.name}: {self.reason}"


@dataclass
class Observer:
    """Sans-I/O frame rules of the proxy between the bot and the server.

    :meth:`to_bot` may rewrite a server frame (extra fields, a narrowed ``legal`` list);
    :meth:`from_bot` records the bot's frames and says when to drop its connection.
    """

    mode: Mode = Mode.PLAIN
    tokens: dict[int, str] = field(default_factory=dict)          # conn -> resume token
    hellos: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    offered: dict[tuple[str, int], tuple[str, list[str]]] = field(default_factory=dict)
    answers: dict[tuple[str, int], str] = field(default_factory=dict)
    mrx_updates: list[str] = field(default_factory=list)
    pongs: set[Any] = field(default_factory=set)
    moves_in_mode: int = 0
    dropped_conn: int | None = None
    _mrx_turns: int = 0

    def start(self, mode: Mode) -> None:
        """Begin a game in ``mode``."""
        self.mode = mode
        self.offered.clear()
        self.answers.clear()
        self.mrx_updates.clear()
        self.moves_in_mode = 0
        self.dropped_conn = None
        self._mrx_turns = 0

    def to_bot(self, conn: int, data: dict[str, Any]) -> dict[str, Any]:
        """The frame to pass on to the bot for server frame ``data``."""
        kind = data.get("type")
        if kind == "welcome":
            self.tokens[conn] = str(data.get("resume_token"))
        elif kind == "update" and data.get("seat") == "mrx":
            self.mrx_updates.append(str(data.get("move")))
        elif kind == "your_turn" and self.mode is Mode.DOUBLE_SECRET:
            data = self._narrow(data)
        if self.mode is Mode.EXTRA_FIELDS:
            data = {**data, EXTRA_KEY: {"note": "unknown fields must be ignored", "n": 1}}
            for key in ("view", "clock", "time_control"):
                if isinstance(data.get(key), dict):
                    data[key] = {**data[key], EXTRA_KEY: 1}
        return data

    def _narrow(self, data: dict[str, Any]) -> dict[str, Any]:
        key = (str(data.get("game")), int(data.get("turn", -1)))
        if data.get("seat") != "mrx" or key in self.offered:
            return data
        legal = [str(m) for m in data.get("legal", [])]
        kind, subset = "", []
        if self._mrx_turns == 0:
            kind, subset = "double", [m for m in legal if "+" in m]
        elif self._mrx_turns == 1:
            kind, subset = "secret", [m for m in legal if m.startswith("secret:")
                                      and "+" not in m]
        self._mrx_turns += 1
        if not subset:
            return data
        self.offered[key] = (kind, subset)
        return {**data, "legal": subset}

    def from_bot(self, conn: int, data: dict[str, Any]) -> bool:
        """Record a bot frame; True: drop the connection once it has been passed on."""
        kind = data.get("type")
        if kind == "hello":
            self.hellos.append((conn, data))
        elif kind == "pong":
            self.pongs.add(data.get("nonce"))
        elif kind == "move":
            self.answers[(str(data.get("game")), int(data.get("turn", -1)))] = \
                str(data.get("move"))
            self.moves_in_mode += 1
            if self.mode is Mode.RESUME and self.dropped_conn is None and \
                    self.moves_in_mode == 2:
                self.dropped_conn = conn
                return True
        return False


class Proxy:
    """A websocket proxy: every bot connection gets its own upstream connection; frames go
    through the :class:`Observer`. ``changed`` is set after every frame."""

    def __init__(self, upstream: str, observer: Observer) -> None:
        self.upstream = upstream
        self.observer = observer
        self.url = ""
        self.changed = asyncio.Event()
        self.clients: dict[int, ServerConnection] = {}
        self._ids = itertools.count(1)
        self._server: Server | None = None

    async def start(self) -> str:
        """Listen on a free loopback port; returns its URL."""
        self._server = await serve(self._handle, "127.0.0.1", 0, compression=None,
                                   max_size=2**22)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        """Close every connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def send(self, conn: int, data: dict[str, Any]) -> None:
        """Send a frame of our own to a bot connection."""
        client = self.clients.get(conn)
        if client is not None:
            with contextlib.suppress(ConnectionClosed):
                await client.send(json.dumps(data))

    async def _handle(self, client: ServerConnection) -> None:
        conn = next(self._ids)
        self.clients[conn] = client
        try:
            async with connect(self.upstream, proxy=None, compression=None,
                               max_size=2**22) as server:
                up = asyncio.create_task(self._up(conn, client, server))
                down = asyncio.create_task(self._down(conn, client, server))
                await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
                for task in (up, down):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await task
        except (OSError, ConnectionClosed):
            pass
        finally:
            self.clients.pop(conn, None)
            self.changed.set()

    async def _up(self, conn: int, client: ServerConnection, server: ClientConnection
                  ) -> None:
        async for frame in client:
            drop = self.observer.from_bot(conn, _loads(frame))
            await server.send(frame)
            self.changed.set()
            if drop:
                client.transport.abort()  # like a network failure: no close handshake
                await server.close()
                return

    async def _down(self, conn: int, client: ServerConnection, server: ClientConnection
                    ) -> None:
        async for frame in server:
            data = _loads(frame)
            if data:
                frame = json.dumps(self.observer.to_bot(conn, data))
            await client.send(frame)
            self.changed.set()


def _loads(frame: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(frame)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class ReferenceBot(Bot):
    """Random moves, except that Mister X opens with a double move and then a secret move
    when he can (so detectives see both in his travel log)."""

    name = REFERENCE

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.mrx_turns = 0

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        if view.seat == MRX:
            self.mrx_turns += 1
            if self.mrx_turns == 1:
                wanted = [m for m in legal if m.is_double]
            elif self.mrx_turns == 2:
                wanted = [m for m in legal if m.ticket is Ticket.SECRET and not m.is_double]
            else:
                wanted = []
            if wanted:
                return self.rng.choice(wanted)
        return self.rng.choice(legal)


class _Sink:
    def __init__(self) -> None:
        self.records: dict[str, GameRecord] = {}

    def save_game(self, record: GameRecord) -> object:
        self.records[record.game_id] = record
        return None


@dataclass
class Claims:
    """What the bot says it plays."""

    roles: list[str]
    rules: list[str]


def claims_of(engine: Engine, rules: list[str] | None) -> Claims:
    """Roles and rulesets of the bot under test (``rules`` overrides its claim)."""
    spec = engine.spec
    if spec is not None:
        cls = bot_class(spec.ref)
        roles = sorted(cls.roles)
        claimed = sorted(cls.rulesets) if cls.rulesets is not None else None
    else:
        roles = sorted(engine.roles or ROLES)
        claimed = None
    claimed = list(engine.rules) if engine.rules else claimed
    names = rules or claimed or [r.name for r in builtin_rulesets()]
    for name in names:
        load_ruleset(name)  # an unknown ruleset is a usage error
    return Claims(roles, names)


class Battery:
    """Runs every check against one launched bot."""

    def __init__(self, engine: Engine, claims: Claims, *, seed: int = 1,
                 move_time: float = 5.0, deadline: float = 1.0, grace: float = 3.0,
                 log: Path | None = None) -> None:
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

    async def run(self) -> list[Check]:
        """Every check, in order; a bot that does not connect fails ``connects`` only."""
        server = MatchServer(ServerConfig(grace_s=self.grace), self.sink, port=0)
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
            async with AdminClient(server.url, name="yard-bot-check") as admin:
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
                                        watch_url=self.urls[1], timeout=30)

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
        if gone or not await _wait(self.proxy, lambda: self._bot_conn() is not None,
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
        if result.termination not in RULE_ENDINGS:
            return f"the game ended by {result.termination.value}"
        return ""

    # ------------------------------------------------------------------ checks

    async def _ping(self, proxy: Proxy) -> None:
        conn = self._bot_conn()
        if conn is None:
            self._add("ping", False, "no live connection of the bot")
            return
        nonce = 424242
        await proxy.send(conn, {"type": "ping", "nonce": nonce})
        ok = await _wait(proxy, lambda: nonce in self.observer.pongs, 5.0)
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


async def _wait(proxy: Proxy, cond: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        proxy.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proxy.changed.wait(), left)
    return True


@dataclass
class BotCheckRun:
    """The outcome of :func:`check_bot`: which engine was checked, on what, and each check."""

    engine: Engine
    claims: Claims
    checks: list[Check]
    log: Path
    seconds: float

    @property
    def passed(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The ``yard bot-check --json`` object."""
        return {"bot": self.engine.name, "passed": self.passed, "rules": self.claims.rules,
                "roles": self.claims.roles, "seconds": round(self.seconds, 1),
                "checks": [asdict(c) for c in self.checks], "log": str(self.log)}

    def summary(self) -> str:
        """The last line of the text report."""
        verdict = "passed" if self.passed else "FAILED"
        return (f"{self.engine.name}: {verdict} "
                f"({sum(c.status == 'pass' for c in self.checks)} passed, "
                f"{sum(c.status == 'fail' for c in self.checks)} failed, "
                f"{sum(c.status == 'skip' for c in self.checks)} skipped in "
                f"{self.seconds:.1f} s); bot output: {self.log}")


def check_bot(spec: BotSpec, engines: list[Engine], rules: str | None = None, seed: int = 1,
              move_time: float = 5.0, deadline: float = 1.0, grace: float = 3.0,
              log: Path | None = None) -> BotCheckRun:
    """Run the battery on ``spec`` (a bot spec, or the name of one of ``engines``) for the
    comma-separated ``rules`` (default: those the bot claims, else every built-in one)."""
    table = engine_table(engines)
    if spec.ref in table:
        if spec.options:
            raise BotCheckError(f"give options of engine {spec.ref!r} in its --engine "
                                f"definition (option.KEY=VALUE)")
        engine = table.pop(spec.ref)
    else:
        engine = spec_engine(spec, default_name(spec.ref))
    if table:
        raise BotCheckError(f"--engine {', '.join(sorted(table))}: not checked (name the "
                            f"engine as BOT_SPEC)")
    if engine.name == REFERENCE:
        raise BotCheckError(f"the name {REFERENCE!r} is taken by the reference bot")
    wanted = [r.strip() for r in rules.split(",") if r.strip()] if rules else None
    claims = claims_of(engine, wanted)
    log = log or Path(tempfile.mkstemp(prefix="yard-bot-check-", suffix=".log")[1])
    battery = Battery(engine, claims, seed=seed, move_time=move_time, deadline=deadline,
                      grace=grace, log=log)
    started = time.monotonic()
    checks = asyncio.run(battery.run())
    return BotCheckRun(engine, claims, checks, log, time.monotonic() - started)
