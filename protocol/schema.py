"""JSON Schemas (draft 2020-12) for every message, generated from the message dataclasses.

The checked-in files in ``protocol/schema/*.json`` are the output of :func:`write_schemas`
(``python -m protocol.schema``); a test keeps them equal to the generated ones, so the
schema cannot drift from the code.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

from protocol.decoding import field_types, required_fields
from protocol.messages import MESSAGE_TYPES

SCHEMA_DIR = Path(__file__).parent / "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def message_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of message type ``kind``."""
    cls = MESSAGE_TYPES[kind]
    schema = _object_schema(cls)
    schema["properties"] = {"type": {"const": kind}, **schema["properties"]}
    schema["required"] = ["type", *schema["required"]]
    doc = (cls.__doc__ or "").strip().splitlines()
    return {"$schema": DRAFT, "$id": f"yard:protocol/{kind}", "title": kind,
            "description": " ".join(line.strip() for line in doc), **schema}


HTTP_SCHEMA_DIR = SCHEMA_DIR / "http"
"""Hand-written JSON Schemas of the HTTP API's answers that clients read (``yard standing``):
``ladder.json`` (``/api/ladder``), ``ladder_bot.json`` (``/api/ladder/RULES/bots/NAME``)."""


def load_http_schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``protocol/schema/http/NAME.json`` of an HTTP API answer."""
    loaded: dict[str, Any] = json.loads((HTTP_SCHEMA_DIR / f"{name}.json").read_text())
    return loaded


def load_schema(kind: str) -> dict[str, Any]:
    """The checked-in schema file of ``kind``."""
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / f"{kind}.json").read_text())
    return loaded


def write_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """(Re)write one ``<type>.json`` per message type; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in sorted(MESSAGE_TYPES):
        path = directory / f"{kind}.json"
        path.write_text(json.dumps(message_schema(kind), indent=2) + "\n")
        paths.append(path)
    return paths


def _object_schema(cls: type) -> dict[str, Any]:
    props = {name: _type_schema(tp) for name, tp in field_types(cls).items()}
    required = [name for name in props if name in required_fields(cls)]
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def _type_schema(tp: Any) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if tp is Any:
        return {}
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_type_schema(t) for t in typing.get_args(tp)]}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(tp)[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(typing.get_args(tp)[1])}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return {"enum": [m.value for m in tp]}
    if dataclasses.is_dataclass(tp):
        return _object_schema(tp)  # type: ignore[arg-type]
    return {"type": _SCALARS[tp]}


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean",
            type(None): "null"}


if __name__ == "__main__":
    for written in write_schemas():
        print(written)
