"""The bot processes a tournament runner starts: one per bot and game slot.

The cutechess model: a bot's compute is its own. With ``--concurrency N`` the runner plays
at most N games at once, each in one of N *slots*, and starts every bot N times, once per
slot; the process of slot ``k`` announces ``instance = "k"`` in its ``hello`` and the
runner's ``start_match`` for a game in slot ``k`` names that instance. Two concurrent games
therefore never share a bot process (or its interpreter's lock), and a time-limited bot
gets a whole core per move as long as the slots fit the cores; moves within one game
alternate, so a game keeps one core busy at a time (``cores`` per move, for bots that
search in several processes).

>>> launch = BotLaunch("mcts", ("bot", "mcts", "--option", "time=0.5"), timed=True)
>>> default_concurrency([launch], cores=8)
8
>>> oversubscription(8, [launch], cores=8) is None
True
>>> oversubscription(12, [launch], cores=8).split(":")[0]
'12 games at once with time-based bots (mcts) need 12 cores, this machine has 8'
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tournament.engines import Engine, EngineError, start_engine
from tournament.processes import READY_TIMEOUT_S, Child, ProcessError


@dataclass(frozen=True)
class BotLaunch:
    """How the runner starts one process of a bot.

    With ``engine`` (a bot spec or a command, :mod:`tournament.engines`) the pool starts it
    with :func:`~tournament.engines.start_engine` for each slot's instance. Otherwise ``args``
    are ``yard`` arguments (e.g. ``bot mcts --option time=0.5``); the pool appends ``--url
    URL --instance SLOT``, and the process must print a line starting with ``connected``
    once the server has welcomed it. ``name`` is the name it announces (the name the
    schedule uses); ``timed``: its strength depends on the clock; ``cores``: the cores one
    of its moves keeps busy.
    """

    name: str
    args: tuple[str, ...]
    timed: bool = False
    cores: int = 1
    engine: Engine | None = None

    async def start(self, url: str, instance: str, stderr_log: Path | None,
                    admin_token: str | None = None, timeout: float = READY_TIMEOUT_S
                    ) -> Child:
        """Start one process of this bot for ``instance``; returns once it is connected,
        at most ``timeout`` seconds after its start (``admin_token``: the server's, to see
        a command engine connect)."""
        if self.engine is not None:
            return await start_engine(self.engine, url, stderr_log, instance=instance,
                                      admin_token=admin_token, timeout=timeout)
        return await Child.start([*self.args, "--url", url, "--instance", instance],
                                 "connected", stderr_log=stderr_log, timeout=timeout)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's count)."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_concurrency(launches: Sequence[BotLaunch], cores: int | None = None) -> int:
    """Games at once so that every move gets its cores: the cores divided by the most
    cores one move of these bots needs (one game computes one move at a time)."""
    cores = available_cores() if cores is None else cores
    per_move = max((launch.cores for launch in launches), default=1)
    return max(1, cores // max(1, per_move))


def oversubscription(games: int, launches: Sequence[BotLaunch],
                     cores: int | None = None) -> str | None:
    """A one-line warning when time-based bots would share cores with ``games`` at once."""
    cores = available_cores() if cores is None else cores
    timed = [launch for launch in launches if launch.timed]
    if not timed:
        return None
    need = games * max(launch.cores for launch in timed)
    if need <= cores:
        return None
    names = ", ".join(launch.name for launch in timed)
    return (f"{games} games at once with time-based bots ({names}) need {need} cores, "
            f"this machine has {cores}: their moves share cores and get less compute than "
            f"their time limit suggests (lower --concurrency)")


def instance_of(slot: int) -> str:
    """The ``instance`` label of game slot ``slot`` (0-based): ``"1"``, ``"2"``, ..."""
    return str(slot + 1)


class BotPool:
    """Every bot of a tournament started once per game slot (see the module docstring).

    ``timeout``: seconds each process has, from its start, to connect (the tournament's
    ``--connect-timeout``). At most ``starting`` processes (default: the cores) start at
    once, so the interpreters' start-up does not eat into each other's time; waiting for
    that turn does not count.
    """

    def __init__(self, launches: Sequence[BotLaunch], slots: int,
                 stderr_log: Path | None = None, *, timeout: float = READY_TIMEOUT_S,
                 starting: int | None = None) -> None:
        """A pool of ``slots`` processes per launch, none started yet."""
        if slots < 1:
            raise ValueError("a bot pool needs at least one slot")
        self.launches = list(launches)
        self.slots = slots
        self.stderr_log = stderr_log
        self.timeout = timeout
        self.starting = max(1, starting or available_cores())
        self.children: dict[tuple[str, str], Child] = {}

    @property
    def instances(self) -> list[str]:
        """The instance label of every slot."""
        return [instance_of(slot) for slot in range(self.slots)]

    async def start(self, url: str, admin_token: str | None = None) -> None:
        """Start every process and wait until each is connected; on the first failure
        stop them all (those still starting included) and raise it as a
        :class:`ProcessError` or :class:`EngineError`. ``admin_token``: the server's
        (command engines are seen connecting as admin)."""
        turn = asyncio.Semaphore(self.starting)

        async def one(launch: BotLaunch, instance: str) -> None:
            async with turn:
                child = await launch.start(url, instance, self.stderr_log, admin_token,
                                           self.timeout)
            self.children[launch.name, instance] = child

        try:
            async with asyncio.TaskGroup() as group:
                for instance in self.instances:
                    for launch in self.launches:
                        group.create_task(one(launch, instance))
        except BaseException as exc:
            await self.stop()
            if not isinstance(exc, BaseExceptionGroup):
                raise
            first = exc.exceptions[0]
            if isinstance(first, ProcessError | EngineError):
                raise first from None
            if not isinstance(first, Exception):
                raise first from None  # KeyboardInterrupt, SystemExit
            raise ProcessError(f"a bot process could not start: {first!r}") from first

    async def stop(self) -> None:
        """Stop every process (all at once)."""
        children, self.children = list(self.children.values()), {}
        await asyncio.gather(*(child.stop() for child in children), return_exceptions=True)

    def pids(self) -> dict[tuple[str, str], int]:
        """(bot name, instance) -> process id, for logs and tests."""
        return {key: child.proc.pid for key, child in self.children.items()}
