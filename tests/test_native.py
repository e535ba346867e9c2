"""The optional native (mypyc) build: its module list, and how stale builds are found."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from server.native import NATIVE_MODULES, is_compiled, is_stale, native_status

ROOT = Path(__file__).resolve().parent.parent


def test_setup_py_compiles_exactly_the_modules_server_native_lists() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    listed = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "NATIVE_MODULES"
                          for t in node.targets))
    paths = ast.literal_eval(listed)
    assert sorted(p.removesuffix(".py").replace("/", ".") for p in paths) == sorted(
        NATIVE_MODULES)
    assert all((ROOT / p).is_file() for p in paths)


def test_a_compiled_module_is_stale_once_its_source_is_newer(tmp_path: Path) -> None:
    so = tmp_path / "state.cpython-311-x86_64-linux-gnu.so"
    py = tmp_path / "state.py"
    so.write_bytes(b"")
    py.write_text("")
    built = so.stat().st_mtime
    os.utime(py, (built, built))
    assert is_compiled(so) and not is_compiled(py)
    assert not is_stale(so)
    os.utime(py, (built + 60, built + 60))  # the source edited a minute after the build
    assert is_stale(so)
    py.unlink()  # a wheel without sources: nothing to compare
    assert not is_stale(so)


def test_native_status_describes_what_runs() -> None:
    status = native_status()
    assert set(status.compiled) <= set(NATIVE_MODULES)
    assert set(status.stale) <= set(status.compiled)
    if status.compiled:
        assert status.describe().startswith("native core: ")
    else:
        assert status.describe() == "pure-Python core" and not status.native
