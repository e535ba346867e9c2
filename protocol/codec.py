r"""The one JSON codec: :func:`encode` a message to text, :func:`decode` text to a message.

Frames are written and the commonest ones read by orjson when it is installed (the full
install; the slim client ``yard-client`` has it as an extra), else by the standard
library: the same JSON values either way (:data:`HAVE_ORJSON`).

:func:`decode` rejects oversized input, malformed JSON, unknown types, missing or extra
fields and wrong field types with a :class:`~protocol.errors.ProtocolError` whose code says
which, and whose message names the field.

>>> decode('{"type": "ping"}')
Ping(nonce=None)
>>> decode('{"type": "ping", "extra": 1}')
Traceback (most recent call last):
...
protocol.errors.ProtocolError: ping: unexpected field 'extra'
>>> decode('{"type": "hello", "protocol": 1, "name": "x\\udfff"}')  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
protocol.errors.ProtocolError: message.name: a string holds a lone surrogate (not valid ...
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Callable
from enum import Enum
from typing import Any

from protocol.decoding import load_object
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import EFFORT_KEYS, MESSAGE_TYPES, Effort, Message, MoveMsg

try:
    import orjson
except ImportError:  # the slim client without its [fast] extra: the standard library
    HAVE_ORJSON = False
else:
    HAVE_ORJSON = True

DEFAULT_MAX_SIZE = 64 * 1024
"""Largest frame (in characters) :func:`decode` accepts unless told otherwise."""


def encode(msg: Message) -> str:
    """The compact JSON text of ``msg`` (``type`` first)."""
    return encode_bytes(msg).decode("utf-8")


def _encode_orjson(msg: Message) -> bytes:
    """:func:`encode` as UTF-8 bytes, built by orjson in one pass (what the server sends).

    The same JSON value as ``json.dumps(to_json(msg))``; the text differs only where JSON
    allows (non-ASCII characters are not escaped, floats such as ``1e+16`` are written
    ``1e16``). Values orjson cannot write (integers beyond 64 bits, lone surrogates) fall
    back to the standard library, so anything :func:`to_json` accepts encodes.

    orjson writes a message dataclass natively (its fields in order, nested dataclasses
    and enums included); the ``type`` member goes in front of them.
    """
    prefix = _TYPE_PREFIX.get(type(msg))
    if prefix is None:
        prefix = _type_prefix(type(msg))
    if _OMITTED.get(type(msg)):  # hello, welcome: rare, so the dict path is fine
        return _encode_dict(msg)
    try:
        # Without OPT_NON_STR_KEYS orjson is a third faster on a your_turn, and messages
        # have string keys: a dict with other keys (a client-made one) takes the option.
        body = orjson.dumps(msg)
    except TypeError:  # orjson.JSONEncodeError
        try:
            body = orjson.dumps(msg, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return _encode_stdlib(msg).encode("utf-8", "surrogatepass")
    if len(body) == 2:  # no fields: b"{}"
        return prefix[:-1] + b"}"
    return prefix + body[1:]


def _encode_json(msg: Message) -> bytes:
    """:func:`encode` as UTF-8 bytes by the standard library (no orjson installed)."""
    if type(msg) not in _TYPE_PREFIX:
        _type_prefix(type(msg))  # refuses what is no message
    return _encode_stdlib(msg).encode("utf-8", "surrogatepass")


encode_bytes = _encode_orjson if HAVE_ORJSON else _encode_json
"""``encode_bytes(msg)``: :func:`encode` as UTF-8 bytes (orjson's when installed)."""


_TYPE_PREFIX: dict[type, bytes] = {}
#: Message class -> its fields marked ``OMIT_DEFAULT``, with their defaults (filled in
#: with the type prefix).
_OMITTED: dict[type, tuple[tuple[str, Any], ...]] = {}


def _type_prefix(cls: type) -> bytes:
    """``{"type":"<TYPE>",`` for message class ``cls`` (memoised)."""
    kind = getattr(cls, "TYPE", None)
    if not (dataclasses.is_dataclass(cls) and isinstance(kind, str)):
        raise TypeError(f"{cls.__name__} is not a message class")
    _OMITTED[cls] = _omitted_fields(cls)
    prefix = _TYPE_PREFIX[cls] = b'{"type":' + json.dumps(kind).encode() + b","
    return prefix


def _omitted_fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """The fields of ``cls`` left out of a frame while they hold their default
    (:data:`protocol.messages.OMIT_DEFAULT`), with those defaults."""
    return tuple((f.name, f.default) for f in dataclasses.fields(cls)
                 if f.metadata.get("omit_default"))


def _encode_dict(msg: Message) -> bytes:
    """:func:`encode_bytes` through :func:`to_json` (a message with fields to leave out)."""
    data = to_json(msg)
    if HAVE_ORJSON:
        with contextlib.suppress(TypeError):  # orjson.JSONEncodeError: the stdlib writes it
            return orjson.dumps(data)
    return json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _encode_stdlib(msg: Message) -> str:
    """The reference encoding (the standard library's JSON of :func:`to_json`)."""
    return json.dumps(to_json(msg), separators=(",", ":"))


def to_json(msg: Message) -> dict[str, Any]:
    """``msg`` as a JSON-ready dict with its ``type``."""
    body = _dump(msg)
    assert isinstance(body, dict)
    cls = type(msg)
    omitted = _OMITTED[cls] if cls in _OMITTED else _omitted_fields(cls)
    for name, default in omitted:
        if body.get(name) == default:
            del body[name]
    return {"type": msg.TYPE, **body}


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The dataclass fields of ``cls`` in order (``None`` for a class that is none)."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        names = (tuple(f.name for f in dataclasses.fields(cls))
                 if dataclasses.is_dataclass(cls) else None)
        _FIELD_NAMES[cls] = names
        return names


