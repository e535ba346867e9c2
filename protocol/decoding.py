"""The typed decoder: a parsed JSON value checked and built into a typed value in one pass,
with errors that name the field (:class:`~protocol.errors.ProtocolError`, code
``missing_field``, ``extra_field``, ``wrong_type`` or ``bad_value``).

It decodes the messages (:func:`protocol.codec.from_json`) and any other tree of these
types (:func:`decode_value`): ``str``, ``int``, ``float`` (finite; an integer is taken),
``bool``, ``None``, ``Any`` (taken as it is), ``list[T]``, ``dict[str, T]``, unions
(``X | None``), enums (by value), ``datetime`` (ISO 8601 text, at most 64 characters),
dataclasses (JSON objects; fields without a default are required) and
``Annotated[T, ...]`` with the marks :class:`Length`, :class:`Range`, :class:`Check`
(checked once the value is decoded as ``T``) and :class:`Parsed` (the JSON value is text
that it turns into a ``T``).

>>> from dataclasses import dataclass
>>> from typing import Annotated
>>> @dataclass
... class Player:
...     name: Annotated[str, Length(1, 20)]
...     rating: Annotated[int, Range(0)] | None = None
>>> decode_value(list[Player], [{"name": "a", "rating": 3}])
[Player(name='a', rating=3)]
>>> decode_value(list[Player], [{"name": "a", "rating": -1}], "players")
Traceback (most recent call last):
...
protocol.errors.ProtocolError: players[0].rating: must be >= 0, not -1
>>> decode_value(Player, {"name": "a", "new": 1}, strict=False)
Player(name='a', rating=None)
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Annotated, Any, TypeVar

from protocol.errors import ErrorCode, ProtocolError

_T = TypeVar("_T")


class _Mark:
    """Base of the marks ``Annotated`` fields carry."""


@dataclasses.dataclass(frozen=True)
class Length(_Mark):
    """Mark: a string's length in characters (a list's in items) is in ``min..max``
    (``max`` ``None``: no upper bound)."""

    min: int = 0
    max: int | None = None


@dataclasses.dataclass(frozen=True)
class Range(_Mark):
    """Mark: a number is in ``min..max`` (inclusive; ``None``: no bound that side)."""

    min: float | None = None
    max: float | None = None


@dataclasses.dataclass(frozen=True)
class Check(_Mark):
    """Mark: ``test(value)`` holds for the decoded value; else the error says the value
    ``must be <what>``."""

    test: Callable[[Any], bool]
    what: str


@dataclasses.dataclass(frozen=True)
class Parsed(_Mark):
    """Mark: the JSON value is a string that ``parse`` turns into the field's value
    (``parse`` raises ``ValueError`` on bad text); ``what`` names the accepted texts, for
    the error. ``Annotated[int, Parsed(parse_seat, "'mrx', 'd1', ...")]``: a seat number
    written as its name."""

    parse: Callable[[str], Any]
    what: str


def decode_value(tp: type[_T] | Any, data: Any, where: str = "", strict: bool = True) -> _T:
    """``data`` (a parsed JSON value) decoded as ``tp`` (one of the types above).

    ``where`` names ``data`` in errors (``""``: errors start at its fields, ``players[0].bot``).
    ``strict=False`` ignores object keys that the dataclasses do not have (at every depth),
    so a newer writer may add keys. Raises :class:`ProtocolError` naming the first field
    that does not fit.
    """
    value: _T = _load(data, tp, where, strict)
    return value


@cache
def field_types(cls: type) -> dict[str, Any]:
    """Dataclass field name -> resolved type, ``Annotated`` marks kept (ClassVars
    excluded)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


@cache
def required_fields(cls: type) -> frozenset[str]:
    """Fields without a default."""
    missing = dataclasses.MISSING
    return frozenset(f.name for f in dataclasses.fields(cls)
                     if f.default is missing and f.default_factory is missing)


def _at(where: str, problem: str) -> str:
    return f"{where}: {problem}" if where else problem


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def load_object(cls: type, data: dict[str, Any], where: str, strict: bool = True) -> Any:
    """An instance of dataclass ``cls`` from the JSON object ``data`` (see
    :func:`decode_value`)."""
    types_ = field_types(cls)
    if strict:
        extra = sorted(set(data) - set(types_))
        if extra:
            raise ProtocolError(ErrorCode.EXTRA_FIELD,
                                _at(where, f"unexpected field {extra[0]!r:.60}"))
    missing = sorted(required_fields(cls) - set(data))
    if missing:
        raise ProtocolError(ErrorCode.MISSING_FIELD, _at(where, f"missing field {missing[0]!r}"))
    values = {name: _load(data[name], tp, _join(where, name), strict)
              for name, tp in types_.items() if name in data}
    return cls(**values)


def _load(value: Any, tp: Any, where: str, strict: bool) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is not None:
        loader = _GENERIC.get(origin)
        if loader is None:
            raise TypeError(f"the decoder does not know the type {tp}")
        return loader(value, tp, where, strict)
    if isinstance(tp, type):
        if issubclass(tp, Enum):
            return _load_enum(value, tp, where)
        if dataclasses.is_dataclass(tp):
            return load_object(tp, _expect(value, dict, where), where, strict)
        if tp is datetime:
            return _load_datetime(value, where)
    return _load_scalar(value, tp, where)


