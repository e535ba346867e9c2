"""Play a stored tournament schedule on a match server.

The runner is orchestration only: pairings come from :mod:`tournament.schedule`,
storage from :mod:`db.store`, refereeing from the server. Without a server URL it starts
``yard serve`` and, per bot, one process for each game slot (:mod:`tournament.pool`:
concurrent games never share a bot process): ``yard bot SPEC`` for built-in, installed and
class bots, the command of a command engine (:mod:`tournament.engines`); built-in bots get no
back door: they connect exactly like a custom bot. It stops them at the end, on errors and
on Ctrl-C. Games still running when it stops are stored by the server as ``aborted`` and
stay pending, so ``yard tournament resume`` plays exactly what is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bots.spec import BotSpec, parse_option_pairs
from db.records import ScheduledGame
from db.store import Database
from game import Outcome, Termination, load_ruleset
from game.errors import YardError
from protocol import ErrorCode, OnTimeout, Policy, StartMatch, TimeControl
from protocol.messages import MatchResult
from ratings.sprt import SprtError, SprtSpec, SprtState
from server.admin import AdminClient, AdminError
from tournament.engines import Engine, EngineError, spec_engine
from tournament.pool import (
    BotLaunch,
    BotPool,
    available_cores,
    default_concurrency,
    oversubscription,
)
from tournament.processes import Child, ProcessError, start_server, yard_argv
from tournament.schedule import Format, bots_of, make_schedule, mrx_bot, team_members
from tournament.sprt import SprtMonitor, record_state, store_state

log = logging.getLogger(__name__)

RETRY_S = 0.25


class TournamentRunError(YardError):
    """A tournament could not be set up or run."""


@dataclass(frozen=True)
class TournamentSpec:
    """Everything that defines a tournament; stored with it so a resume needs no flags."""

    rules: str
    bots: list[str]
    format: str = Format.ROUND_ROBIN.value
    pairs: int = 10
    seed: int = 0
    move_time: float = 10.0
    bank_time: float = 0.0
    self_play: bool = False
    detectives: int | None = None
    on_timeout: str = OnTimeout.FORFEIT.value
    max_illegal: int = 3
    connect_timeout: float = 15.0
    bot_options: dict[str, list[str]] = field(default_factory=dict)
    #: An SPRT of the first player against the second (``SprtSpec.to_dict()``); ``pairs``
    #: is then the most pairs the test may use.
    sprt: dict[str, float] | None = None
    #: Bots that are not built-in or installed ones: name -> ``Engine.to_dict()``.
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the database)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSpec:
        """Inverse of :meth:`to_dict`; unknown keys are ignored for forward compatibility."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def validate(self) -> None:
        """Check the ruleset and numbers before anything is stored or started."""
        rules = load_ruleset(self.rules)
        if self.detectives is not None:
            rules.with_detectives(self.detectives)
        if self.move_time <= 0 or self.bank_time < 0 or self.connect_timeout < 0:
            raise TournamentRunError("--move-time must be > 0 and --bank-time >= 0")
        if self.max_illegal < 1:
            raise TournamentRunError("--max-illegal must be at least 1")
        make_schedule(self.bots, self.pairs, self.seed, Format(self.format), self.self_play)
        if self.sprt is not None:
            self._validate_sprt()

    def _validate_sprt(self) -> None:
        try:
            SprtSpec.from_dict(self.sprt or {})
        except SprtError as exc:
            raise TournamentRunError(f"--sprt: {exc}") from None
        if len(self.bots) != 2:
            raise TournamentRunError(f"--sprt tests one player against another: give "
                                     f"exactly two players in --bots, not {len(self.bots)}")
        if self.self_play:
            raise TournamentRunError("--sprt cannot be combined with --self-play")

    def bot_names(self) -> list[str]:
        """Every distinct bot process the tournament needs, in first-mention order."""
        names = [name for player in self.bots for name in bots_of(player)]
        return list(dict.fromkeys(names))

    def engine(self, name: str) -> Engine:
        """How to launch bot ``name``: its ``--engine``, else ``yard bot NAME`` with the
        tournament's options for it."""
        if name in self.engines:
            return Engine.from_dict(self.engines[name])
        return spec_engine(BotSpec(name).with_options(
            parse_option_pairs(self.bot_options.get(name, []))), name)

    def check_roles(self, roles: dict[str, list[str]]) -> None:
        """Raise unless every bot is known (``roles``: name -> roles it plays) and plays
        the side each player spec puts it on."""
        for player in self.bots:
            wanted = [(mrx_bot(player), "mrx")]
            wanted += [(name, "detectives") for name in team_members(player)]
            for name, role in wanted:
                if name not in roles:
                    raise TournamentRunError(f"unknown bot {name!r}; bots: "
                                             f"{', '.join(sorted(roles))} (or a class "
                                             f"file.py:Class, or an --engine)")
                if role not in roles[name]:
                    raise TournamentRunError(
                        f"bot {name!r} cannot play {role} (it plays "
                        f"{' and '.join(roles[name])}); tournaments swap roles, so give "
                        f"such a bot a partner, e.g. 'run2/rush' (Mister X/detectives)")


