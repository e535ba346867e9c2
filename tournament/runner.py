"""Play a stored tournament schedule on a match server.

The runner is orchestration only: the tournament's definition and schedule come from the
database (stored by :func:`tournament.spec.create`), the bots' roles and needs from
:mod:`tournament.discovery`, refereeing from the server. Without a server URL it starts
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
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from db.errors import DatabaseError
from db.store import Database
from game import Outcome, Termination
from host.hosted import HostedServer, HostedServerError, server_config
from host.run import ServerConfigError
from protocol import ErrorCode, OnTimeout, Policy, StartMatch, TimeControl
from protocol.messages import MatchResult
from protocol.tokens import new_token
from ratings.sprt import SprtState
from records import ScheduledGame
from server.admin import AdminClient, AdminError
from tournament.discovery import BuiltinBot, bot_infos
from tournament.engines import EngineError
from tournament.pool import (
    BotLaunch,
    BotPool,
    available_cores,
    default_concurrency,
    oversubscription,
)
from tournament.processes import ProcessError
from tournament.schedule import mrx_bot, team_members
from tournament.spec import TournamentRunError, TournamentSpec
from tournament.sprt import SprtMonitor, record_state, store_state

log = logging.getLogger(__name__)

RETRY_S = 0.25
#: Games that may wait for their commit while the next ones play (at least one per slot):
#: the server writes games in group commits (``host.writer.STORE_LINGER_S``), so at a
#: few hundred games a second several wait at once.
MAX_UNSTORED = 32
#: Seconds the runner's lease on its tournament lasts without a renewal.
RUNNER_LEASE_S = 30.0


class StartError(TournamentRunError):
    """The runner's server or bot processes did not start: no game was played."""


@dataclass
class Progress:
    """What the runner reports after every game."""

    total: int
    done: int = 0
    played_now: int = 0
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


