"""Play a stored tournament schedule on a match server.

The runner is orchestration only: pairings come from :mod:`server.tournament.schedule`,
storage from :mod:`db.store`, refereeing from the server. Without a server URL it starts
``yard serve`` and one ``yard bot NAME`` process per bot itself (built-in bots get no back
door: they connect exactly like a custom bot) and stops them at the end, on errors and on
Ctrl-C. Games still running when it stops are stored by the server as ``aborted`` and stay
pending, so ``yard tournament resume`` plays exactly what is missing.
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

from db.records import ScheduledGame
from db.store import Database
from game import Outcome, Termination, load_ruleset
from game.errors import YardError
from protocol import ErrorCode, OnTimeout, Policy, StartMatch, TimeControl
from protocol.messages import MatchResult
from server.admin import AdminClient, AdminError
from server.processes import Child, ProcessError, start_bot, start_server, yard_argv
from server.tournament.schedule import Format, bots_of, make_schedule, mrx_bot, team_members

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

    def bot_names(self) -> list[str]:
        """Every distinct bot process the tournament needs, in first-mention order."""
        names = [name for player in self.bots for name in bots_of(player)]
        return list(dict.fromkeys(names))

    def check_roles(self, roles: dict[str, list[str]]) -> None:
        """Raise unless every bot is known (``roles``: name -> roles it plays) and plays
        the side each player spec puts it on."""
        for player in self.bots:
            wanted = [(mrx_bot(player), "mrx")]
            wanted += [(name, "detectives") for name in team_members(player)]
            for name, role in wanted:
                if name not in roles:
                    raise TournamentRunError(f"unknown bot {name!r}; built-in bots: "
                                             f"{', '.join(sorted(roles))}")
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

    @property
    def rate(self) -> float:
        """Games per second in this run."""
        elapsed = time.monotonic() - self.started
        return self.played_now / elapsed if elapsed > 0 else 0.0


Listener = Callable[[Progress, ScheduledGame, Outcome], None]


class TournamentRunner:
    """Plays the pending games of one tournament, at most ``concurrency`` at a time."""

    def __init__(self, db: Database, db_url: str, tournament_id: str, *,
                 server_url: str | None = None, admin_token: str | None = None,
                 concurrency: int = 2, listener: Listener | None = None,
                 child_log: Path | None = None,
                 on_server: Callable[[str], None] | None = None) -> None:
        if concurrency < 1:
            raise TournamentRunError("--concurrency must be at least 1")
        self.db = db
        self.db_url = db_url
        self.tournament_id = tournament_id
        self.spec = TournamentSpec.from_dict(db.get_tournament(tournament_id).spec)
        self.server_url = server_url
        self.admin_token = admin_token
        self.concurrency = concurrency
        self.listener = listener
        #: Where the local server's and bots' stderr goes (None: this process's stderr).
        self.child_log = child_log
        #: Called with the server's ``ws://`` URL once it is up (to print the web address).
        self.on_server = on_server
        self._children: list[Child] = []
        self._gone: set[str] = set()

    async def run(self) -> Progress:
        """Play every pending game; returns the final progress counters."""
        pending = self.db.pending(self.tournament_id)
        progress = Progress(total=len(self.db.scheduled(self.tournament_id)))
        progress.done = progress.total - len(pending)
        if not pending:
            return progress
        try:
            url = self.server_url or await self._start_local()
            if self.on_server is not None:
                self.on_server(url)
            async with AdminClient(url, self.admin_token, name="yard-tournament") as admin:
                gate = asyncio.Semaphore(self.concurrency)

                async def one(entry: ScheduledGame) -> None:
                    async with gate:
                        outcome = await self._play(admin, entry)
                    self._count(progress, entry, outcome)

                async with asyncio.TaskGroup() as group:
                    for entry in pending:
                        group.create_task(one(entry))
        except* AdminError as errors:
            raise TournamentRunError(f"server: {errors.exceptions[0]}") from None
        finally:
            await self._stop_local()
        return progress

    def _count(self, progress: Progress, entry: ScheduledGame, outcome: Outcome) -> None:
        if outcome.termination is Termination.ABORTED:
            progress.aborted += 1
        else:
            progress.done += 1
            progress.played_now += 1
        if self.listener is not None:
            self.listener(progress, entry, outcome)

    async def _start_local(self) -> str:
        self.spec.check_roles(await builtin_roles(self.spec.bot_options))
        try:
            server, url = await start_server(self.db_url, "--move-time",
                                             str(self.spec.move_time),
                                             stderr_log=self.child_log)
            self._children.append(server)
            for name in self.spec.bot_names():
                extra = [arg for opt in self.spec.bot_options.get(name, [])
                         for arg in ("--option", opt)]
                self._children.append(await start_bot(name, url, *extra,
                                                      stderr_log=self.child_log))
        except ProcessError as exc:
            await self._stop_local()
            where = "" if self.child_log else " (see the message above)"
            raise TournamentRunError(f"{exc}{where}") from None
        return url

    async def _stop_local(self) -> None:
        children, self._children = self._children, []
        # Bots first, so the server sees clean disconnects only from games it aborts.
        for child in reversed(children):
            with contextlib.suppress(ProcessLookupError):
                await child.stop()

    async def _play(self, admin: AdminClient, entry: ScheduledGame) -> Outcome:
        request = self._request(entry)
        deadline = time.monotonic() + self.spec.connect_timeout
        while True:
            try:
                game = await admin.start_match(request)
                break
            except AdminError as exc:
                if exc.code is not ErrorCode.BOT_NOT_CONNECTED:
                    raise
                missing = await self._missing(admin, entry)
                if time.monotonic() >= deadline or missing <= self._gone:
                    self._gone |= missing
                    return await self._forfeit_missing(entry, missing, str(exc))
            await asyncio.sleep(RETRY_S)  # retry back-off while a bot (re)connects
        result = await admin.result(game)
        return _outcome(result)

    def _request(self, entry: ScheduledGame) -> StartMatch:
        spec = self.spec
        return StartMatch(
            rules=spec.rules, mrx=mrx_bot(entry.mrx),
            detectives=team_members(entry.detectives), seed=entry.seed,
            n_detectives=spec.detectives,
            time_control=TimeControl(spec.move_time, spec.bank_time),
            policy=Policy(OnTimeout(spec.on_timeout), spec.max_illegal),
            tag=str(entry.index), tournament_id=self.tournament_id,
            schedule_id=entry.schedule_id)

    @staticmethod
    async def _missing(admin: AdminClient, entry: ScheduledGame) -> set[str]:
        connected = {bot.name for bot in await admin.list_bots()}
        needed = [mrx_bot(entry.mrx), *team_members(entry.detectives)]
        return {name for name in needed if name not in connected}

    async def _forfeit_missing(self, entry: ScheduledGame, missing: set[str],
                               detail: str) -> Outcome:
        """A bot that never connected (or crashed for good) loses the game by forfeit;
        with both sides missing the game is aborted and stays pending."""
        mrx_missing = mrx_bot(entry.mrx) in missing
        det_missing = any(name in missing for name in team_members(entry.detectives))
        if mrx_missing and det_missing:
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


async def builtin_roles(options: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Built-in bot names and their roles, asked from ``yard bots --json`` (the server side
    never imports the bots package). ``options`` (bot -> ``key=value`` strings) are checked
    on the way: a bot that rejects them raises :class:`TournamentRunError` with its reason."""
    checks = [arg for name, opts in (options or {}).items() for opt in opts
              for arg in ("--check", f"{name}:{opt}")]
    proc = await asyncio.create_subprocess_exec(*yard_argv("bots", "--json", *checks),
                                                stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode == 2:
        reason = err.decode(errors="replace").strip().removeprefix("error: ")
        raise TournamentRunError(f"--bot-option: {reason}")
    if proc.returncode != 0:
        raise TournamentRunError("`yard bots --json` failed; cannot check the bot names")
    return {row["name"]: list(row["roles"]) for row in json.loads(out)}


def _outcome(result: MatchResult) -> Outcome:
    seat = None
    if result.seat is not None:
        seat = 0 if result.seat == "mrx" else int(result.seat.lstrip("d"))
    return Outcome(result.winner, result.termination, seat)