def _load_list(value: Any, tp: Any, where: str, strict: bool) -> list[Any]:
    (item_tp,) = typing.get_args(tp)
    return [_load(v, item_tp, f"{where}[{i}]", strict)
            for i, v in enumerate(_expect(value, list, where))]


def _load_dict(value: Any, tp: Any, where: str, strict: bool) -> dict[str, Any]:
    _, value_tp = typing.get_args(tp)
    return {k: _load(v, value_tp, _join(where, k), strict)
            for k, v in _expect(value, dict, where).items()}


def _load_union(value: Any, tp: Any, where: str, strict: bool) -> Any:
    options = [t for t in typing.get_args(tp) if t is not type(None)]
    if value is None:
        if len(options) < len(typing.get_args(tp)):
            return None
        raise ProtocolError(ErrorCode.WRONG_TYPE, _at(where, "must not be null"))
    errors: list[ProtocolError] = []
    for option in options:
        try:
            return _load(value, option, where, strict)
        except ProtocolError as exc:
            errors.append(exc)
    mismatched = [e for e in errors if isinstance(e, _Mismatch) and e.where == where]
    if len(errors) > 1 and len(mismatched) == len(errors):
        expected = " or ".join(e.expected for e in mismatched)
        raise _Mismatch(where, expected, value)
    raise next((e for e in errors if e not in mismatched), errors[-1])


def _load_annotated(value: Any, tp: Any, where: str, strict: bool) -> Any:
    base, *marks = typing.get_args(tp)
    parser = next((m for m in marks if isinstance(m, Parsed)), None)
    value = _load(value, base, where, strict) if parser is None else \
        _load_parsed(value, parser, where)
    for mark in marks:
        if isinstance(mark, Length):
            _check_length(value, mark, where)
        elif isinstance(mark, Range):
            _check_range(value, mark, where)
        elif isinstance(mark, Check) and not mark.test(value):
            raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, f"must be {mark.what}"))
    return value


_GENERIC: dict[Any, Callable[[Any, Any, str, bool], Any]] = {
    list: _load_list, dict: _load_dict, types.UnionType: _load_union,
    typing.Union: _load_union, Annotated: _load_annotated,
}


def _load_parsed(value: Any, mark: Parsed, where: str) -> Any:
    text = _expect(value, str, where)
    try:
        return mark.parse(text)
    except ValueError:
        raise ProtocolError(ErrorCode.BAD_VALUE,
                            _at(where, f"must be {mark.what}, not {text!r:.40}")) from None


def _check_length(value: Any, mark: Length, where: str) -> None:
    unit = "characters" if isinstance(value, str) else "items"
    if len(value) < mark.min:
        problem = "must not be empty" if mark.min == 1 else f"needs at least {mark.min} {unit}"
    elif mark.max is not None and len(value) > mark.max:
        problem = f"must have at most {mark.max} {unit}, not {len(value)}"
    else:
        return
    raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, problem))


def _check_range(value: Any, mark: Range, where: str) -> None:
    low, high = mark.min, mark.max
    if (low is None or value >= low) and (high is None or value <= high):
        return
    bounds = f">= {low}" if high is None else f"<= {high}" if low is None else \
        f"in {low}..{high}"
    raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, f"must be {bounds}, not {value}"))


def _load_enum(value: Any, tp: type[Enum], where: str) -> Enum:
    try:
        return tp(_expect(value, str, where))
    except ValueError:
        allowed = ", ".join(str(m.value) for m in tp)
        raise ProtocolError(ErrorCode.BAD_VALUE,
                            _at(where, f"{value!r:.40} is not one of {allowed}")) from None


MAX_TIME_TEXT = 64
"""Longest ISO 8601 text a ``datetime`` is read from."""


def _load_datetime(value: Any, where: str) -> datetime:
    text = _expect(value, str, where)
    try:
        if len(text) <= MAX_TIME_TEXT:
            return datetime.fromisoformat(text)
    except ValueError:
        pass
    raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, f"{text!r:.40} is not an ISO 8601 time"))


def _load_scalar(value: Any, tp: type, where: str) -> Any:
    if tp is float:
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:
                raise ProtocolError(ErrorCode.BAD_VALUE,
                                    _at(where, "number is out of range")) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ProtocolError(ErrorCode.BAD_VALUE,
                                _at(where, f"must be a finite number, not {value}"))
    return _expect(value, tp, where)


_JSON_NAMES: dict[type, str] = {str: "a string", int: "an integer", float: "a number",
                                bool: "a boolean", list: "an array", dict: "an object",
                                type(None): "null"}


class _Mismatch(ProtocolError):
    """A value of the wrong JSON type (``wrong_type``); a union says which types it
    accepts."""

    def __init__(self, where: str, expected: str, value: Any) -> None:
        super().__init__(ErrorCode.WRONG_TYPE,
                         _at(where, f"expected {expected}, got {_json_name(value)}"))
        self.where = where
        self.expected = expected


def _json_name(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _expect(value: Any, tp: type, where: str) -> Any:
    if not isinstance(value, tp) or (tp in (int, float) and isinstance(value, bool)):
        raise _Mismatch(where, _JSON_NAMES.get(tp, tp.__name__), value)
    return value


__all__ = ["Check", "Length", "Parsed", "Range", "decode_value", "field_types",
           "load_object", "required_fields"]
