"""``yard bot-check`` end to end: pick the engine to check, run the battery, report.

:func:`check_bot` resolves the bot under test (a bot spec, or an ``--engine`` by name),
reads its claims and runs :class:`~tournament.botcheck.battery.Battery`; the
:class:`BotCheckRun` it returns gives the text and ``--json`` reports.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bots.registry import default_name
from bots.spec import BotSpec
from game.errors import YardError
from tournament.botcheck.battery import Battery, Check
from tournament.botcheck.claims import Claims, claims_of
from tournament.botcheck.reference import REFERENCE
from tournament.engines import Engine, engine_table, spec_engine


class BotCheckError(YardError):
    """``yard bot-check`` was called wrongly (not: the bot failed a check)."""


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
        """True when no check failed."""
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The ``yard bot-check --json`` object."""
        return {"bot": self.engine.name, "passed": self.passed, "rules": self.claims.rules,
                "roles": self.claims.roles, "seconds": round(self.seconds, 1),
                "checks": [asdict(c) for c in self.checks], "log": str(self.log),
                "options": self.claims.options}

    def option_lines(self) -> list[str]:
        """``option NAME=VALUE (TYPE, default D)`` for each option the bot declares (none
        for a command engine), first in the text report."""
        return [f"option {o['name']}={o['value']} ({o['type']}, "
                f"{'required' if o['required'] else 'default ' + str(o['default'])})"
                for o in self.claims.options or ()]

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
