"""Options and parameter types shared by the ``yard`` commands, each defined once.

The libraries take plain values (:class:`~bots.spec.BotSpec`, :class:`~tournament.engines.Engine`,
URLs); this module turns command-line text into them. A grammar error is the library's own
:class:`~game.errors.YardError`, prefixed with the option it came from, so it prints as one
``error:`` line with exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import click

from bots.spec import BotSpec, BotSpecError, parse_option_pairs, parse_spec, parse_spec_list
from db.defaults import DEFAULT_DB_URL
from game.errors import YardError

if TYPE_CHECKING:
    from tournament.engines import Engine

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class ParsedParam(click.ParamType, Generic[T]):  # type: ignore[type-arg]
    """A click parameter whose text a library function parses into a value of type ``T``;
    a value that is already parsed (a default, or a second conversion) passes through."""

    def __init__(self, name: str, parse: Callable[[str], T],
                 parsed: type | tuple[type, ...] | Callable[[], type]) -> None:
        """A type named ``name`` that ``parse`` converts; ``parsed`` is what it yields."""
        self.name = name
        self.parse = parse
        self._parsed = parsed

    @property
    def parsed(self) -> type | tuple[type, ...]:
        """The type(s) of a parsed value (given as a function: looked up on first use)."""
        if isinstance(self._parsed, (type, tuple)):
            return self._parsed
        self._parsed = self._parsed()
        return self._parsed

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> T:
        """``value`` parsed, or as it is when already parsed."""
        if isinstance(value, self.parsed):
            return cast(T, value)
        try:
            return self.parse(str(value))
        except YardError as exc:
            opts = getattr(param, "opts", None)
            raise type(exc)(f"{opts[0]}: {exc}" if opts else str(exc)) from None


def _spec_with_options(text: str) -> BotSpec:
    spec = parse_spec(text)
    if not spec.options:
        raise BotSpecError(f"{text!r} must look like BOT:key=value")
    return spec


def _option_pair(text: str) -> tuple[str, str]:
    ((key, value),) = parse_option_pairs([text]).items()
    return key, value


BOT_SPEC: ParsedParam[BotSpec] = ParsedParam("bot_spec", parse_spec, BotSpec)
"""``REF[:key=value...]``: one bot (see README, "Bot specs")."""
BOT_OPTION: ParsedParam[BotSpec] = ParsedParam("bot_spec", _spec_with_options, BotSpec)
"""``BOT:key=value[,key=value]``: options for one bot (``--option``, ``--bot-option``)."""
BOT_SPEC_LIST: ParsedParam[list[BotSpec]] = ParsedParam("bot_spec_list", parse_spec_list, list)
"""A comma-separated list of bot specs."""
OPTION_PAIR: ParsedParam[tuple[str, str]] = ParsedParam("key=value", _option_pair, tuple)
"""One ``key=value`` option as a ``(key, value)`` pair."""
# tournament.engines (asyncio, the admin client) is imported when an --engine is given:
# the commands that take none (``yard bot``, ``yard bots``) start without it.


def _parse_engine(text: str) -> Engine:
    from tournament.engines import parse_engine

    return parse_engine(text)


def _engine_type() -> type:
    from tournament.engines import Engine

    return Engine


def _join_engine_args(args: list[str]) -> list[str]:
    if "--engine" not in args:  # the only form join_engine_args folds
        return args
    from tournament.engines import join_engine_args

    return join_engine_args(args)


ENGINE: ParsedParam[Engine] = ParsedParam("engine", _parse_engine, _engine_type)
"""One ``--engine`` definition (see :mod:`tournament.engines`)."""

ENGINE_HELP = ("A bot to launch, as key=value words: name=NAME and cmd=\"COMMAND\" (any "
               "language; {url}, {name} and {instance} are filled in, and $YARD_URL, "
               "$YARD_BOT_NAME, $YARD_BOT_INSTANCE set) or class=file.py:Class / "
               "bot=SPEC; optional roles=mrx,detectives (commands), rules=R,... and "
               "option.KEY=VALUE. A command must connect as NAME and announce its instance "
               "label in hello.instance (pass {instance} on, or read $YARD_BOT_INSTANCE: "
               "the SDK and examples/js/bot.js do), else the launcher waits for it in "
               "vain. Repeatable; NAME is then usable as a bot.")


class EngineCommand(click.Command):
    """A click command whose ``--engine`` takes the ``key=value`` words after it, so
    ``--engine name=x cmd="python b.py"`` works without quoting the whole definition."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Join ``--engine`` values split across arguments, then parse."""
        return super().parse_args(ctx, _join_engine_args(args))