class TournamentRunner:
    """Plays the pending games of one tournament, at most ``concurrency`` at a time.

    ``concurrency`` ``None`` picks it: without a server URL from the cores and the bots
    (:func:`tournament.pool.default_concurrency`), with one the number of cores.
    ``notice`` gets one-line warnings (default: the log), e.g. when time-based bots would
    share cores. ``bots``: what :func:`~tournament.discovery.bot_infos` said of this
    tournament's spec, when the caller already asked (saves starting ``yard bots --json``
    again).
    """

    def __init__(self, db: Database, db_url: str, tournament_id: str, *,
                 server_url: str | None = None, admin_token: str | None = None,
                 concurrency: int | None = None, listener: Listener | None = None,
                 child_log: Path | None = None,
                 on_server: Callable[[str], None] | None = None,
                 notice: Callable[[str], None] | None = None,
                 bots: dict[str, BuiltinBot] | None = None) -> None:
        """A runner of ``tournament_id`` stored in ``db``, not yet started."""
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
        self._server: HostedServer | None = None
        #: The local bot processes, one per bot and game slot (None with a server URL).
        self.pool: BotPool | None = None
        self._gone: set[tuple[str, str | None]] = set()
        #: The live SPRT of an ``--sprt`` tournament (None otherwise).
        self.sprt = SprtMonitor.load(db, tournament_id)
        self._skipped = 0
        self._sprt_lock = asyncio.Lock()
        #: The runner lease's renewal being written (``run``).
        self._renewal: asyncio.Future[None] | None = None

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
        self.spec.check_dealable(self.tournament_id, pending)
        await asyncio.to_thread(self.db.hold_runner, self.tournament_id, RUNNER_LEASE_S)
        lease = asyncio.create_task(self._renew_lease())
        try:
            url = self.server_url or await self._start_local(len(pending))
            if self.on_server is not None:
                self.on_server(url)
            slots = self._slots()
            # Games started and not yet stored: those playing plus at most
            # MAX_UNSTORED more that ended and wait for their record to be committed (a
            # slow database holds back new games instead of piling them up).
            unstored = asyncio.Semaphore(slots.qsize() + max(slots.qsize(), MAX_UNSTORED))
            async with AdminClient(url, self.admin_token, name="yard-tournament") as admin:
                while pending:
                    async with asyncio.TaskGroup() as group:
                        for entry in pending:
                            group.create_task(self._play_one(admin, entry, slots, unstored,
                                                             progress))
                    pending = self._sprt_reopened()
        except* AdminError as errors:
            raise TournamentRunError(f"server: {errors.exceptions[0]}") from None
        finally:
            await self._stop_local()
            await self._release_lease(lease)
        self._record_sprt(progress)
        return progress

    def _slots(self) -> asyncio.Queue[str | None]:
        """One token per game slot: its processes' instance label (None: any session)."""
        slots: asyncio.Queue[str | None] = asyncio.Queue()
        for instance in (self.pool.instances if self.pool is not None
                         else [None] * (self.concurrency or available_cores())):
            slots.put_nowait(instance)
        return slots

    async def _play_one(self, admin: AdminClient, entry: ScheduledGame,
                        slots: asyncio.Queue[str | None], unstored: asyncio.Semaphore,
                        progress: Progress) -> None:
        """Play ``entry`` in the next free slot (unless the SPRT is decided) and count it
        once its record is stored."""
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
                    # The slot's next game starts as soon as this one ends; its result
                    # counts once it is stored.
                    await admin.over(started)
                    slots.put_nowait(instance)
                    freed = True
                    outcome = _outcome(await admin.result(started))
            finally:
                if not freed:
                    slots.put_nowait(instance)
        self._count(progress, entry, outcome)
        await self._store_sprt_live()

    async def _renew_lease(self) -> None:
        """Renew the runner lease taken by :meth:`run` every third of
        :data:`RUNNER_LEASE_S` while the run lasts (``yard tournament delete`` refuses a
        tournament that a live runner holds)."""
        while True:
            await asyncio.sleep(RUNNER_LEASE_S / 3)  # the renewal period
            self._renewal = asyncio.ensure_future(asyncio.to_thread(
                self.db.hold_runner, self.tournament_id, RUNNER_LEASE_S))
            try:
                await asyncio.shield(self._renewal)
            except DatabaseError as exc:  # a blip: try again at the next tick
                log.warning("tournament %s: cannot renew the runner lease: %s",
                            self.tournament_id, exc)

    async def _release_lease(self, lease: asyncio.Task[None]) -> None:
        """Stop renewing (after a renewal in flight has been written) and give the lease
        up."""
        lease.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lease
        if self._renewal is not None:
            await asyncio.wait([self._renewal])
        try:
            await asyncio.to_thread(self.db.release_runner, self.tournament_id)
        except DatabaseError as exc:  # it expires by itself
            log.warning("tournament %s: cannot release the runner lease: %s",
                        self.tournament_id, exc)

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
        # The local server's admin token: made here, handed to it, known to no one else.
        self.admin_token = new_token()
        # Every bot process is a connection from this host: the caps leave room for all
        # of them (and the admin) however many slots there are.
        config = server_config("127.0.0.1", admin_token=self.admin_token,
                               move_time=self.spec.move_time,
                               max_per_address=max(256, sockets),
                               max_connections=max(1024, sockets))
        hosted = self._server = HostedServer(config, self.db_url, log_path=self.child_log)
        server = asyncio.ensure_future(asyncio.to_thread(hosted.start))
        try:
            try:
                launches = await self.launches()
            except BaseException:
                with contextlib.suppress(Exception):
                    await server  # then stopped below
                raise
            url = await server
            if self.concurrency is None:
                self.concurrency = default_concurrency(launches)
            slots = min(self.concurrency, pending)
            if (warning := oversubscription(slots, launches)) is not None:
                self.notice(warning)
            self.pool = BotPool(launches, slots, self.child_log,
                                timeout=self.spec.connect_timeout)
            await self.pool.start(url, self.admin_token)
        except (ProcessError, EngineError, HostedServerError, ServerConfigError,
                DatabaseError) as exc:
            await self._stop_local()
            where = "" if self.child_log else " (see the message above)"
            raise StartError(f"{exc}{where}") from None
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
            await server.stop_async()

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
        entry = self.spec.dealt(entry)  # Mister X's own seed (fresh-mrx), the seat seed
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
            schedule_id=entry.schedule_id, instance=instance, match_over=notify_over,
            mrx_seed=entry.mrx_seed, seat_seed=entry.seat_seed)

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


def _outcome(result: MatchResult) -> Outcome:
    seat = None
    if result.seat is not None:
        seat = 0 if result.seat == "mrx" else int(result.seat.lstrip("d"))
    return Outcome(result.winner, result.termination, seat)