def decode(text: str | bytes, max_size: int = DEFAULT_MAX_SIZE, strict: bool = True
           ) -> Message:
    """Parse and validate one frame. ``strict=False`` (clients) ignores unknown fields, so
    a newer server may add fields without breaking older bots."""
    if len(text) > max_size:
        raise ProtocolError(ErrorCode.TOO_LARGE,
                            f"frame of {len(text)} bytes exceeds the limit of {max_size}")
    if strict and HAVE_ORJSON:
        move = _fast_move(text)
        if move is not None:
            return move
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(ErrorCode.BAD_JSON, f"frame is not valid JSON: {exc}") from None
    try:
        if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("latin-1")):
            _check_unicode(data, "message")
        return from_json(data, strict)
    except ProtocolError as exc:
        exc.ref = _ref_of(data)
        raise


def _ref_of(data: Any) -> str | None:
    """What a refused message is about, for its ``error.ref``: its ``game`` when that is
    a short string, else its ``type`` when that is one."""
    if not isinstance(data, dict):
        return None
    for key in ("game", "type"):
        value = data.get(key)
        if isinstance(value, str) and 0 < len(value) <= 64 and value.isprintable():
            return value
    return None


_MOVE_KEYS = frozenset(("type", "game", "turn", "move", "seat", "effort"))
_EFFORT_KEYS = frozenset(EFFORT_KEYS)


def _fast_move(text: str | bytes) -> MoveMsg | None:
    """A well-formed ``move`` message parsed by orjson without the generic validator, or
    ``None`` for anything else (the generic path then decides, with its error texts).

    Only plain cases are taken: orjson refuses what the standard library refuses here
    (lone surrogates, NaN) and reads integers past 64 bits as floats, which this refuses,
    so every frame it accepts decodes to the same message either way.
    """
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(data) is not dict or data.get("type") != "move" or not data.keys() <= _MOVE_KEYS:
        return None
    game, turn, move = data.get("game"), data.get("turn"), data.get("move")
    seat, effort = data.get("seat"), data.get("effort")
    if type(game) is not str or type(turn) is not int or type(move) is not str or not (
            seat is None or type(seat) is str):
        return None
    if effort is not None:
        if type(effort) is not dict or not effort.keys() <= _EFFORT_KEYS or not all(
                v is None or type(v) is int for v in effort.values()):
            return None
        effort = Effort(**effort)  # checks the ranges (ProtocolError bad_value)
    return MoveMsg(game, turn, move, seat, effort)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate (D800-DFFF): JSON can spell a lone surrogate,
which no UTF-8 text (a database, a log file) can hold. Only frames with one are searched
string by string."""


def _check_unicode(value: Any, where: str) -> None:
    """Raise ``bad_value`` if a string anywhere in ``value`` (keys included) holds a lone
    surrogate (a valid pair is decoded by :func:`json.loads` into one character)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            strings = [item]
        elif isinstance(item, dict):
            strings = list(item)
            stack += [(v, f"{path}.{k}"[:80]) for k, v in item.items()]
        elif isinstance(item, list):
            strings = []
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(item)]
        else:
            continue
        for text in strings:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ProtocolError(ErrorCode.BAD_VALUE, f"{path}: a string holds a lone "
                                    "surrogate (not valid Unicode text)") from None


def from_json(data: Any, strict: bool = True) -> Message:
    """Validate a parsed JSON value as a message (``strict``: see :func:`decode`)."""
    if not isinstance(data, dict):
        raise ProtocolError(ErrorCode.WRONG_TYPE, "a message must be a JSON object")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(ErrorCode.MISSING_FIELD, "message has no string 'type' field")
    cls = MESSAGE_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}")
    body = {k: v for k, v in data.items() if k != "type"}
    message: Message = load_object(cls, body, kind, strict)
    return message


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _loads_json(text: str | bytes) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


loads: Callable[[str | bytes], Any] = orjson.loads if HAVE_ORJSON else _loads_json
"""Parse JSON text (orjson's parser when installed); raises :class:`ValueError` on bad
JSON. For fast paths that then check what they read: :func:`decode` is the validator."""


_PLAIN = (str, int, float, bool, type(None), dict)


def _dump(value: Any) -> Any:
    # Dicts in messages (views, rulesets, players) are JSON-ready already: no recursion,
    # which keeps encoding big views cheap.
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, list):
        if value and isinstance(value[0], Enum):  # hello.roles
            return [v.value for v in value]
        return [_dump(v) for v in value] if value and _is_instance(value[0]) else value
    if _is_instance(value):
        return {name: _dump(getattr(value, name)) for name in _field_names(type(value)) or ()}
    return value


def _is_instance(value: Any) -> bool:
    return not isinstance(value, type) and _field_names(type(value)) is not None
