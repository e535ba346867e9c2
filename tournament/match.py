"""One game between bots (``yard match``): on a running server by name, or on a server
hosted here (:mod:`host.hosted`) with each bot launched as its own process."""

from __future__ import annotations

import asyncio

from bots.spec import BotSpec
from game.errors import YardError
from host.hosted import HostedServer, server_config
from protocol import StartMatch
from protocol.messages import MatchResult
from protocol.tokens import new_token
from server.admin import AdminClient, AdminError
from tournament.discovery import bot_roles
from tournament.engines import Engine, engine_table, spec_engine, start_engine
from tournament.processes import Child
from tournament.spec import TournamentSpec


class MatchError(YardError):
    """A match cannot be set up: unknown bots, wrong roles, or an unreachable server."""


def play_match(request: StartMatch, specs: list[BotSpec], engines: list[Engine],
               server_url: str | None = None, admin_token: str | None = None,
               db_url: str = "sqlite:///yard.db") -> MatchResult:
    """Play ``request`` on ``server_url`` between bots already connected to it, or, without
    a URL, on a local server storing into ``db_url`` with the bots of ``specs`` (an engine
    of ``engines`` by name, else ``yard bot SPEC``) started for it."""
    if server_url:
        if engines or any(s.options for s in specs):
            raise MatchError("--server plays bots already connected to it, by name: "
                             "--engine and bot options need a local match")
        return asyncio.run(_remote(server_url, admin_token, request))
    launch = match_engines(specs, engines)
    check_match_roles(request, launch)
    return asyncio.run(_local(db_url, request, launch))


def check_match_roles(request: StartMatch, engines: list[Engine]) -> None:
    """Refuse a local match before anything starts when a bot is unknown, rejects its
    options or is seated on a side it does not play (like a tournament does)."""
    spec = TournamentSpec("", [], engines={e.name: e.to_dict() for e in engines})
    roles = asyncio.run(bot_roles(spec))
    for name, role in [(request.mrx, "mrx"), *((d, "detectives") for d in request.detectives)]:
        if role not in roles.get(name, []):
            plays = " and ".join(roles.get(name, [])) or "nothing"
            raise MatchError(f"bot {name!r} cannot play {role} (it plays {plays})")


def match_engines(specs: list[BotSpec], engines: list[Engine]) -> list[Engine]:
    """The engines to start for a local match: an ``--engine`` by name, else ``yard bot``
    with the spec, named by its ref."""
    table = engine_table(engines)
    out: dict[str, Engine] = {}
    seen: dict[str, BotSpec] = {}
    for spec in specs:
        if seen.setdefault(spec.ref, spec) != spec:
            raise MatchError(f"bot {spec.ref!r} is given with different options; name "
                                    f"each configuration with --engine name=NAME bot=SPEC")
        if spec.ref in table:
            if spec.options:
                raise MatchError(f"give options of engine {spec.ref!r} in its "
                                        f"--engine definition (option.KEY=VALUE)")
            out[spec.ref] = table.pop(spec.ref)
        else:
            out[spec.ref] = spec_engine(spec)
    if table:
        raise MatchError(f"--engine {', '.join(sorted(table))}: not playing")
    return list(out.values())


async def _remote(url: str, token: str | None, request: StartMatch) -> MatchResult:
    try:
        async with AdminClient(url, token, name="yard-match") as admin:
            game = await admin.start_match(request)
            return await admin.result(game)
    except AdminError as exc:
        raise MatchError(f"{url}: {exc}") from None


async def _local(db_url: str, request: StartMatch, engines: list[Engine]) -> MatchResult:
    token = new_token()  # the local server's admin token, known only here
    server = HostedServer(server_config("127.0.0.1", admin_token=token), db_url)
    bots: list[Child] = []
    try:
        url = await asyncio.to_thread(server.start)
        for engine in engines:
            bots.append(await start_engine(engine, url, admin_token=token))
        return await _remote(url, token, request)
    finally:
        for child in bots:
            await child.stop()
        await server.stop_async()
