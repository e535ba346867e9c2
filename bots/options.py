"""Bot options: what a bot class accepts, read from its ``__init__``.

A bot declares its options in one place, the keyword parameters of ``__init__``, each with
a type and a default. Help comes from an ``Args:`` (or ``Options:``) section of the
``__init__`` docstring, or from ``Annotated[float, "help"]``; ``Annotated[int, Range(ge=1)]``
declares bounds and ``Literal["a", "b"]`` the allowed values::

    class Greedy(Bot):
        def __init__(self, greed: float = 1.0, depth: Annotated[int, Range(ge=1)] = 2):
            \"\"\"Args:
                greed: how much a closer station is worth
            \"\"\"
            self.greed, self.depth = greed, depth

``seed`` is not an option: :meth:`bots.base.Bot.create` seeds ``self.rng`` whether or not
``__init__`` takes it. The registry (:mod:`bots.registry`) converts ``key=value`` strings
with :meth:`BotOption.convert`; ``yard bots`` lists the options (:meth:`BotOption.to_dict`).

>>> from bots.base import Bot
>>> class Greedy(Bot):
...     def __init__(self, greed: float = 1.0, depth: Annotated[int, Range(ge=1)] = 2):
...         '''Args:
...             greed: how much a closer station is worth
...         '''
...     def choose(self, view, legal):
...         return legal[0]
>>> [(o.name, o.type_name, o.default, o.help) for o in declared_options(Greedy)]
[('greed', 'float', 1.0, 'how much a closer station is worth'), ('depth', 'int', 2, '')]
>>> declared_options(Greedy)[1].convert("greedy", "0")
Traceback (most recent call last):
...
bots.options.BotOptionError: bot 'greedy': option depth=0 is out of range (>= 1)
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal

from game.errors import YardError

__all__ = ["REQUIRED", "BotOption", "BotOptionError", "Range", "declared_options", "jsonable",
           "takes_seed"]


class BotOptionError(YardError):
    """A bot option is unknown, missing, of the wrong type or out of range."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The ``default`` of an option whose ``__init__`` parameter has none: it must be given.
REQUIRED: Any = _Required()

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_NONE = ("none", "null")
_SECTION = re.compile(r"(Args|Arguments|Options|Parameters):\s*$")
_ENTRY = re.compile(r"\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)")


@dataclass(frozen=True)
class Range:
    """Bounds of a numeric option, declared as ``Annotated[int, Range(ge=1, le=6)]``:
    ``ge``/``le`` are inclusive, ``gt``/``lt`` exclusive; ``None`` leaves a side open."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def __contains__(self, value: object) -> bool:
        """Whether ``value`` is within the bounds (anything not a number is)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return True  # not a number: the type check speaks for it
        return not ((self.ge is not None and value < self.ge)
                    or (self.gt is not None and value <= self.gt)
                    or (self.le is not None and value > self.le)
                    or (self.lt is not None and value >= self.lt))

    def __str__(self) -> str:
        """The bounds as an interval, e.g. ``[1, inf)``."""
        low = (f"[{_num(self.ge)}" if self.ge is not None else
               f"({_num(self.gt)}" if self.gt is not None else None)
        high = (f"{_num(self.le)}]" if self.le is not None else
                f"{_num(self.lt)})" if self.lt is not None else None)
        if low and high:
            return f"{low}, {high}"
        if low:
            return f"{'>=' if self.ge is not None else '>'} {low[1:]}"
        if high:
            return f"{'<=' if self.le is not None else '<'} {high[:-1]}"
        return "any"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class BotOption:
    """One declared option: its ``__init__`` parameter's name, type, default and help."""

    name: str
    #: What a ``key=value`` string is converted to: ``bool``, ``int``, ``float``, ``str``
    #: or any class that takes one string (``pathlib.Path``).
    type: type
    default: Any = REQUIRED
    help: str = ""
    #: The allowed values (from ``Literal[...]``), else ``None``.
    choices: tuple[Any, ...] | None = None
    range: Range | None = None
    #: ``True`` for ``X | None``: the value ``none`` (or ``null``) gives ``None``.
    optional: bool = False

    @property
    def required(self) -> bool:
        """True when the parameter has no default: the option must be given."""
        return self.default is REQUIRED

    @property
    def type_name(self) -> str:
        """``int``, ``float``, ``bool``, ``str`` (or the class name), ``| None`` added."""
        return self.type.__name__ + (" | None" if self.optional else "")

    def convert(self, bot: str, value: Any) -> Any:
        """``value`` for ``__init__``: a string converted to :attr:`type` (other values as
        given), then checked against :attr:`choices` and :attr:`range`. Raises
        :class:`BotOptionError` naming ``bot``, the option and what it takes."""
        if isinstance(value, str):
            value = self._parse(bot, value)
        if self.choices is not None and value not in self.choices and not (
                self.optional and value is None):
            allowed = ", ".join(str(c) for c in self.choices)
            raise BotOptionError(f"bot {bot!r}: option {self.name}={value!r} is not one of "
                                 f"{allowed}")
        if self.range is not None and value not in self.range:
            raise BotOptionError(f"bot {bot!r}: option {self.name}={value!r} is out of range "
                                 f"({self.range})")
        return value

    def _parse(self, bot: str, text: str) -> Any:
        if self.optional and text.strip().lower() in _NONE:
            return None
        if self.type is str:
            return text
        try:
            if self.type is bool:
                if text.strip().lower() in _TRUE:
                    return True
                if text.strip().lower() in _FALSE:
                    return False
                raise ValueError(text)
            return self.type(text.strip())
        except Exception:  # a declared class may refuse a string in any way
            takes = "true or false" if self.type is bool else f"a valid {self.type_name}"
            raise BotOptionError(f"bot {bot!r}: option {self.name}={text!r} is not "
                                 f"{takes}") from None

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "type", "default", "help", "required", "choices", "range"}`` as
        ``yard bots --json`` lists it (``default`` is ``null`` for a required option;
        ``choices`` a list or ``null``; ``range`` text such as ``"[0, 1]"`` or ``null``)."""
        return {"name": self.name, "type": self.type_name,
                "default": None if self.required else jsonable(self.default),
                "help": self.help, "required": self.required,
                "choices": None if self.choices is None else [jsonable(c)
                                                              for c in self.choices],
                "range": None if self.range is None else str(self.range)}

    def shown(self) -> tuple[str, str]:
        """``(NAME=DEFAULT, TYPE)`` as the ``yard bots`` table shows them: ``NAME=?`` for a
        required option; the choices (``a|b``) for a type, or the type with its range."""
        default = "?" if self.required else _text(self.default)
        kind = self.type_name
        if self.choices is not None:
            kind = "|".join(str(c) for c in self.choices)
        elif self.range is not None:
            kind += f" {self.range}"
        return f"{self.name}={default}", kind


def jsonable(value: Any) -> Any:
    """``value`` as JSON can hold it: numbers, strings, booleans and ``None`` as they are
    (a float that is not finite as text), anything else as ``str(value)``."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def takes_seed(cls: type) -> bool:
    """True when ``cls.__init__`` has a parameter ``seed`` that can be passed by keyword."""
    try:
        param = inspect.signature(_init(cls)).parameters.get("seed")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in _KEYWORD


