"""Play a stored tournament schedule on a Ray cluster (``yard tournament run --cluster``).

Each worker is a Ray actor that runs the ordinary runner code path on its node
(:class:`ClaimingRunner`, a :class:`~tournament.runner.TournamentRunner`): its own
``yard serve`` and bot processes, one game slot. Instead of a fixed list of pending games
it claims games one at a time from the shared database with a lease
(:meth:`db.store.Database.claim`, ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL),
renews the lease while the game runs and releases it when the game is stored. When Ray
reports a worker dead, the driver releases its leases and another worker claims its game at
once; a worker that stops without Ray noticing (a stalled node) stops renewing, and its
lease expires. A finished game is stored once: the store locks the entry's row and refuses a
second game for a played entry (:class:`~db.errors.AlreadyPlayedError`; ``games.schedule_id``
is unique as the last guard), so of two workers that played one entry (the first one's lease
had expired) the first to store counts; the other logs it and drops its copy. A game whose
server aborts it is parked for the rest of the run and played again by
``yard tournament resume``, as on one machine. An SPRT
(``--sprt``) is recomputed from the shared database by each worker before it claims a game
and by the driver (which records it) as games are stored; once it is decided, workers claim
no new game (those running finish, as on one machine).

Each worker declares the CPUs one game needs (the most cores one move of the tournament's
bots uses, one for time-based bots), so Ray never runs more games on a node than it has
cores for: the fairness rule of :mod:`tournament.pool`.

Reaching Ray (``--cluster`` addresses, ``ray.init``, the database check) is
:mod:`tournament.ray_setup`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from db.errors import AlreadyPlayedError, DatabaseError
from db.store import Database
from protocol import ErrorCode
from records import ScheduledGame
from server.admin import AdminClient, AdminError
from tournament.ray_setup import (
    ClusterAddress,
    ClusterError,
    check_database,
    import_ray,
    init_ray,
)
from tournament.runner import Progress, TournamentRunner
from tournament.sprt import SprtMonitor, record_state, sprt_state

log = logging.getLogger(__name__)

#: Seconds a claimed game stays leased without a renewal (renewed every third of it).
DEFAULT_LEASE_S = 30.0
#: How often an idle worker looks again for games that others hold.
IDLE_POLL_S = 0.5


class ClaimingRunner(TournamentRunner):
    """The runner of one worker: claims games from the database one at a time (with a
    lease, renewed while the game runs) until no pending game is left that anyone holds,
    playing each on its own local server with one slot of bot processes."""

    def __init__(self, db: Database, db_url: str, tournament_id: str, *, owner: str,
                 lease_s: float = DEFAULT_LEASE_S, child_log: Path | None = None) -> None:
        """A runner claiming games as ``owner`` with leases of ``lease_s`` seconds."""
        super().__init__(db, db_url, tournament_id, concurrency=1, child_log=child_log)
        if lease_s <= 0:
            raise ClusterError("the lease must be longer than 0 seconds")
        self.owner = owner
        self.lease_s = lease_s
        #: Games this worker played that another worker had stored first (dropped).
        self.duplicates = 0

    async def run(self) -> Progress:
        """Claim and play games until none is left to claim or wait for."""
        db, tid = self.db, self.tournament_id
        progress = Progress(total=len(db.scheduled(tid)))
        progress.done = progress.total - len(db.pending(tid))
        admin: AdminClient | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                while True:
                    if self.sprt is not None and await asyncio.to_thread(self._decided_run):
                        break  # the SPRT is decided: no new game starts
                    entry = await asyncio.to_thread(db.claim, tid, self.owner, self.lease_s)
                    if entry is None:
                        if not await asyncio.to_thread(db.held, tid):
                            break
                        # Others are playing the rest; their games come back if they die.
                        await asyncio.sleep(IDLE_POLL_S)
                        continue
                    # Renew from the claim on: starting the processes takes seconds.
                    renewer = asyncio.create_task(self._renew(entry))
                    try:
                        if admin is None:
                            url = await self._start_local(1)
                            admin = await stack.enter_async_context(
                                AdminClient(url, self.admin_token, name=f"yard-{self.owner}"))
                        await self._claimed(admin, entry, progress)
                    except BaseException:
                        with contextlib.suppress(Exception):
                            await asyncio.to_thread(self.db.release, _sid(entry), self.owner)
                        raise
                    finally:
                        renewer.cancel()
        finally:
            await self._stop_local()
        return progress

    def _decided_run(self) -> bool:
        """Whether the games stored so far (by every worker) decide the tournament's SPRT:
        recomputed from the shared database before each claim, so no worker starts a game
        after the decision is in the store."""
        state = sprt_state(self.db, self.tournament_id)
        return state is not None and state.decision.final

    async def _claimed(self, admin: AdminClient, entry: ScheduledGame,
                       progress: Progress) -> None:
        instance = self.pool.instances[0] if self.pool is not None else None
        try:
            outcome = await self._play(admin, entry, instance)
        except (AdminError, AlreadyPlayedError) as exc:
            # Stored by someone else while we played it (our lease had expired, e.g. this
            # node stalled): the store refused the duplicate; the entry counts once.
            if isinstance(exc, AlreadyPlayedError) or (
                    exc.code is ErrorCode.STORE_FAILED and not any(
                        e.schedule_id == entry.schedule_id for e in
                        await asyncio.to_thread(self.db.pending, self.tournament_id))):
                log.warning("worker %s: game %d was stored by another worker (its lease "
                            "had passed to it); ours is dropped: %s", self.owner,
                            entry.index, exc)
                self.duplicates += 1
                await asyncio.to_thread(self.db.release, _sid(entry), self.owner)
                return
            raise
        aborted = outcome.termination.value == "aborted"
        await asyncio.to_thread(self.db.release, _sid(entry), self.owner, aborted=aborted)
        self._count(progress, entry, outcome)

    async def _renew(self, entry: ScheduledGame) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                held = await asyncio.to_thread(self.db.renew, _sid(entry), self.owner,
                                               self.lease_s)
            except DatabaseError as exc:  # a blip: try again at the next tick
                log.warning("worker %s: cannot renew its lease: %s", self.owner, exc)
                continue
            if not held:
                log.warning("worker %s lost its lease on game %d", self.owner, entry.index)
                return


def _sid(entry: ScheduledGame) -> int:
    if entry.schedule_id is None:  # claimed entries always come from the database
        raise ClusterError(f"game {entry.index} has no schedule id")
    return entry.schedule_id


class Worker:
    """The Ray actor: one worker with its own server and bot processes on its node."""

    def __init__(self, db_url: str, tournament_id: str, lease_s: float,
                 child_log: str | None) -> None:
        """A worker of ``tournament_id`` named by host, process and a random suffix."""
        self.db_url = db_url
        self.tournament_id = tournament_id
        self.lease_s = lease_s
        self.child_log = Path(child_log) if child_log else None
        self.owner = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def pid(self) -> int:
        """The actor's process id (tests kill it mid-game)."""
        return os.getpid()

    def name(self) -> str:
        """The lease owner id this worker claims games with."""
        return self.owner

    def play(self) -> dict[str, int]:
        """Claim and play games until none is left; counts of this worker's games."""
        logging.basicConfig(level=logging.WARNING)
        db = Database.connect(self.db_url, create=False)
        try:
            runner = ClaimingRunner(db, self.db_url, self.tournament_id, owner=self.owner,
                                    lease_s=self.lease_s, child_log=self.child_log)
            progress = asyncio.run(runner.run())
        finally:
            db.close()
        return {"played": progress.played_now, "aborted": progress.aborted,
                "duplicates": runner.duplicates}


