"""What the bot under test claims to play: its roles and rulesets."""

from __future__ import annotations

from dataclasses import dataclass

from bots.registry import bot_class
from game import load_ruleset
from game.rules import builtin_rulesets
from tournament.engines import ROLES, Engine


@dataclass
class Claims:
    """What the bot says it plays."""

    roles: list[str]
    rules: list[str]


def claims_of(engine: Engine, rules: list[str] | None) -> Claims:
    """Roles and rulesets of the bot under test (``rules`` overrides its claim)."""
    spec = engine.spec
    if spec is not None:
        cls = bot_class(spec.ref)
        roles = sorted(cls.roles)
        claimed = sorted(cls.rulesets) if cls.rulesets is not None else None
    else:
        roles = sorted(engine.roles or ROLES)
        claimed = None
    claimed = list(engine.rules) if engine.rules else claimed
    names = rules or claimed or [r.name for r in builtin_rulesets()]
    for name in names:
        load_ruleset(name)  # an unknown ruleset is a usage error
    return Claims(roles, names)

