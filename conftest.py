"""The library's doctests: the ``>>>`` examples in the modules of the library packages run
with the tests (``.venv/bin/pytest``; pyproject.toml lists the packages in ``testpaths``).

pytest's ``--doctest-modules`` does the same for every module it finds, but would also
import the scripts and data files under ``tests/``: here only the library's modules are
collected for their doctests. Every library module imports its optional dependencies (Ray:
the ``cluster`` extra; psycopg: ``postgres``) inside the functions that need them, so
each imports without the extras; a module that cannot goes in :data:`NEEDS`, and its
doctests are collected only when what it needs is installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

ROOT = Path(__file__).resolve().parent
LIBRARY = ("game", "protocol", "ratings", "records", "bots", "db", "server", "tournament",
           "yard")

#: Library modules (paths from the repository root) that import an optional dependency
#: when imported, with the module it needs.
NEEDS: dict[str, str] = {}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    """The doctests of ``file_path`` if it is a module of the library."""
    if (file_path.suffix != ".py" or file_path.name == "__main__.py"
            or parent.config.option.doctestmodules):  # pytest's own collects them
        return None
    relative = file_path.relative_to(ROOT) if file_path.is_relative_to(ROOT) else None
    if relative is None or relative.parts[0] not in LIBRARY:
        return None
    needed = NEEDS.get(relative.as_posix())
    if needed and importlib.util.find_spec(needed) is None:
        return None
    return DoctestModule.from_parent(parent, path=file_path)
