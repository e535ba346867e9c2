"""Bots by name. Heavy bots (torch, numba) are imported only when asked for.

>>> bot = make_bot("random", seed=1)
>>> bot.name
'random'
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from bots.base import Bot
from game.errors import YardError


class UnknownBotError(YardError):
    """A bot name is not registered."""


class BotOptionError(YardError):
    """A bot option is unknown or has a value of the wrong type."""


#: name -> "module:Class". Add a line here to register a new built-in bot.
BUILTIN_BOTS: dict[str, str] = {
    "random": "bots.simple:RandomBot",
    "rush": "bots.simple:RushBot",
    "run": "bots.simple:RunBot",
    "run2": "bots.simple:Run2Bot",
    "greedy": "bots.greedy:GreedyBot",
    "alphabeta": "bots.alphabeta:AlphaBetaBot",
    "mcts": "bots.mcts.bot:MctsBot",
    "dqn": "bots.dqn.bot:DqnBot",
}


def bot_names() -> list[str]:
    """Registered bot names."""
    return sorted(BUILTIN_BOTS)


def bot_class(name: str) -> type[Bot]:
    """The class registered under ``name``."""
    target = BUILTIN_BOTS.get(name)
    if target is None:
        raise UnknownBotError(f"unknown bot {name!r}; built-in bots: {', '.join(bot_names())}")
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnknownBotError(f"bot {name!r} is registered but its module cannot be loaded: "
                              f"{exc}") from None
    cls: type[Bot] = getattr(module, attr)
    return cls


def make_bot(name: str, seed: int | None = None,
             options: Mapping[str, Any] | None = None) -> Bot:
    """Instantiate bot ``name`` with ``seed`` and options (strings are converted)."""
    cls = bot_class(name)
    kwargs = convert_options(cls, options or {})
    return cls(seed=seed, **kwargs)


def convert_options(cls: type[Bot], options: Mapping[str, Any]) -> dict[str, Any]:
    """Check option names against ``cls.__init__`` and convert string values."""
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = {p.name: p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name not in ("self", "seed") and p.kind in kinds}
    out: dict[str, Any] = {}
    for key, value in options.items():
        param = params.get(key)
        if param is None:
            known = ", ".join(sorted(params)) or "none"
            raise BotOptionError(f"bot {cls.name!r} has no option {key!r} (options: {known})")
        out[key] = _convert(cls.name, key, value, param.default)
    return out


def _convert(bot: str, key: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or isinstance(default, str) or default is None:
        return value
    try:
        if isinstance(default, bool):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        return type(default)(value)
    except ValueError:
        raise BotOptionError(f"bot {bot!r}: option {key}={value!r} is not a valid "
                             f"{type(default).__name__}") from None


def parse_options(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["c=2.0", "iterations=500"]`` -> ``{"c": "2.0", "iterations": "500"}``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BotOptionError(f"bot option {pair!r} must look like key=value")
        out[key.strip()] = value.strip()
    return out
