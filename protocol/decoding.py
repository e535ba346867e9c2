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
from collections.abc import Callable, Hashable
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Annotated, Any, NoReturn, TypeVar

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
    value: _T = _loader(typing.cast(Hashable, tp))(data, where, strict)
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


Loader = Callable[[Any, str, bool], Any]
"""A compiled decoder of one type: ``(value, where, strict) -> decoded value``."""


def load_object(cls: type, data: dict[str, Any], where: str, strict: bool = True) -> Any:
    """An instance of dataclass ``cls`` from the JSON object ``data`` (see
    :func:`decode_value`)."""
    names, required, loaders = _plan(cls)
    if strict and not data.keys() <= names:
        extra = sorted(data.keys() - names)[0]
        raise ProtocolError(ErrorCode.EXTRA_FIELD, _at(where, f"unexpected field {extra!r:.60}"))
    if not required <= data.keys():
        missing = sorted(required - data.keys())[0]
        raise ProtocolError(ErrorCode.MISSING_FIELD, _at(where, f"missing field {missing!r}"))
    prefix = f"{where}." if where else ""
    values = {name: loaders[name](value, prefix + name, strict)
              for name, value in data.items() if name in loaders}
    return cls(**values)


@cache
def _plan(cls: type) -> tuple[frozenset[str], frozenset[str], dict[str, Loader]]:
    """The field names of dataclass ``cls``, the required ones and each field's loader
    (compiled on the first decode of a ``cls``, so a type may refer to itself)."""
    types_ = field_types(cls)
    return (frozenset(types_), required_fields(cls),
            {name: _loader(tp) for name, tp in types_.items()})


@cache
def _loader(tp: Any) -> Loader:
    """The compiled decoder of ``tp`` (memoised: each value then costs no type
    inspection)."""
    if tp is Any:
        return lambda value, where, strict: value
    origin = typing.get_origin(tp)
    if origin is not None:
        compile_ = _GENERIC.get(origin)
        if compile_ is None:
            raise TypeError(f"the decoder does not know the type {tp}")
        return compile_(tp)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return lambda value, where, strict: _load_enum(value, tp, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return lambda value, where, strict: load_object(
            tp, value if type(value) is dict else _expect(value, dict, where), where, strict)
    if tp is datetime:
        return lambda value, where, strict: _load_datetime(value, where)
    if tp is float:
        return lambda value, where, strict: _load_float(value, where)
    # The common case by identity of type (no bool passes for an int), the rest by _expect.
    return lambda value, where, strict: value if type(value) is tp else _expect(value, tp, where)


def _list_loader(tp: Any) -> Loader:
    item = _loader(typing.get_args(tp)[0])
    return lambda value, where, strict: [
        item(v, f"{where}[{i}]", strict) for i, v in enumerate(_expect(value, list, where))]


def _dict_loader(tp: Any) -> Loader:
    item = _loader(typing.get_args(tp)[1])
    return lambda value, where, strict: {
        k: item(v, _join(where, k), strict) for k, v in _expect(value, dict, where).items()}


def _union_loader(tp: Any) -> Loader:
    options = [_loader(t) for t in typing.get_args(tp) if t is not type(None)]
    nullable = len(options) < len(typing.get_args(tp))
    if nullable and len(options) == 1:  # X | None
        (option,) = options
        return lambda value, where, strict: None if value is None else \
            option(value, where, strict)

    def load(value: Any, where: str, strict: bool) -> Any:
        if value is None:
            if nullable:
                return None
            raise ProtocolError(ErrorCode.WRONG_TYPE, _at(where, "must not be null"))
        errors: list[ProtocolError] = []
        for option in options:
            try:
                return option(value, where, strict)
            except ProtocolError as exc:
                errors.append(exc)
        raise _union_error(errors, value, where)

    return load


def _union_error(errors: list[ProtocolError], value: Any, where: str) -> ProtocolError:
    """Why no option of a union took ``value``: the types they take when it has none of
    them, else the error of the option whose type it has."""
    mismatched = [e for e in errors if isinstance(e, _Mismatch) and e.where == where]
    if len(errors) > 1 and len(mismatched) == len(errors):
        return _Mismatch(where, " or ".join(e.expected for e in mismatched), value)
    return next((e for e in errors if e not in mismatched), errors[-1])


def _annotated_loader(tp: Any) -> Loader:
    base, *marks = typing.get_args(tp)
    parser = next((m for m in marks if isinstance(m, Parsed)), None)
    load = _loader(base) if parser is None else \
        (lambda value, where, strict: _load_parsed(value, parser, where))
    checks = [_checker(m) for m in marks if isinstance(m, Length | Range | Check)]
    if not checks:
        return load

    def load_checked(value: Any, where: str, strict: bool) -> Any:
        value = load(value, where, strict)
        for check in checks:
            if not check(value):
                _refuse(value, marks, where)
        return value

    return load_checked


_GENERIC: dict[Any, Callable[[Any], Loader]] = {
    list: _list_loader, dict: _dict_loader, types.UnionType: _union_loader,
    typing.Union: _union_loader, Annotated: _annotated_loader,
}


def _checker(mark: Length | Range | Check) -> Callable[[Any], bool]:
    """Whether a decoded value passes ``mark``."""
    if isinstance(mark, Check):
        return mark.test
    if isinstance(mark, Length):
        shortest, longest = mark.min, mark.max
        return lambda value: shortest <= len(value) and (longest is None or len(value) <= longest)
    low, high = mark.min, mark.max
    return lambda value: (low is None or value >= low) and (high is None or value <= high)


def _refuse(value: Any, marks: list[Any], where: str) -> NoReturn:
    """Raise the ``bad_value`` error of the first of ``marks`` that ``value`` fails."""
    for mark in marks:
        if isinstance(mark, Length):
            _check_length(value, mark, where)
        elif isinstance(mark, Range):
            _check_range(value, mark, where)
        elif isinstance(mark, Check) and not mark.test(value):
            raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, f"must be {mark.what}"))
    raise AssertionError(f"{value!r} passes {marks}")


def _load_parsed(value: Any, mark: Parsed, where: str) -> Any:
    text = value if type(value) is str else _expect(value, str, where)
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


def _load_float(value: Any, where: str) -> float:
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ProtocolError(ErrorCode.BAD_VALUE, _at(where, "number is out of range")) \
                from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ProtocolError(ErrorCode.BAD_VALUE,
                            _at(where, f"must be a finite number, not {value}"))
    result: float = _expect(value, float, where)
    return result


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