@dataclass
class ClusterReport:
    """What a cluster run did: the runner's counters plus the workers it used."""

    progress: Progress
    workers: int
    cpus_per_game: int
    #: Workers that died (killed, node lost) and were replaced.
    lost: int = 0
    #: Games played twice (a worker's lease expired) whose second copy was dropped.
    duplicates: int = 0


class ClusterRun:
    """Plays the pending games of a tournament on Ray workers (see the module docstring).

    ``workers`` ``None``: as many as the cluster's CPUs allow (CPUs // cpus per game).
    ``on_progress`` gets the counters whenever the stored count changes; ``on_workers``
    the list of (actor, pid, owner) once the workers are up (tests kill one).
    """

    def __init__(self, db: Database, db_url: str, tournament_id: str,
                 cluster: ClusterAddress, *, workers: int | None = None,
                 lease_s: float = DEFAULT_LEASE_S, child_log: Path | None = None,
                 on_progress: Callable[[Progress], None] | None = None,
                 on_workers: Callable[[list[tuple[Any, int, str]]], None] | None = None
                 ) -> None:
        """A run over ``cluster`` that has not started."""
        if workers is not None and workers < 1:
            raise ClusterError("--workers must be at least 1")
        self.db = db
        self.db_url = db_url
        self.tournament_id = tournament_id
        self.cluster = cluster
        self.workers = workers
        self.lease_s = lease_s
        self.child_log = child_log
        self.on_progress = on_progress
        self.on_workers = on_workers

    def run(self) -> ClusterReport:
        """Start Ray (unless already initialised), the workers, and wait for them."""
        runner = TournamentRunner(self.db, self.db_url, self.tournament_id)
        launches = asyncio.run(runner.launches())
        cpus = max((launch.cores for launch in launches), default=1)
        ray = import_ray()
        own = not ray.is_initialized()
        if own:
            init_ray(ray, self.cluster)
        try:
            nodes = [n for n in ray.nodes() if n.get("Alive")]
            check_database(self.db_url, self.cluster, len(nodes))
            total = int(ray.cluster_resources().get("CPU", 1))
            if cpus > total:
                raise ClusterError(f"a game needs {cpus} CPUs; the cluster has {total}")
            fit = max(1, total // cpus)
            if self.workers is not None and self.workers > fit:
                raise ClusterError(f"{self.workers} workers need {self.workers * cpus} CPUs; "
                                   f"the cluster has {total}")
            count = self.workers or fit
            return self._drive(ray, cpus, count)
        finally:
            if own:
                ray.shutdown()

    def _drive(self, ray: Any, cpus: int, count: int) -> ClusterReport:
        db, tid = self.db, self.tournament_id
        db.unpark(tid)
        progress = Progress(total=len(db.scheduled(tid)))
        start_done = progress.total - len(db.pending(tid))
        progress.done = start_done
        report = ClusterReport(progress, count, cpus)
        # An SPRT: the driver records the test from the shared database whenever games are
        # stored; workers recompute it before each claim and stop once it is decided
        # (running games finish, as on one machine); a decided test plays nothing.
        sprt = SprtMonitor.load(db, tid) is not None
        decided = self._record_sprt(progress) if sprt else False
        if decided:
            report.workers = 0
            return report
        actor_class = ray.remote(Worker).options(num_cpus=cpus, max_restarts=0)
        log_path = str(self.child_log) if self.child_log else None
        running: dict[Any, tuple[Any, str]] = {}  # play() ref -> (actor, lease owner)
        replaced = 0

        def start(n: int) -> None:
            actors = [actor_class.remote(self.db_url, tid, self.lease_s, log_path)
                      for _ in range(n)]
            pids = ray.get([a.pid.remote() for a in actors])
            owners = ray.get([a.name.remote() for a in actors])
            for actor, owner in zip(actors, owners, strict=True):
                running[actor.play.remote()] = actor, owner
            if self.on_workers is not None:
                self.on_workers(list(zip(actors, pids, owners, strict=True)))

        try:
            start(min(count, max(1, db.claimable(tid))))
            while running:
                ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
                for ref in ready:
                    actor, owner = running.pop(ref)
                    self._collect(ray, ref, owner, report)
                    with contextlib.suppress(Exception):
                        ray.kill(actor)
                decided = self._count_done(progress, start_done, sprt, decided)
                want = self._replacements(count, len(running), report, replaced, decided)
                if want > 0:
                    replaced += want
                    start(want)
        finally:
            for actor, owner in running.values():
                with contextlib.suppress(Exception):
                    ray.kill(actor)
                with contextlib.suppress(Exception):  # else the lease expires by itself
                    db.release_owner(tid, owner)
        progress.played_now = progress.done - start_done
        progress.started = min(progress.started, time.monotonic())
        if sprt:
            self._record_sprt(progress)
        return report

    def _collect(self, ray: Any, ref: Any, owner: str, report: ClusterReport) -> None:
        """Add the counts of a worker that stopped (``ref``: its ``play()``); one that died
        gives its game back to the schedule."""
        try:
            counts = ray.get(ref)
            report.progress.aborted += int(counts.get("aborted", 0))
            report.duplicates += int(counts.get("duplicates", 0))
        except ray.exceptions.RayActorError:
            report.lost += 1
            log.warning("cluster worker %s died; its game returns to the schedule", owner)
            # Now, not when the lease expires (should the worker still be playing
            # somewhere, the store keeps the game once).
            self.db.release_owner(self.tournament_id, owner)
        except ray.exceptions.RayTaskError as exc:
            raise ClusterError(f"a worker failed: {exc.cause!s}") from None

    def _count_done(self, progress: Progress, start_done: int, sprt: bool,
                    decided: bool) -> bool:
        """Count the stored games; when that changed, record the SPRT (if ``sprt``) and
        report progress. Returns whether the test is decided (``decided``: so far)."""
        done = progress.total - len(self.db.pending(self.tournament_id))
        if done == progress.done:
            return decided
        progress.done = done
        progress.played_now = done - start_done
        if sprt:
            decided = self._record_sprt(progress)
        if self.on_progress is not None:
            self.on_progress(progress)
        return decided

    def _replacements(self, count: int, running: int, report: ClusterReport, replaced: int,
                      decided: bool) -> int:
        """How many workers to start in place of dead ones while games are left (the
        survivors alone would also play them, but with less capacity; with none left,
        nobody would)."""
        left = 0 if decided else self.db.claimable(self.tournament_id)
        want = min(count - running, report.lost - replaced, left)
        if left and not running:
            want = max(want, 1)
        if want > 0 and report.lost > 4 * count:
            raise ClusterError(f"{report.lost} workers died; giving up")
        return want

    def _record_sprt(self, progress: Progress) -> bool:
        """Recompute the SPRT from every stored game and record it (with ``finished``
        once decided, which the workers read); whether it is decided."""
        progress.sprt = record_state(self.db, self.tournament_id)
        return progress.sprt is not None and progress.sprt.decision.final