def engine_option(func: F) -> F:
    """The shared repeatable ``--engine KEY=VALUE...`` option."""
    return click.option("--engine", "engines", multiple=True, type=ENGINE,
                        metavar="KEY=VALUE...", help=ENGINE_HELP)(func)


def db_option(func: F) -> F:
    """The shared ``--db URL`` option (``$YARD_DB``, default ``sqlite:///yard.db``)."""
    option = click.option("--db", "db_url", envvar="YARD_DB", default=DEFAULT_DB_URL,
                          show_default=True, metavar="URL",
                          help="SQLAlchemy database URL (env YARD_DB).")
    return option(func)


def json_option(help: str = "Print as JSON.") -> Callable[[F], F]:
    """The shared ``--json`` flag (parameter ``as_json``)."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def rules_option(dest: str = "rules", default: str | None = "classic", required: bool = False,
                 help: str = "Ruleset name or .toml file.") -> Callable[[F], F]:
    """The shared ``--rules`` option of commands that play games."""
    return click.option("--rules", dest, default=None if required else default,
                        required=required, show_default=default is not None and not required,
                        help=help)


def rules_filter_option(func: F) -> F:
    """``--rules R`` of commands that read stored games: only games of that ruleset."""
    return click.option("--rules", "ruleset", default=None, metavar="R",
                        help="Only games of this ruleset (default: every ruleset).")(func)


def tournament_filter_option(func: F) -> F:
    """``--tournament ID`` of commands that read stored games: only that tournament's."""
    return click.option("--tournament", "tournament_id", default=None, metavar="ID",
                        help="Only games of this tournament.")(func)


def selection_options(func: F) -> F:
    """``--db``, ``--rules`` and ``--tournament``: which stored games a command reads."""
    return db_option(rules_filter_option(tournament_filter_option(func)))


CLUSTER_HELP = ("Play on a Ray cluster: auto (the cluster `ray start` joined), "
                "ray://HOST:PORT, or local[:N] (a local Ray instance with N CPUs). Each "
                "worker runs its own server and bots; games are claimed from the shared "
                "database with a lease (PostgreSQL when workers are on other machines). "
                "--concurrency is then the number of workers. Needs the cluster extra.")


def cluster_option(help: str = CLUSTER_HELP) -> Callable[[F], F]:
    """The shared ``--cluster ADDRESS`` option (parameter ``cluster_text``)."""
    return click.option("--cluster", "cluster_text", metavar="ADDRESS", default=None,
                        help=help)


def log_option(func: F) -> F:
    """``--log FILE`` for the output of the processes a command starts."""
    return click.option(
        "--log", "child_log", type=click.Path(dir_okay=False, path_type=Path),
        help="File for the output of the local server and bot processes (appended; "
        "default: yard-tournament-ID.log in the temp directory).")(func)


def admin_token_options(func: F) -> F:
    """``--admin-token TOKEN`` (``$YARD_ADMIN_TOKEN``) and ``--admin-token-file PATH``
    of commands that connect to a running server as admin (``yard match --server``,
    ``yard tournament run/resume --server``); without either, a server on this machine's
    default token file is read (:func:`server.auth.client_admin_token`)."""
    token = click.option("--admin-token", envvar="YARD_ADMIN_TOKEN",
                         help="Admin token of that server (env YARD_ADMIN_TOKEN; default: "
                         "read from --admin-token-file).")
    path = click.option("--admin-token-file", type=click.Path(dir_okay=False),
                        help="File holding the server's admin token (default for a server "
                        "on this machine: the file `yard serve` creates, "
                        "$XDG_STATE_HOME/yard/admin-token).")
    return token(path(func))
