"""Which bots a tournament can use and what each of them plays.

No bot is imported here: built-in, installed and class bots are asked through
``yard bots --json --check`` in a subprocess (roles, whether they are time-based, the cores
a move needs, and whether they accept the tournament's options); command engines are taken
as their ``--engine`` declares them. Used by the runner and by ``yard match``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from tournament.engines import Engine
from tournament.processes import yard_argv
from tournament.spec import TournamentRunError, TournamentSpec


@dataclass(frozen=True)
class BuiltinBot:
    """What ``yard bots --json`` says of a bot (with the tournament's options), or what an
    ``--engine`` declares."""

    name: str
    roles: list[str]
    timed: bool = False
    cores: int = 1


async def bot_roles(spec: TournamentSpec) -> dict[str, list[str]]:
    """Every bot name ``spec`` may use and the roles each plays (see :func:`bot_infos`)."""
    return {name: bot.roles for name, bot in (await bot_infos(spec)).items()}


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
        lines = err.decode(errors="replace").strip().splitlines()
        why = f": {lines[-1]}" if lines else f" (exit status {proc.returncode})"
        raise TournamentRunError(f"`yard bots --json` crashed while checking the bots{why}")
    rows: list[dict[str, Any]] = json.loads(out)
    return rows
