"""Engines: the bots a launcher starts as processes, and how each is started.

An :class:`Engine` is either a *bot spec* run by ``yard bot`` (a built-in or installed bot,
or a Python class, with options) or a *command* in any language (cutechess-style
``--engine name=NAME cmd="python mybot.py --url {url}"``). :meth:`Engine.command` is the one
place that turns either into a process command line; :func:`start_engine` launches it and
waits until it is connected. Used by ``yard tournament run``, ``yard match`` and
``yard bot-check``.

``--engine`` takes ``key=value`` words (one argument, or several in a row):

- ``name=NAME`` (required): the name the bot plays under on the server;
- ``cmd=COMMAND``: a command line; ``{url}``, ``{name}`` and ``{instance}`` are replaced by
  the server URL, NAME and the process's instance label, and the process also gets them as
  ``$YARD_URL``, ``$YARD_BOT_NAME`` and ``$YARD_BOT_INSTANCE`` (the Python SDK and the
  JavaScript example read those). It must connect as NAME and send that instance label as
  ``hello.instance`` (the launcher waits until the server lists NAME with it);
- ``bot=SPEC`` or ``class=SPEC``: a bot spec (``mybot.py:Closer``, ``mcts:iterations=200``);
- ``option.KEY=VALUE``: an option for the ``bot``/``class`` spec (repeatable);
- ``roles=mrx,detectives``: the sides a command bot plays (default both; a class declares
  its own ``roles``);
- ``rules=classic,grid5``: the rulesets it claims (default: all; ``yard bot-check``).

>>> e = parse_engine('name=mine cmd="python mybot.py --url {url}" roles=detectives', "/src")
>>> e.command("ws://h:1")
['python', 'mybot.py', '--url', 'ws://h:1']
>>> e.roles
('detectives',)
>>> parse_engine("name=c class=bots/x.py:Closer option.depth=2", "/src").bot
'/src/bots/x.py:Closer:depth=2'
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bots.spec import BotSpec, BotSpecError, parse_spec
from game.errors import YardError
from protocol import BotInfo
from server.admin import AdminClient, AdminError
from tournament.processes import READY_TIMEOUT_S, Child, yard_argv

ROLES = ("mrx", "detectives")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}")


class EngineError(YardError):
    """An ``--engine`` definition is invalid."""


@dataclass(frozen=True)
class Engine:
    """A bot to launch: ``bot`` (a spec for ``yard bot``) or ``cmd`` (any command)."""

    name: str
    bot: str | None = None
    cmd: str | None = None
    roles: tuple[str, ...] | None = None
    rules: tuple[str, ...] | None = None
    cwd: str | None = None

    def command(self, url: str, instance: str | None = None) -> list[str]:
        """The process command line for a server at ``url`` (announcing ``instance``)."""
        if self.bot is not None:
            extra = ["--instance", instance] if instance is not None else []
            return yard_argv("bot", self.bot, "--url", url, "--name", self.name, *extra)
        assert self.cmd is not None
        return [word.replace("{url}", url).replace("{name}", self.name)
                .replace("{instance}", instance or "") for word in shlex.split(self.cmd)]

    def env(self, url: str, instance: str | None = None) -> dict[str, str]:
        """Extra environment of the process."""
        env = {"YARD_URL": url, "YARD_BOT_NAME": self.name}
        if instance is not None:
            env["YARD_BOT_INSTANCE"] = instance
        return env

    @property
    def spec(self) -> BotSpec | None:
        """The bot spec of a ``bot``/``class`` engine."""
        return None if self.bot is None else parse_spec(self.bot)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored with a tournament)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Engine:
        """Inverse of :meth:`to_dict`."""
        def tup(value: Any) -> tuple[str, ...] | None:
            return None if value is None else tuple(value)
        return cls(data["name"], data.get("bot"), data.get("cmd"), tup(data.get("roles")),
                   tup(data.get("rules")), data.get("cwd"))


def absolute_spec(spec: BotSpec, cwd: str) -> BotSpec:
    """``spec`` with a relative ``file.py:Class`` path made absolute (against ``cwd``)."""
    target, _, attr = spec.ref.rpartition(":")
    if not target.endswith(".py") or os.path.isabs(target):
        return spec
    return BotSpec(f"{Path(cwd, target)}:{attr}", spec.options)


def spec_engine(spec: BotSpec, name: str | None = None, cwd: str | None = None) -> Engine:
    """The engine running ``spec`` with ``yard bot`` under ``name`` (default: its ref)."""
    cwd = cwd or os.getcwd()
    return Engine(name or spec.ref, bot=str(absolute_spec(spec, cwd)), cwd=cwd)


def parse_engine(text: str, cwd: str | None = None) -> Engine:
    """Parse one ``--engine`` value (``key=value`` words, shell-quoted)."""
    fields, options = _engine_fields(text)
    name = fields.get("name", "")
    if not _NAME.fullmatch(name):
        raise EngineError(f"--engine {text!r}: needs name=NAME (letters, digits, '_', '-', "
                          f"'.'; at most 64)")
    bot = fields.get("bot", fields.get("class"))
    cmd = fields.get("cmd")
    if (bot is None) == (cmd is None):
        raise EngineError(f"--engine {text!r}: give exactly one of cmd=, bot= or class=")
    cwd = cwd or os.getcwd()
    if cmd is not None:
        return _command_engine(text, name, cmd, fields, options, cwd)
    return _bot_engine(text, name, bot or "", fields, options, cwd)


def _engine_fields(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The fields of an ``--engine`` value (``name``, ``cmd``, ...) and its ``option.KEY``
    pairs, in order."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise EngineError(f"--engine {text!r}: {exc}") from None
    fields: dict[str, str] = {}
    options: list[tuple[str, str]] = []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise EngineError(_not_key_value(text, word, words))
        if key.startswith("option.") and len(key) > len("option."):
            options.append((key.removeprefix("option."), value))
        elif key in ("name", "cmd", "bot", "class", "roles", "rules"):
            if key in fields or (key in ("bot", "class") and ({"bot", "class"} & set(fields))):
                raise EngineError(f"--engine {text!r}: {key} given twice")
            fields[key] = value
        else:
            raise EngineError(f"--engine {text!r}: unknown key {key!r} (name, cmd, bot, "
                              f"class, option.KEY, roles, rules)")
    return fields, options


def _command_engine(text: str, name: str, cmd: str, fields: dict[str, str],
                    options: list[tuple[str, str]], cwd: str) -> Engine:
    """The engine of a ``cmd=`` value: a command that speaks the protocol itself."""
    if options:
        raise EngineError(f"--engine {text!r}: option.KEY is for bot=/class= engines; "
                          f"pass options to a command in cmd=")
    if not cmd.strip():
        raise EngineError(f"--engine {text!r}: cmd= is empty")
    try:
        shlex.split(cmd)
    except ValueError as exc:
        raise EngineError(f"--engine {text!r}: cmd: {exc}") from None
    return Engine(name, cmd=cmd, roles=_roles(fields.get("roles"), text),
                  rules=_list(fields.get("rules")), cwd=cwd)


def _bot_engine(text: str, name: str, bot: str, fields: dict[str, str],
                options: list[tuple[str, str]], cwd: str) -> Engine:
    """The engine of a ``bot=``/``class=`` value: a bot spec run with ``yard bot``."""
    if "roles" in fields:
        raise EngineError(f"--engine {text!r}: roles= is for cmd= engines (a bot class "
                          f"declares its own roles)")
    try:
        spec = parse_spec(bot).with_options(options)
    except BotSpecError as exc:
        raise EngineError(f"--engine {text!r}: {exc}") from None
    engine = spec_engine(spec, name, cwd)
    return Engine(engine.name, bot=engine.bot, rules=_list(fields.get("rules")), cwd=cwd)


def _not_key_value(text: str, word: str, words: list[str]) -> str:
    """Why ``word`` of ``--engine text`` is refused, with the quoting it most likely lacked
    (the shell took the quotes around ``cmd="node bot.js"`` away)."""
    message = f"--engine {text!r}: {word!r} is not key=value"
    keys = [w.partition("=")[0] for w in words if "=" in w]
    if keys:
        message += (f" (a value with spaces needs quotes inside the --engine text, e.g. "
                    f"--engine 'name=mybot {keys[-1]}=\"node bot.js\"')")
    if "name" not in keys:
        message += "; every --engine needs name=NAME"
    return message


def _list(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _roles(value: str | None, text: str) -> tuple[str, ...] | None:
    roles = _list(value)
    if roles is not None and (not roles or not set(roles) <= set(ROLES)):
        raise EngineError(f"--engine {text!r}: roles= takes mrx, detectives or both")
    return roles


def engine_table(engines: list[Engine]) -> dict[str, Engine]:
    """Engines by name; a name given twice is an error."""
    out: dict[str, Engine] = {}
    for engine in engines:
        if engine.name in out:
            raise EngineError(f"--engine name={engine.name} is defined twice")
        out[engine.name] = engine
    return out


async def start_engine(engine: Engine, url: str, stderr_log: Path | None = None, *,
                       instance: str | None = None, watch_url: str | None = None,
                       timeout: float = READY_TIMEOUT_S, admin_token: str | None = None
                       ) -> Child:
    """Launch ``engine`` against the server at ``url``, announcing ``instance`` (see
    ``hello.instance``); returns once it is connected, at most ``timeout`` seconds after
    the call (:class:`~tournament.processes.ProcessError` otherwise, saying which bots did
    connect).

    A ``yard bot`` engine reports ready on stdout; a command is ready when the server
    (at ``watch_url``, default ``url``; as admin with ``admin_token``) lists a bot named
    ``engine.name`` (with that instance)."""
    deadline = time.monotonic() + timeout
    argv = engine.command(url, instance)
    env = engine.env(url, instance)
    what = shlex.join(argv) if engine.cmd is not None else f"yard bot {engine.bot}"
    wanted = f"bot named {engine.name!r}" + ("" if instance is None else
                                              f" with instance {instance}")
    if engine.bot is not None:
        return await Child.launch(argv, what, expect="connected", stderr_log=stderr_log,
                                  env=env, cwd=engine.cwd, timeout=timeout,
                                  not_ready=lambda: f"no {wanted} connected within "
                                                    f"{timeout:g} s")
    seen: list[BotInfo] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(timeout):
                    admin = await stack.enter_async_context(
                        AdminClient(watch_url or url, admin_token, name="yard-launcher"))
            except TimeoutError:
                raise EngineError(f"cannot watch {url} for engine {engine.name!r}: the "
                                  f"server did not answer within {timeout:g} s") from None

            async def connected() -> bool:
                seen[:] = await admin.list_bots()
                return any(bot.name == engine.name and
                           (instance is None or instance in bot.instances) for bot in seen)

            def missing() -> str:
                return f"no {wanted} connected within {timeout:g} s; {connected_bots(seen)}"

            return await Child.launch(argv, what, ready=connected, stderr_log=stderr_log,
                                      env=env, cwd=engine.cwd, not_ready=missing,
                                      timeout=max(0.0, deadline - time.monotonic()))
    except AdminError as exc:
        raise EngineError(f"cannot watch {url} for engine {engine.name!r}: {exc}") from None


def connected_bots(bots: list[BotInfo]) -> str:
    """What a server's bot list says, for errors: ``"bots that did connect: other
    (instance 1)"`` or ``"no bot connected at all"``."""
    if not bots:
        return "no bot connected at all"
    names = []
    for bot in sorted(bots, key=lambda b: b.name):
        if bot.instances:
            label = "instance" if len(bot.instances) == 1 else "instances"
            names.append(f"{bot.name} ({label} {', '.join(bot.instances)})")
        else:
            names.append(bot.name)
    return f"bots that did connect: {', '.join(names)}"


def join_engine_args(args: list[str]) -> list[str]:
    """Fold the ``key=value`` words following each ``--engine VALUE`` into its value."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        out.append(arg)
        i += 1
        if arg == "--":
            out += args[i:]
            break
        if arg == "--engine" and i < len(args):
            words = [args[i]]
            i += 1
            while i < len(args) and re.match(r"[a-z][a-z_.A-Z0-9]*=", args[i]):
                words.append(args[i])
                i += 1
            # The first word is taken as written (it may hold several quoted words).
            out.append(" ".join([words[0], *map(shlex.quote, words[1:])]))
    return out
