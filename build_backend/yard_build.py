"""setuptools' build backend, plus mypy (for mypyc) when ``YARD_NATIVE=1`` asks for the native core.

The default install is pure Python. With ``YARD_NATIVE=1`` in the environment, ``pip install``
compiles the rules engine and the server's match core with mypyc (see ``setup.py``); pip's
isolated build environment then needs mypy, which only this hook can ask for.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (re-export the whole PEP 517/660 interface)

# mypyc type-checks what it compiles (strict, as pyproject.toml says), so the build also needs
# the typed libraries those modules import.
_NATIVE_REQUIRES = ["mypy>=1.10", "orjson>=3.9"]


def _native() -> bool:
    return os.environ.get("YARD_NATIVE", "").strip() not in ("", "0")


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    extra = _NATIVE_REQUIRES if _native() else []
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    extra = _NATIVE_REQUIRES if _native() else []
    return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]
