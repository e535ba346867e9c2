"""``yard tournament run|resume|list|delete``: tournaments from the command line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import tempfile
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from bots.spec import BotSpec
from db.errors import DatabaseError
from db.store import Database
from db.store.tournaments import HasGamesError
from game import Outcome
from host.run import tune_gc
from ratings.sprt import DEFAULT_MAX_PAIRS, SprtError, SprtSpec, SprtState
from records import ScheduledGame
from server.auth import client_admin_token
from tournament.cluster import ClusterRun
from tournament.discovery import BuiltinBot, bot_infos
from tournament.engines import Engine
from tournament.players import resolve_players
from tournament.ray_setup import (
    ClusterAddress,
    ClusterError,
    check_database,
    cluster_session,
    parse_cluster,
)
from tournament.report import leader_line, tournament_report
from tournament.runner import Progress as RunProgress
from tournament.runner import StartError, TournamentRunner
from tournament.schedule import Format, Pairing
from tournament.spec import TournamentSpec, create
from yard.cli.options import (
    BOT_OPTION,
    EngineCommand,
    admin_token_options,
    cluster_option,
    db_option,
    engine_option,
    json_option,
    log_option,
    rules_option,
)

CONCURRENCY_HELP = ("Games played at once; each game slot gets its own bot processes. "
                    "Default: one game per core (a game computes one move at a time), "
                    "fewer for bots whose moves use several cores.")

def cluster_options(command: Any) -> Any:
    """``--cluster`` and ``--lease-time`` (shared by run and resume)."""
    command = click.option("--lease-time", type=click.FloatRange(min=0.5), default=30.0,
                           show_default=True,
                           help="With --cluster: seconds a worker holds a game without "
                           "renewing it (a dead worker's game returns after this).")(command)
    return cluster_option()(command)


T = TypeVar("T")


@click.group()
def tournament() -> None:
    """Run role-swapped tournaments between bots and store every game."""


@tournament.command("run", cls=EngineCommand)
@rules_option(required=True)
@click.option("--bots", required=True,
              help="Comma-separated players: bot specs (built-in or installed bots, "
              "file.py:Class, --engine names, with options: mcts:iterations=200); a "
              "detective team is written a+b, Mister X and his detectives x/team.")
@engine_option
@click.option("--format", "fmt", type=click.Choice([f.value for f in Format]),
              default=Format.ROUND_ROBIN.value, show_default=True)
@click.option("--pairs", type=click.IntRange(min=1), default=None,
              help="Role-swapped pairs per pairing (2 games each)  [default: 10; with "
              f"--sprt the most pairs the test may use, default {DEFAULT_MAX_PAIRS}]")
@click.option("--sprt", "sprt_text", metavar="elo0=E0,elo1=E1,alpha=A,beta=B",
              help="Sequential test of the first player against the second: play pairs "
              "until the LLR crosses a bound (logistic Elo; defaults elo0=0, elo1=10, "
              "alpha=0.05, beta=0.05).")
@click.option("--concurrency", type=click.IntRange(min=1), help=CONCURRENCY_HELP)
@click.option("--move-time", default=10.0, show_default=True, help="Seconds per move.")
@click.option("--bank-time", default=0.0, show_default=True, help="Bank seconds per seat.")
@click.option("--seed", type=int, default=None,
              help="Public tournament seed, for reproducible research runs: anyone who "
              "knows it and the players can compute every deal (Mister X's start "
              "included). Default: secret deals from a random key stored with the "
              "tournament.")
@click.option("--pairing", type=click.Choice([p.value for p in Pairing]),
              default=Pairing.FRESH_MRX.value, show_default=True,
              help="How the two games of a role-swapped pair are dealt. fresh-mrx: the "
              "detectives start alike, Mister X's start is drawn afresh for each game. "
              "same-deal: both games from one deal; a bot that remembers game 1 knows "
              "Mister X's start in game 2: only for trusted bots.")
@click.option("--self-play", is_flag=True, help="Also play each bot against itself.")
@click.option("--detectives", "n_detectives", type=int, help="Detectives per game.")
@click.option("--on-timeout", type=click.Choice(["forfeit", "random"]), default="forfeit",
              show_default=True, help="What a timeout costs.")
@click.option("--max-illegal", default=3, show_default=True,
              help="Illegal tries before a forfeit.")
@click.option("--connect-timeout", default=15.0, show_default=True,
              help="Seconds to wait for a bot that is not connected before forfeiting.")
@click.option("--bot-option", "bot_options", multiple=True, type=BOT_OPTION,
              metavar="BOT:KEY=VALUE", help="Option for one bot, e.g. mcts:iterations=500.")
@click.option("--server", "server_url", help="Use a running server (custom bots allowed).")
@admin_token_options
@json_option("Print one JSON object at the end.")
@cluster_options
@log_option
@db_option
def run(rules: str, bots: str, engines: tuple[Engine, ...], fmt: str, pairs: int | None,
        sprt_text: str | None, concurrency: int | None, move_time: float, bank_time: float,
        seed: int | None, pairing: str, self_play: bool, n_detectives: int | None,
        on_timeout: str, max_illegal: int, connect_timeout: float, bot_options: tuple[BotSpec, ...],
        server_url: str | None, admin_token: str | None, admin_token_file: str | None,
        as_json: bool, cluster_text: str | None, lease_time: float,
        child_log: Path | None, db_url: str) -> None:
    """Schedule and play a tournament, then print the leaderboard and win-rate matrix
    (with --sprt also the test's LLR, bounds, Elo estimate and decision)."""
    cluster = _cluster(cluster_text, server_url, db_url)
    sprt = _sprt_spec(sprt_text)
    if pairs is None:
        pairs = 10 if sprt is None else DEFAULT_MAX_PAIRS
    players, options, used = resolve_players(bots, list(engines), list(bot_options))
    spec = TournamentSpec(
        rules=rules, bots=players, format=fmt,
        pairs=pairs, sprt=sprt, seed=seed, pairing=pairing, move_time=move_time,
        bank_time=bank_time,
        self_play=self_play, detectives=n_detectives, on_timeout=on_timeout,
        max_illegal=max_illegal, connect_timeout=connect_timeout,
        bot_options=options, engines={name: e.to_dict() for name, e in used.items()})
    spec.validate()
    if server_url is not None:
        admin_token = client_admin_token(server_url, admin_token, admin_token_file)
    infos = None
    if server_url is None:
        infos = asyncio.run(bot_infos(spec))
        spec.check_roles({name: bot.roles for name, bot in infos.items()})
    with cluster_session(cluster, db_url):  # Ray is up and fits the database: then store
        db = Database.connect(db_url)
        tournament_id = create(db, spec)
        if not as_json:
            click.echo(f"tournament {tournament_id}: {len(db.scheduled(tournament_id))} "
                       f"games scheduled in {db_url}", err=True)
        if cluster is not None:
            _play_cluster(db, db_url, tournament_id, cluster, concurrency, lease_time,
                          as_json, child_log)
            return
    try:
        _play(db, db_url, tournament_id, server_url, admin_token, concurrency, as_json,
              child_log, infos)
    except StartError as exc:
        raise StartError(_not_kept(db, tournament_id, exc)) from None


def _not_kept(db: Database, tournament_id: str, exc: StartError) -> str:
    """The message of a run whose bots did not start, after deleting the tournament it had
    just stored (none of its games started: a run with fixed flags starts it afresh)."""
    try:
        db.delete_tournament(tournament_id)
    except DatabaseError as error:
        return (f"{exc}\n(tournament {tournament_id} is kept: {error}; yard tournament "
                f"delete {tournament_id} removes it)")
    return f"{exc}\n(tournament {tournament_id} not kept: none of its games started)"


@tournament.command("resume")
@click.argument("tournament_id")
@click.option("--concurrency", type=click.IntRange(min=1), help=CONCURRENCY_HELP)
@click.option("--server", "server_url", help="Use a running server.")
@admin_token_options
@json_option("Print one JSON object at the end.")
@cluster_options
@log_option
@db_option
def resume(tournament_id: str, concurrency: int | None, server_url: str | None,
           admin_token: str | None, admin_token_file: str | None, as_json: bool,
           cluster_text: str | None, lease_time: float, child_log: Path | None,
           db_url: str) -> None:
    """Play only the games of TOURNAMENT_ID that are not stored yet."""
    cluster = _cluster(cluster_text, server_url, db_url)
    if server_url is not None:
        admin_token = client_admin_token(server_url, admin_token, admin_token_file)
    db = Database.connect(db_url, create=False)
    if cluster is not None:
        info = db.get_tournament(tournament_id)  # an unknown id fails before Ray starts
        if not info.finished:  # (an import made before a secret-deal one was finished)
            TournamentSpec.from_dict(info.spec).check_dealable(tournament_id,
                                                               db.pending(tournament_id))
        with cluster_session(cluster, db_url):
            _play_cluster(db, db_url, tournament_id, cluster, concurrency, lease_time,
                          as_json, child_log)
        return
    _play(db, db_url, tournament_id, server_url, admin_token, concurrency, as_json, child_log)


@tournament.command("list")
@json_option("Print as JSON.")
@db_option
def list_(as_json: bool, db_url: str) -> None:
    """Stored tournaments with how much of each schedule has been played."""
    infos = Database.connect(db_url, create=False).list_tournaments()
    rows = [{"tournament_id": i.tournament_id, "rules": str(i.spec.get("rules")),
             "bots": list(i.spec.get("bots") or []), "scheduled": i.scheduled,
             "played": i.played, "created_at": i.created_at.isoformat(),
             "sprt": _sprt_decision(i.state)} for i in infos]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for info in infos:
        bots = ",".join(str(b) for b in info.spec.get("bots") or [])
        decision = _sprt_decision(info.state)
        test = f"  SPRT {decision}" if decision else ""
        click.echo(f"{info.tournament_id}  {info.spec.get('rules')!s:<8} "
                   f"{info.played:>5}/{info.scheduled:<5} {bots}{test}")


@tournament.command("delete")
@click.argument("tournament_id")
@click.option("--yes", is_flag=True,
              help="Delete its stored games too (needed when it has some; keep a copy "
              "first: yard export --what records --tournament ID --out FILE).")
@json_option("Print one JSON object: tournament_id, deleted, games, scheduled.")
@db_option
def delete(tournament_id: str, yes: bool, as_json: bool, db_url: str) -> None:
    """Delete TOURNAMENT_ID with its schedule and, with --yes, its stored games (seats,
    turns, records), in one transaction. Refused while a runner or cluster workers play
    it, and without --yes when it has stored games (nothing is deleted then)."""
    with Database.connect(db_url, create=False) as db:
        try:
            deleted = db.delete_tournament(tournament_id, with_games=yes)
        except HasGamesError as exc:
            raise HasGamesError(
                f"tournament {tournament_id} has {_count(exc.games, 'stored game')} (and "
                f"{_count(exc.scheduled, 'schedule entry')}): nothing deleted; pass --yes "
                f"to delete them with it (keep a copy first: yard export --what records "
                f"--tournament {tournament_id} --out FILE)", exc.games, exc.scheduled) \
                from None
    if as_json:
        click.echo(json.dumps({"tournament_id": tournament_id, "deleted": True,
                               "games": deleted.games, "scheduled": deleted.scheduled}))
        return
    click.echo(f"deleted tournament {tournament_id}: {_count(deleted.games, 'game')}, "
               f"{_count(deleted.scheduled, 'schedule entry')} ({db.url})")


def _count(number: int, noun: str) -> str:
    """``"1 game"``, ``"2 games"``, ``"2 schedule entries"``."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1]}ies" if noun.endswith("y") else f"{number} {noun}s"


def _sprt_decision(state: dict[str, Any]) -> str | None:
    """The recorded SPRT decision of a tournament (None: no SPRT)."""
    test = state.get("sprt")
    return str(test.get("decision")) if isinstance(test, dict) else None


def _cluster(text: str | None, server_url: str | None, db_url: str) -> ClusterAddress | None:
    """The parsed ``--cluster`` (None without it); bad values and SQLite for workers on
    other machines are usage errors before anything is stored."""
    if text is None:
        return None
    if server_url is not None:
        raise click.UsageError("--cluster and --server exclude each other (cluster workers "
                               "start their own servers)")
    try:
        cluster = parse_cluster(text)
        check_database(db_url, cluster, nodes=1)
    except ClusterError as exc:
        raise click.BadParameter(str(exc), param_hint="--cluster") from None
    return cluster


def _play_cluster(db: Database, db_url: str, tournament_id: str, cluster: ClusterAddress,
                  workers: int | None, lease_s: float, as_json: bool,
                  child_log: Path | None) -> None:
    """Play on Ray workers; print progress and the same report as :func:`_play`."""
    console = Console(stderr=True)
    child_log = child_log or Path(tempfile.gettempdir()) / f"yard-tournament-{tournament_id}.log"
    if not as_json:
        console.print(f"cluster {cluster.text}; server and bot output (each node): "
                      f"{child_log}", highlight=False, soft_wrap=True)

    def progress_line(progress: RunProgress) -> None:
        if not as_json:
            test = "" if progress.sprt is None else f"; {_sprt_line(progress.sprt)}"
            console.print(f"{progress.done}/{progress.total} games stored "
                          f"({progress.rate:.2f} games/s){test}", highlight=False)

    run = ClusterRun(db, db_url, tournament_id, cluster, workers=workers, lease_s=lease_s,
                     child_log=child_log, on_progress=progress_line)
    try:
        with _sigterm_as_interrupt():
            done = run.run()
    except KeyboardInterrupt:
        info = db.get_tournament(tournament_id)
        console.print(f"interrupted: {info.played}/{info.scheduled} games stored; continue "
                      f"with: yard tournament resume {tournament_id} --cluster "
                      f"{cluster.text} --db {db_url}", highlight=False, soft_wrap=True)
        sys.exit(130)
    report = tournament_report(db, tournament_id)
    if as_json:
        payload = report.to_dict()
        payload["cluster"] = {"address": cluster.text, "workers": done.workers,
                              "cpus_per_game": done.cpus_per_game, "lost_workers": done.lost,
                              "duplicates_dropped": done.duplicates}
        if done.progress.sprt is not None:
            payload["sprt"] = done.progress.sprt.to_dict()
        click.echo(json.dumps(payload, indent=2))
        return
    console.print(f"{done.workers} workers ({done.cpus_per_game} CPU a game); "
                  f"{done.lost} lost and replaced", highlight=False)
    report.render()
    if done.progress.sprt is not None:
        Console().print(done.progress.sprt.summary(), highlight=False, soft_wrap=True)
        if done.progress.sprt.decision.final:
            return
    if done.progress.aborted:
        console.print(f"{done.progress.aborted} games could not be played; run `yard "
                      f"tournament resume {tournament_id} --cluster {cluster.text} --db "
                      f"{db_url}` to retry them", highlight=False, soft_wrap=True)


def _sprt_spec(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    try:
        return SprtSpec.parse(text).to_dict()
    except SprtError as exc:
        raise click.BadParameter(str(exc), param_hint="--sprt") from None


def _play(db: Database, db_url: str, tournament_id: str, server_url: str | None,
          admin_token: str | None, concurrency: int | None, as_json: bool,
          child_log: Path | None, bots: dict[str, BuiltinBot] | None = None) -> None:
    console = Console(stderr=True)
    display = _Display(db, tournament_id, console, enabled=not as_json)
    if server_url is None:
        # The children's own messages would tear the live bar apart: they go to a file.
        default = Path(tempfile.gettempdir()) / f"yard-tournament-{tournament_id}.log"
        child_log = child_log or default
        if not as_json:
            console.print(f"server and bot output: {child_log}", highlight=False, soft_wrap=True)
    def watch_address(url: str) -> None:
        from host.web.http import web_url

        console.print(f"watch it at {web_url(url)}#/tournaments/{tournament_id}",
                      highlight=False, soft_wrap=True)

    if server_url is None:
        tune_gc()  # this process hosts the match server: tuned as `yard serve` tunes its own
    runner = TournamentRunner(db, db_url, tournament_id, server_url=server_url,
                              admin_token=admin_token, concurrency=concurrency,
                              listener=display.update, child_log=child_log,
                              on_server=watch_address, bots=bots,
                              notice=lambda text: console.print(
                                  f"warning: {text}", highlight=False, soft_wrap=True))
    try:
        with display:
            progress = asyncio.run(_stopped_by_sigterm(runner.run()))
    except KeyboardInterrupt:
        info = db.get_tournament(tournament_id)
        console.print(f"interrupted: {info.played}/{info.scheduled} games stored; continue "
                      f"with: yard tournament resume {tournament_id} --db {db_url}",
                      highlight=False, soft_wrap=True)
        sys.exit(130)
    _show_results(db, db_url, tournament_id, progress, console, own_server=server_url is None,
                  as_json=as_json)


def _show_results(db: Database, db_url: str, tournament_id: str, progress: RunProgress,
                  console: Console, *, own_server: bool, as_json: bool) -> None:
    """The report of a run that ended (JSON, or tables and what to do next)."""
    report = tournament_report(db, tournament_id)
    if as_json:
        payload = report.to_dict()
        if progress.sprt is not None:
            payload["sprt"] = progress.sprt.to_dict()
        click.echo(json.dumps(payload, indent=2))
        return
    report.render()
    if own_server:
        # The run's own server (and its web pages) stopped with it.
        console.print(f"browse it: yard web --db {db_url} (page #/tournaments/{tournament_id})",
                      highlight=False, soft_wrap=True)
    if progress.sprt is not None:
        Console().print(progress.sprt.summary(), highlight=False, soft_wrap=True)
        if progress.sprt.decision.final:
            return
    if progress.aborted:
        console.print(f"{progress.aborted} games could not be played; run `yard tournament "
                      f"resume {tournament_id} --db {db_url}` to retry them",
                      highlight=False, soft_wrap=True)


async def _stopped_by_sigterm(run: Coroutine[Any, Any, T]) -> T:
    """``run``, which SIGTERM (a service manager, `kill`) stops as Ctrl-C does: the run is
    cancelled (running games are stored as aborted), then KeyboardInterrupt. Handled on
    the loop itself: a runner started with SIGINT ignored (``yard tournament run ... &``
    in a script) still stops on SIGTERM, where re-raising it as SIGINT did nothing."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    terminated = False

    def stop() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        return await run
    except asyncio.CancelledError:
        if terminated:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a service manager, `kill`) stops a synchronous run (the cluster's) as
    Ctrl-C does: KeyboardInterrupt, raised by the handler itself, so that it works in a
    process started with SIGINT ignored too."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Display:
    """A rich progress bar: games done / total, games/s, ETA, current leader."""

    def __init__(self, db: Database, tournament_id: str, console: Console,
                 enabled: bool) -> None:
        self.db = db
        self.tournament_id = tournament_id
        self.enabled = enabled
        self.bar = Progress(TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[rate]:.1f} games/s"),
                            TimeRemainingColumn(), TextColumn("{task.fields[leader]}"),
                            console=console,
                            disable=not enabled or not console.is_terminal)
        self.task: TaskID | None = None
        self._last_leader = 0

    def __enter__(self) -> _Display:
        info = self.db.get_tournament(self.tournament_id)
        self.bar.__enter__()
        self.task = self.bar.add_task("games", total=info.scheduled, completed=info.played,
                                      rate=0.0, leader="")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.__exit__(None, None, None)

    def update(self, progress: RunProgress, entry: ScheduledGame, outcome: Outcome) -> None:
        if self.task is None or not self.enabled:
            return
        if not self.bar.console.is_terminal:
            # Logs and pipes get one plain line per game instead of a redrawn bar.
            winner = outcome.winner.value if outcome.winner else "nobody"
            test = "" if progress.sprt is None else f"; {_sprt_line(progress.sprt)}"
            self.bar.console.print(
                f"game {entry.index} done ({progress.done}/{progress.total}): "
                f"{entry.detectives} hunt {entry.mrx}: {winner} "
                f"({outcome.termination.value}){test}", highlight=False, soft_wrap=True)
            return
        fields: dict[str, Any] = {"rate": progress.rate}
        step = max(1, progress.total // 20)
        if progress.sprt is not None:
            fields["leader"] = _sprt_line(progress.sprt)
        elif progress.done - self._last_leader >= step or progress.done == progress.total:
            self._last_leader = progress.done
            fields["leader"] = leader_line(self.db, self.tournament_id)
        self.bar.update(self.task, completed=progress.done, **fields)


def _sprt_line(state: SprtState) -> str:
    return (f"SPRT {state.pairs} pairs, LLR {state.llr:.2f} "
            f"[{state.lower:.2f}, {state.upper:.2f}] {state.decision.value}")
