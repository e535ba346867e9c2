"""Turn ``--bots``, ``--engine`` and ``--bot-option`` into a tournament's players, bot
options and engines.

A player is ``BOT``, a detective team ``a+b``, or ``x/team`` (see
:mod:`tournament.schedule`); each ``BOT`` is a bot spec (:mod:`bots.spec`): a built-in
or installed bot, a class ``file.py:Class`` / ``package.module:Class``, or the name of an
``--engine``, with inline options (``mcts:iterations=200``). ``+`` and ``/`` split players
first, so a class whose path contains ``/`` is registered with
``--engine name=NAME class=path/to/file.py:Class`` and named by NAME.

>>> players, options, engines = resolve_players("mcts:iterations=200,random", [], [])
>>> players, options
(['mcts', 'random'], {'mcts': ['iterations=200']})
"""

from __future__ import annotations

import os

from bots.spec import BotSpec, BotSpecError, parse_spec, split_spec_list
from tournament.engines import Engine, EngineError, engine_table, spec_engine

MAX_NAME = 64
"""Longest bot name a server keeps; longer names must be registered with ``--engine``."""


def resolve_players(bots: str, engines: list[Engine], bot_options: list[BotSpec],
                    cwd: str | None = None
                    ) -> tuple[list[str], dict[str, list[str]], dict[str, Engine]]:
    """``(players, bot_options, engines)``: player specs with bare bot names, ``key=value``
    options per built-in/installed bot, and the engine of every other bot, by name."""
    cwd = cwd or os.getcwd()
    table = engine_table(engines)
    options: dict[str, dict[str, str]] = {}
    used: dict[str, Engine] = {}
    players: list[str] = []
    try:
        items = split_spec_list(bots)
    except BotSpecError as exc:
        raise EngineError(f"--bots: {exc}") from None
    for item in items:
        if ".py:" in item and "/" in item.partition(".py:")[0]:
            raise EngineError(_path_hint(item))
        mrx_part, slash, team = item.partition("/")
        parts = [mrx_part, *team.split("+")] if slash else item.split("+")
        names = []
        for part in parts:
            try:
                spec = parse_spec(part)
            except BotSpecError as exc:
                raise EngineError(f"--bots {item!r}: {exc}") from None
            names.append(_register(spec, item, table, used, options, cwd))
        players.append(f"{names[0]}/{'+'.join(names[1:])}" if slash else "+".join(names))
    for spec in bot_options:
        _register_option(spec, table, used, options)
    unused = sorted(set(table) - set(used))
    if unused:
        raise EngineError(f"--engine {', '.join(unused)}: not used in --bots")
    return players, {ref: [f"{k}={v}" for k, v in opts.items()]
                     for ref, opts in options.items() if opts}, used


def _path_hint(item: str) -> str:
    return (f"--bots {item!r}: a path with '/' cannot appear in a player spec ('/' means "
            f"MRX_BOT/TEAM); register it: --engine name=NAME class=PATH.py:Class, then use "
            f"NAME")


def _register(spec: BotSpec, item: str, table: dict[str, Engine], used: dict[str, Engine],
              options: dict[str, dict[str, str]], cwd: str) -> str:
    if spec.ref in table:
        if spec.options:
            raise EngineError(f"--bots {item!r}: give options of engine {spec.ref!r} in its "
                              f"--engine definition (option.KEY=VALUE)")
        used[spec.ref] = table[spec.ref]
        return spec.ref
    if spec.is_class:
        if len(spec.ref) > MAX_NAME:
            raise EngineError(f"--bots {item!r}: name longer than {MAX_NAME} characters; "
                              f"register it with --engine name=NAME class={spec.ref}")
        engine = used.get(spec.ref)
        merged = (engine.spec or BotSpec(spec.ref)).with_options(spec.options) if engine \
            else spec
        used[spec.ref] = spec_engine(BotSpec(spec.ref, merged.options), spec.ref, cwd)
        return spec.ref
    options.setdefault(spec.ref, {}).update(spec.options)
    return spec.ref


def _register_option(spec: BotSpec, table: dict[str, Engine], used: dict[str, Engine],
                     options: dict[str, dict[str, str]]) -> None:
    engine = used.get(spec.ref)
    if engine is not None:
        if engine.spec is None:
            raise EngineError(f"--bot-option {spec}: engine {spec.ref!r} is a command; pass "
                              f"its options in cmd=")
        used[spec.ref] = Engine(engine.name, bot=str(engine.spec.with_options(spec.options)),
                                rules=engine.rules, cwd=engine.cwd)
        return
    if spec.ref not in options:
        raise EngineError(f"--bot-option {spec}: bot {spec.ref!r} is not in --bots")
    options[spec.ref].update(spec.options)
