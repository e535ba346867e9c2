"""Bot specs: the one grammar every command uses to name a bot and its options.

A *bot spec* is ``REF[:OPTIONS]``:

- ``REF`` is a built-in bot (``mcts``), a bot installed under the ``yard.bots`` entry-point
  group (``yard bots`` lists both), a Python class as ``path/to/file.py:Class`` or
  ``package.module:Class``, or (where a command takes ``--engine``) an engine's name;
- ``OPTIONS`` are ``key=value`` pairs separated by ``,`` or ``:`` (both spellings in use
  before this grammar existed still work): ``mcts:iterations=200,c=0.5``,
  ``alphabeta:depth=2:time=0``, ``mybot.py:Closer:depth=3``.

A value may itself contain ``,`` or ``:`` (``weights=/tmp/a:b.npz``): a piece without ``=``
continues the value before it. A comma-separated *list* of specs (``--detectives``,
``--opponents``) splits the same way: a piece that starts with ``key=`` continues the
options of the spec before it, so ``mcts:iterations=200,c=0.5,random`` is two specs.

This module is pure (no bot is imported): the tournament runner and the server side use it
too. :mod:`bots.registry` turns a spec into a bot.

>>> spec = parse_spec("mcts:iterations=200,c=0.5")
>>> spec.ref, spec.option_dict()
('mcts', {'iterations': '200', 'c': '0.5'})
>>> str(parse_spec("alphabeta:depth=2:time=0"))
'alphabeta:depth=2,time=0'
>>> parse_spec("examples/closer_bot.py:Closer").is_class
True
>>> [str(s) for s in parse_spec_list("mcts:iterations=200,c=0.5,random")]
['mcts:iterations=200,c=0.5', 'random']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from game.errors import YardError

__all__ = ["BotSpec", "BotSpecError", "merge_options", "parse_option_pairs", "parse_spec",
           "parse_spec_list", "split_spec_list"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_SPLIT = re.compile(r"([,:])")


class BotSpecError(YardError):
    """A bot spec or a ``key=value`` option does not follow the grammar."""


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec: what to run (``ref``) and its options (string values, in order)."""

    ref: str
    options: tuple[tuple[str, str], ...] = field(default=())

    @property
    def is_class(self) -> bool:
        """True for ``file.py:Class`` and ``package.module:Class`` references."""
        return ":" in self.ref

    def option_dict(self) -> dict[str, str]:
        """Options as a dict (a later duplicate key wins)."""
        return dict(self.options)

    def with_options(self, options: Mapping[str, str] | Iterable[tuple[str, str]]
                     ) -> BotSpec:
        """This spec with ``options`` added (overriding keys it already has)."""
        pairs = options.items() if isinstance(options, Mapping) else options
        merged = {**self.option_dict(), **dict(pairs)}
        return BotSpec(self.ref, tuple(merged.items()))

    def option_strings(self) -> list[str]:
        """``["key=value", ...]``: the form ``yard bot --option`` takes."""
        return [f"{k}={v}" for k, v in self.options]

    def __str__(self) -> str:
        """The spec as written on the command line: ``ref`` or ``ref:key=value,...``."""
        if not self.options:
            return self.ref
        return f"{self.ref}:{','.join(self.option_strings())}"


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """``["c=2.0", "iterations=500"]`` -> ``{"c": "2.0", "iterations": "500"}``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise BotSpecError(f"bot option {pair!r} must look like key=value")
        out[key] = value.strip()
    return out


def parse_spec(text: str) -> BotSpec:
    """Parse ``REF[:key=value[,key=value...]]`` (``:`` also separates options)."""
    text = text.strip()
    pieces = _SPLIT.split(text)  # [piece, sep, piece, sep, ...]
    ref = pieces[0].strip()
    rest = pieces[1:]
    if rest and rest[0] == ":" and len(rest) > 1 and "=" not in rest[1]:
        # module:Class or file.py:Class
        ref = f"{ref}:{rest[1].strip()}"
        rest = rest[2:]
    _check_ref(ref, text)
    options: list[list[str]] = []
    for i in range(0, len(rest), 2):
        sep, piece = rest[i], rest[i + 1]
        if "=" in piece and _KEY.fullmatch(piece.partition("=")[0].strip()):
            options.append([piece])
        elif options:
            options[-1][0] += sep + piece  # a value containing , or :
        else:
            raise BotSpecError(f"bot spec {text!r}: {piece!r} is not key=value "
                               f"(expected NAME[:key=value,...])")
    return BotSpec(ref, tuple(parse_option_pairs(o[0] for o in options).items()))


def _check_ref(ref: str, text: str) -> None:
    if not ref:
        raise BotSpecError(f"bot spec {text!r}: empty bot name")
    if ":" in ref:
        target, _, attr = ref.rpartition(":")
        if not target or not attr.isidentifier():
            raise BotSpecError(f"bot spec {text!r}: a class is written file.py:Class or "
                               f"package.module:Class")
        return
    if not _NAME.fullmatch(ref):
        raise BotSpecError(f"bot spec {text!r}: {ref!r} is not a bot name (letters, digits, "
                           f"'_', '-', '.')")


def parse_spec_list(text: str) -> list[BotSpec]:
    """A comma-separated list of specs; ``key=value`` pieces continue the spec before."""
    return [parse_spec(item) for item in split_spec_list(text)]


def split_spec_list(text: str) -> list[str]:
    """The spec texts of a comma-separated list, as written (see :func:`parse_spec_list`)."""
    items: list[str] = []
    for piece in text.split(","):
        head = piece.partition("=")[0].strip()
        if "=" in piece and ":" not in head and items:
            items[-1] += "," + piece
        elif piece.strip():
            items.append(piece)
        else:
            raise BotSpecError(f"bot list {text!r}: empty bot name")
    return [item.strip() for item in items]


def merge_options(specs: Iterable[BotSpec]) -> dict[str, dict[str, str]]:
    """``--option BOT:key=value`` flags (as specs) grouped by bot: ref -> options."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        out.setdefault(spec.ref, {}).update(spec.options)
    return out