def create(db: Database, spec: TournamentSpec) -> str:
    """Validate ``spec``, store the tournament and its whole schedule; returns its id."""
    spec.validate()
    games = make_schedule(spec.bots, spec.pairs, spec.seed, Format(spec.format), spec.self_play)
    tournament_id = db.create_tournament(spec.to_dict())
    db.schedule(tournament_id, games)
    return tournament_id


@dataclass
class Progress:
    """What the runner reports after every game."""

    total: int
    done: int = 0
    played_now: int = 0
    forfeits: int = 0
    aborted: int = 0
    started: float = field(default_factory=time.monotonic)
    #: An SPRT tournament's test after the last game (None otherwise).
    sprt: SprtState | None = None

    @property
    def rate(self) -> float:
        """Games per second in this run."""
        elapsed = time.monotonic() - self.started
        return self.played_now / elapsed if elapsed > 0 else 0.0


Listener = Callable[[Progress, ScheduledGame, Outcome], None]


@dataclass(frozen=True)
class BuiltinBot:
    """What ``yard bots --json`` says of a bot (with the tournament's options), or what an
    ``--engine`` declares."""

    name: str
    roles: list[str]
    timed: bool = False
    cores: int = 1


class TournamentRunner:
    """Plays the pending games of one tournament, at most ``concurrency`` at a time.

    ``concurrency`` ``None`` picks it: without a server URL from the cores and the bots
    (:func:`tournament.pool.default_concurrency`), with one the number of cores.
    ``notice`` gets one-line warnings (default: the log), e.g. when time-based bots would
    share cores. ``bots``: what :func:`bot_infos` said of this tournament's spec, when the
    caller already asked (saves starting ``yard bots --json`` again).
    """

    def __init__(self, db: Database, db_url: str, tournament_id: str, *,
                 server_url: str | None = None, admin_token: str | None = None,
                 concurrency: int | None = None, listener: Listener | None = None,
                 child_log: Path | None = None,
                 on_server: Callable[[str], None] | None = None,
                 notice: Callable[[str], None] | None = None,
                 bots: dict[str, BuiltinBot] | None = None) -> None:
        if concurrency is not None and concurrency < 1:
            raise TournamentRunError("--concurrency must be at least 1")
        self.db = db
        self.db_url = db_url
        self.tournament_id = tournament_id
        self.spec = TournamentSpec.from_dict(db.get_tournament(tournament_id).spec)
        self.server_url = server_url
        self.admin_token = admin_token
        self.concurrency = concurrency
        self.listener = listener
        self.notice = notice or log.warning
        self.bots = bots
        #: Where the local server's and bots' stderr goes (None: this process's stderr).
        self.child_log = child_log
        #: Called with the server's ``ws://`` URL once it is up (to print the web address).
        self.on_server = on_server
        self._server: Child | None = None
        #: The local bot processes, one per bot and game slot (None with a server URL).
        self.pool: BotPool | None = None
        self._gone: set[tuple[str, str | None]] = set()
        #: The live SPRT of an ``--sprt`` tournament (None otherwise).
        self.sprt = SprtMonitor.load(db, tournament_id)
        self._skipped = 0
        self._sprt_lock = asyncio.Lock()

    async def run(self) -> Progress:
        """Play every pending game (an SPRT: until its decision); returns the final
        progress counters."""
        pending = self.db.pending(self.tournament_id)
        progress = Progress(total=len(self.db.scheduled(self.tournament_id)))
        progress.done = progress.total - len(pending)
        progress.sprt = None if self.sprt is None else self.sprt.state()
        if not pending or self._decided():
            self._record_sprt(progress)
            return progress
        try:
            url = self.server_url or await self._start_local(len(pending))
            if self.on_server is not None:
                self.on_server(url)
            # One token per game slot: its processes' instance label (None: any session).
            slots: asyncio.Queue[str | None] = asyncio.Queue()
            for instance in (self.pool.instances if self.pool is not None
                             else [None] * (self.concurrency or available_cores())):
                slots.put_nowait(instance)
            # Games started and not yet stored: those playing plus at most as many again
            # that ended and wait for their record to be committed (a slow database
            # holds back new games instead of piling them up).
            unstored = asyncio.Semaphore(2 * slots.qsize())
            async with AdminClient(url, self.admin_token, name="yard-tournament") as admin:

                async def one(entry: ScheduledGame) -> None:
                    async with unstored:
                        instance = await slots.get()
                        freed = False
                        try:
                            if self._decided():
                                self._skipped += 1  # SPRT decided: no new game starts
                                return
                            started = await self._start(admin, entry, instance)
                            if isinstance(started, Outcome):
                                outcome = started  # a forfeit, already stored
                            else:
                                # The slot's next game starts as soon as this one ends;
                                # its result counts once it is stored.
                                await admin.over(started)
                                slots.put_nowait(instance)
                                freed = True
                                outcome = _outcome(await admin.result(started))
                        finally:
                            if not freed:
                                slots.put_nowait(instance)
                    self._count(progress, entry, outcome)
                    await self._store_sprt_live()

                while pending:
                    async with asyncio.TaskGroup() as group:
                        for entry in pending:
                            group.create_task(one(entry))
                    pending = self._sprt_reopened()
        except* AdminError as errors:
            raise TournamentRunError(f"server: {errors.exceptions[0]}") from None
        finally:
            await self._stop_local()
        self._record_sprt(progress)
        return progress

    def _decided(self) -> bool:
        return self.sprt is not None and self.sprt.decided

    def _sprt_reopened(self) -> list[ScheduledGame]:
        """After an SPRT stopped early: the games still to play when the games that were
        running at the decision moved the LLR back between the bounds (rare), else []."""
        if self.sprt is None or not self._skipped:
            return []
        self._skipped = 0
        self.sprt = SprtMonitor.load(self.db, self.tournament_id)
        return [] if self._decided() else self.db.pending(self.tournament_id)

    async def _store_sprt_live(self) -> None:
        """Record the test after each game, so the stored state follows the games."""
        if self.sprt is None:
            return
        async with self._sprt_lock:
            state = self.sprt.state()
            await asyncio.to_thread(store_state, self.db, self.tournament_id, state)

    def _record_sprt(self, progress: Progress) -> None:
        """Store the test as recomputed from every stored game (what ``yard sprt`` shows)."""
        if self.sprt is not None:
            progress.sprt = record_state(self.db, self.tournament_id)

    def _count(self, progress: Progress, entry: ScheduledGame, outcome: Outcome) -> None:
        if outcome.termination is Termination.ABORTED:
            progress.aborted += 1
        else:
            progress.done += 1
            progress.played_now += 1
        if self.sprt is not None:
            self.sprt.add(entry, outcome)
            progress.sprt = self.sprt.state()
        if self.listener is not None:
            self.listener(progress, entry, outcome)

    async def _start_local(self, pending: int) -> str:
        # The server starts while the bots are checked (`yard bots --json`, unless the
        # caller already did): its connection caps only need an upper bound on the slots.
        most = min(self.concurrency or available_cores(), pending)
        sockets = most * len(self.spec.bot_names()) + 64
        server = asyncio.create_task(start_server(
            self.db_url, "--move-time", str(self.spec.move_time),
            "--max-per-address", str(max(256, sockets)),
            "--max-connections", str(max(1024, sockets)), stderr_log=self.child_log))
        try:
            # Every bot process is a connection from this host: the caps above leave room
            # for all of them (and the admin) however many slots there are.
            try:
                launches = await self.launches()
            except BaseException:
                with contextlib.suppress(ProcessError):
                    self._server, _ = await server  # then stopped below
                raise
            self._server, url = await server
            if self.concurrency is None:
                self.concurrency = default_concurrency(launches)
            slots = min(self.concurrency, pending)
            if (warning := oversubscription(slots, launches)) is not None:
                self.notice(warning)
            self.pool = BotPool(launches, slots, self.child_log)
            await self.pool.start(url)
        except (ProcessError, EngineError) as exc:
            await self._stop_local()
            where = "" if self.child_log else " (see the message above)"
            raise TournamentRunError(f"{exc}{where}") from None
        except BaseException:
            await self._stop_local()
            raise
        log.info("tournament %s: bot processes (bot, instance) -> pid: %s",
                 self.tournament_id, self.pool.pids())
        return url

    async def launches(self) -> list[BotLaunch]:
        """How to start each bot of the tournament (checked: names, roles, options)."""
        bots = self.bots if self.bots is not None else await bot_infos(self.spec)
        self.spec.check_roles({name: bot.roles for name, bot in bots.items()})
        return [BotLaunch(name, (), bots[name].timed, bots[name].cores,
                          engine=self.spec.engine(name)) for name in self.spec.bot_names()]

    async def _stop_local(self) -> None:
        # Bots first, so the server sees clean disconnects only from games it aborts.
        if self.pool is not None:
            await self.pool.stop()
        server, self._server = self._server, None
        if server is not None:
            with contextlib.suppress(ProcessLookupError):
                await server.stop()

    async def _play(self, admin: AdminClient, entry: ScheduledGame,
                    instance: str | None = None) -> Outcome:
        """Play ``entry`` and return its outcome once it is stored."""
        started = await self._start(admin, entry, instance, notify_over=False)
        if isinstance(started, Outcome):
            return started
        return _outcome(await admin.result(started))

    async def _start(self, admin: AdminClient, entry: ScheduledGame,
                     instance: str | None = None, notify_over: bool = True
                     ) -> str | Outcome:
        """Start ``entry``'s game (with ``match_over`` when ``notify_over``): its id, or
        the outcome of the forfeit recorded when its bots never connected."""
        request = self._request(entry, instance, notify_over)
        deadline = time.monotonic() + self.spec.connect_timeout
        while True:
            try:
                return await admin.start_match(request)
            except AdminError as exc:
                if exc.code is not ErrorCode.BOT_NOT_CONNECTED:
                    raise
                missing = await self._missing(admin, entry, instance)
                gone = {(name, instance) for name in missing}
                if time.monotonic() >= deadline or gone <= self._gone:
                    self._gone |= gone
                    return await self._forfeit_missing(entry, missing, str(exc))
            await asyncio.sleep(RETRY_S)  # retry back-off while a bot (re)connects

    def _request(self, entry: ScheduledGame, instance: str | None = None,
                 notify_over: bool = False) -> StartMatch:
        spec = self.spec
        return StartMatch(
            rules=spec.rules, mrx=mrx_bot(entry.mrx),
            detectives=team_members(entry.detectives), seed=entry.seed,
            n_detectives=spec.detectives,
            time_control=TimeControl(spec.move_time, spec.bank_time),
            policy=Policy(OnTimeout(spec.on_timeout), spec.max_illegal),
            tag=str(entry.index), tournament_id=self.tournament_id,
            schedule_id=entry.schedule_id, instance=instance, match_over=notify_over)

    @staticmethod
    async def _missing(admin: AdminClient, entry: ScheduledGame,
                       instance: str | None) -> set[str]:
        connected = {bot.name for bot in await admin.list_bots()
                     if instance is None or instance in bot.instances}
        needed = [mrx_bot(entry.mrx), *team_members(entry.detectives)]
        return {name for name in needed if name not in connected}

    async def _forfeit_missing(self, entry: ScheduledGame, missing: set[str],
                               detail: str) -> Outcome:
        """A bot that never connected (or crashed for good) loses the game by forfeit;
        with both sides missing (or none seen missing) the game is aborted and stays
        pending. With a pool, "connected" means a process of the game's slot."""
        mrx_missing = mrx_bot(entry.mrx) in missing
        det_missing = any(name in missing for name in team_members(entry.detectives))
        if mrx_missing == det_missing:  # both sides missing (or neither, as far as we saw)
            outcome = Outcome(None, Termination.ABORTED)
        else:
            outcome = Outcome.forfeit(0 if mrx_missing else 1, Termination.DISCONNECTED)
        log.warning("tournament %s game %d: %s; recorded as %s", self.tournament_id,
                    entry.index, detail, outcome.termination.value)
        await asyncio.to_thread(self.db.record_forfeit, self.tournament_id, entry, outcome,
                                f"not connected: {', '.join(sorted(missing))}",
                                game_id=f"{self.tournament_id}-{entry.index}-"
                                        f"{int(time.time() * 1000)}")
        return outcome