_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _init(cls: type) -> Callable[..., Any]:
    init: Callable[..., Any] = cls.__init__  # type: ignore[misc]
    return init


@cache
def declared_options(cls: type) -> tuple[BotOption, ...]:
    """The options ``cls`` declares: the keyword parameters of its ``__init__`` other than
    ``self`` and ``seed``, in order. Type: the annotation (``Annotated``, ``Literal`` and
    ``X | None`` understood), else the default's type, else ``str``; help: ``Annotated``
    text, else the ``Args:``/``Options:`` section of the ``__init__`` (or class)
    docstring."""
    init = _init(cls)
    try:
        params = list(inspect.signature(init).parameters.values())[1:]
    except (TypeError, ValueError):
        return ()
    hints = _hints(init)
    docs = {**_doc_help(cls.__doc__), **_doc_help(init.__doc__)}
    out = []
    for param in params:
        if param.name == "seed" or param.kind not in _KEYWORD:
            continue
        default = REQUIRED if param.default is inspect.Parameter.empty else param.default
        out.append(_option(param.name, hints.get(param.name), default,
                           docs.get(param.name, "")))
    return tuple(out)


def _hints(init: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(init, include_extras=True)
    except Exception:  # an annotation that does not resolve: each on its own, or none
        pass
    out: dict[str, Any] = {}
    for name, hint in getattr(init, "__annotations__", {}).items():
        if isinstance(hint, str):
            try:
                hint = eval(hint, getattr(init, "__globals__", {}))  # as get_type_hints does
            except Exception:
                continue
        out[name] = hint
    return out


def _option(name: str, hint: Any, default: Any, doc: str) -> BotOption:
    help_text, bounds = doc, None
    if typing.get_origin(hint) is Annotated:
        hint, *extras = typing.get_args(hint)
        for extra in extras:
            if isinstance(extra, str):
                help_text = extra
            elif isinstance(extra, Range):
                bounds = extra
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(hint) if m is not type(None)]
        optional = len(members) < len(typing.get_args(hint))
        hint = members[0] if len(members) == 1 else None
    choices = None
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        hint = type(choices[0])
    if not isinstance(hint, type) or hint is object:
        fallback = None if default is REQUIRED or default is None else type(default)
        hint = fallback if fallback in (bool, int, float, str) else str
    optional = optional or default is None
    return BotOption(name, hint, default, " ".join(help_text.split()), choices, bounds,
                     optional)


def _doc_help(doc: str | None) -> dict[str, str]:
    """``name -> help`` from the ``Args:`` / ``Options:`` section of a docstring."""
    lines = (doc or "").expandtabs().splitlines()  # raw: a header may open the docstring
    out: dict[str, str] = {}
    section: int | None = None  # the header's indentation while inside the section
    entry: int | None = None  # the indentation of the entries
    name = ""
    for line in lines:
        indent = len(line) - len(line.lstrip())
        text = line.strip()
        if section is None:
            if _SECTION.fullmatch(text):
                section, entry = indent, None
            continue
        if not text:
            continue
        if indent <= section:
            section = None
            if _SECTION.fullmatch(text):
                section, entry = indent, None
            continue
        found = _ENTRY.fullmatch(text)
        if found and (entry is None or indent <= entry):
            entry, name = indent, found.group(1)
            out[name] = found.group(2)
        elif name:
            out[name] = f"{out[name]} {text}".strip()
    return out
