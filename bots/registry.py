"""Bots by spec: built-in names, installed entry points and Python classes.

Heavy bots (torch, numba) are imported only when asked for. A spec (see :mod:`bots.spec`)
names a built-in bot, a bot installed under the ``yard.bots`` entry-point group, or a class
as ``file.py:Class`` / ``package.module:Class``.

>>> bot = make_bot("random", seed=1)
>>> bot.name
'random'
>>> bot_from_spec("greedy").name
'greedy'
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from bots.base import Bot
from bots.options import BotOptionError as BotOptionError
from bots.options import declared_options
from bots.spec import BotSpec, BotSpecError, parse_spec
from game.errors import YardError

ENTRY_POINT_GROUP = "yard.bots"
"""Packages register bots here: ``[project.entry-points."yard.bots"] mine = "pkg.mod:Mine"``."""

class UnknownBotError(YardError):
    """A bot name is not registered."""


class BotStartError(YardError):
    """A bot that is not built in raised while it was created (in its ``__init__``)."""


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
    "hider": "bots.hider:HiderBot",
}


def entry_point_bots() -> dict[str, EntryPoint]:
    """Bots installed by other packages under the ``yard.bots`` entry-point group (a name
    that is also a built-in bot is left out: the built-in one wins)."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return {name: ep for name, ep in sorted(found.items()) if name not in BUILTIN_BOTS}


def bot_names() -> list[str]:
    """Registered bot names: built-in ones and installed entry points."""
    return sorted({*BUILTIN_BOTS, *entry_point_bots()})


def bot_source(ref: str) -> str:
    """Where ``ref`` comes from: ``builtin``, ``entry point (DIST)`` or ``class``."""
    if ref in BUILTIN_BOTS:
        return "builtin"
    if ":" in ref:
        return "class"
    ep = entry_point_bots().get(ref)
    if ep is None:
        raise UnknownBotError(_unknown(ref))
    dist = ep.dist.name if ep.dist is not None else "?"
    return f"entry point ({dist})"


def _unknown(name: str) -> str:
    return (f"unknown bot {name!r}; bots: {', '.join(bot_names())} (or a class: "
            f"file.py:Class, package.module:Class)")


def bot_class(ref: str) -> type[Bot]:
    """The class a bot ref names: a built-in bot, an entry point, or ``module:Class``."""
    target = BUILTIN_BOTS.get(ref)
    if target is not None:
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            slim = (exc.name or "").startswith("bots.")  # yard-client: random only
            raise UnknownBotError(f"bot {ref!r} is registered but its module cannot be "
                                  f"loaded: {exc}" + (" (the slim client yard-client has "
                                  "only random: the others need the full yard install)"
                                  if slim else "")) from None
        cls: type[Bot] = getattr(module, attr)
        return cls
    if ":" in ref:
        return _check_class(ref, _load_class(ref))
    ep = entry_point_bots().get(ref)
    if ep is None:
        raise UnknownBotError(_unknown(ref))
    try:
        loaded = ep.load()
    except Exception as exc:
        raise UnknownBotError(f"bot {ref!r} (entry point {ep.value}) cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from None
    return _check_class(f"{ref} ({ep.value})", loaded)


def _load_class(ref: str) -> Any:
    target, _, attr = ref.rpartition(":")
    if target in BUILTIN_BOTS or target in entry_point_bots():
        raise BotSpecError(f"bot spec {ref!r}: {attr!r} is not key=value")
    try:
        if target.endswith(".py"):
            module = _load_file(Path(target))
        else:
            if os.getcwd() not in sys.path:
                sys.path.append(os.getcwd())  # package.module:Class from the current folder
            module = importlib.import_module(target)
    except BotSpecError:
        raise
    except Exception as exc:  # the user's module may fail in any way while importing
        raise UnknownBotError(f"bot {ref!r}: cannot import {target}: "
                              f"{type(exc).__name__}: {exc}") from None
    if not hasattr(module, attr):
        raise UnknownBotError(f"bot {ref!r}: {target} has no {attr!r}")
    return getattr(module, attr)


def _load_file(path: Path) -> Any:
    path = path.resolve()
    if not path.is_file():
        raise BotSpecError(f"bot file {str(path)!r} does not exist")
    name = "_yard_bot_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # like `python file.py`: siblings import
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise BotSpecError(f"bot file {str(path)!r} is not a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _check_class(ref: str, obj: Any) -> type[Bot]:
    if not (isinstance(obj, type) and issubclass(obj, Bot)):
        raise UnknownBotError(f"bot {ref!r} is not a subclass of bots.sdk.Bot")
    if inspect.isabstract(obj):
        raise UnknownBotError(f"bot {ref!r} does not implement choose()")
    return obj


def default_name(ref: str) -> str:
    """The name a bot announces by default: its registered name, or for a class its
    ``name`` attribute."""
    return bot_class(ref).name if ":" in ref else ref


def bot_from_spec(spec: str | BotSpec, seed: int | None = None,
                  options: Mapping[str, Any] | None = None) -> Bot:
    """A bot from a spec (``"mcts:iterations=200"``); ``options`` override the spec's."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    return make_bot(parsed.ref, seed, {**parsed.option_dict(), **(options or {})})


def make_bot(name: str, seed: int | None = None,
             options: Mapping[str, Any] | None = None) -> Bot:
    """Instantiate bot ``name`` (a built-in or entry-point name, or ``module:Class``) with
    ``seed`` and options (strings are converted; see :func:`convert_options`). The seed
    reaches ``self.rng`` whether or not the class's ``__init__`` takes ``seed``
    (:meth:`Bot.create`). A bot that is not built in and raises in ``__init__`` raises
    :class:`BotStartError` with its exception on one line."""
    cls = bot_class(name)
    kwargs = convert_options(cls, options or {})
    try:
        return cls.create(seed, **kwargs)
    except YardError:
        raise
    except Exception as exc:
        if name in BUILTIN_BOTS:
            raise  # a bug in yard: the traceback helps
        raise BotStartError(f"bot {name!r} failed to start: {cls.__name__}.__init__ raised "
                            f"{type(exc).__name__}: {exc}") from exc


def convert_options(cls: type[Bot], options: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``options`` against what ``cls`` declares: names known (an unknown one is
    refused naming the known ones), required ones given, string values converted to the
    declared types and checked against declared choices and ranges."""
    declared = {o.name: o for o in declared_options(cls)}
    bot = cls.name if cls.name != Bot.name else cls.__name__  # a class without a name
    out: dict[str, Any] = {}
    for key, value in options.items():
        option = declared.get(key)
        if option is None:
            known = ", ".join(sorted(declared)) or "none"
            raise BotOptionError(f"bot {bot!r} has no option {key!r} (options: {known})")
        out[key] = option.convert(bot, value)
    missing = [o.name for o in declared.values() if o.required and o.name not in out]
    if missing:
        raise BotOptionError(f"bot {bot!r} needs option"
                             f"{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(f'{m}=VALUE' for m in missing)}")
    return out
