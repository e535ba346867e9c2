"""What the bot under test claims to play: its roles and rulesets, and the options it
declares with the values it is checked with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bots.options import declared_options, jsonable
from bots.registry import bot_class, convert_options
from game import load_ruleset
from game.rules import builtin_rulesets
from tournament.engines import ROLES, Engine


@dataclass
class Claims:
    """What the bot says it plays."""

    roles: list[str]
    rules: list[str]
    #: The declared options (``yard bots --json`` form) with ``"value"``, the value it is
    #: checked with; ``None`` for a command engine (its options are its own business).
    options: list[dict[str, Any]] | None = None


def claims_of(engine: Engine, rules: list[str] | None) -> Claims:
    """Roles, rulesets and options of the bot under test (``rules`` overrides its claim).
    The options of a bot spec are checked here: an unknown or invalid one raises
    :class:`bots.registry.BotOptionError` before anything starts."""
    spec = engine.spec
    options = None
    if spec is not None:
        cls = bot_class(spec.ref)
        roles = sorted(cls.roles)
        claimed = sorted(cls.rulesets) if cls.rulesets is not None else None
        given = convert_options(cls, spec.option_dict())
        options = [{**o.to_dict(), "value": jsonable(given.get(o.name, o.default))}
                   for o in declared_options(cls)]
    else:
        roles = sorted(engine.roles or ROLES)
        claimed = None
    claimed = list(engine.rules) if engine.rules else claimed
    names = rules or claimed or [r.name for r in builtin_rulesets()]
    for name in names:
        load_ruleset(name)  # an unknown ruleset is a usage error
    return Claims(roles, names, options)