async def bot_roles(spec: TournamentSpec) -> dict[str, list[str]]:
    """Every bot name ``spec`` may use and the roles each plays (see :func:`bot_infos`)."""
    return {name: bot.roles for name, bot in (await bot_infos(spec)).items()}


async def builtin_roles(options: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Built-in and installed bot names and their roles (see :func:`builtin_bots`)."""
    return {name: bot.roles for name, bot in (await builtin_bots(options)).items()}


async def builtin_bots(options: dict[str, list[str]] | None = None) -> dict[str, BuiltinBot]:
    """The built-in and installed bots by name (see :func:`bot_infos`)."""
    return await bot_infos(TournamentSpec("", [], bot_options=options or {}))


async def bot_infos(spec: TournamentSpec) -> dict[str, BuiltinBot]:
    """Every bot name ``spec`` may use: built-in and installed bots and the tournament's
    ``bot``/``class`` engines as ``yard bots --json --check`` reports them (the server side
    never imports the bots package): roles, and with the tournament's options whether they
    are time-based and the cores a move needs; command engines as declared (both roles by
    default). Options are checked on the way: a bot that rejects its options or cannot be
    loaded raises :class:`TournamentRunError` with the reason."""
    engines = {name: Engine.from_dict(data) for name, data in spec.engines.items()}
    checks = [f"{name}:{opt}" for name, opts in spec.bot_options.items() for opt in opts]
    checks += [str(e.spec) for e in engines.values() if e.spec is not None]
    # Only the bots the spec names (loading every bot costs ~0.3 s); if one is missing,
    # every bot is listed again, for the error that names them all.
    wanted = [name for name in spec.bot_names() if name not in engines]
    wanted += [e.spec.ref for e in engines.values() if e.spec is not None]
    rows = await bots_json(checks, wanted) if wanted else []
    if not wanted or not set(wanted) <= {row["name"] for row in rows}:
        rows = await bots_json(checks)
    out = {row["name"]: BuiltinBot(row["name"], list(row["roles"]), bool(row.get("timed")),
                                   max(1, int(row.get("cores", 1))))
           for row in rows}
    for name, engine in engines.items():
        if engine.spec is not None:
            row = out[engine.spec.ref]
            out[name] = BuiltinBot(name, row.roles, row.timed, row.cores)
        else:
            out[name] = BuiltinBot(name, list(engine.roles or ("detectives", "mrx")))
    return out


async def bots_json(checks: list[str], only: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows of ``yard bots --json --check SPEC... [--only NAME...]`` (each check must
    pass)."""
    args = [arg for check in checks for arg in ("--check", check)]
    args += [arg for name in only or () for arg in ("--only", name)]
    proc = await asyncio.create_subprocess_exec(*yard_argv("bots", "--json", *args),
                                                stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode == 2:
        reason = err.decode(errors="replace").strip().splitlines()
        raise TournamentRunError(reason[-1].removeprefix("error: ") if reason else
                                 "`yard bots --check` refused a bot")
    if proc.returncode != 0:
        raise TournamentRunError("`yard bots --json` failed; cannot check the bot names")
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _outcome(result: MatchResult) -> Outcome:
    seat = None
    if result.seat is not None:
        seat = 0 if result.seat == "mrx" else int(result.seat.lstrip("d"))
    return Outcome(result.winner, result.termination, seat)
