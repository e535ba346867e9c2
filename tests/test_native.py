"""The optional native (mypyc) build: its module list, and how stale builds are found."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
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


def test_a_pure_build_removes_what_a_native_build_left_in_the_tree(tmp_path: Path) -> None:
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "build_backend", tmp_path / "build_backend")
    suffix = ".cpython-311-x86_64-linux-gnu.so"
    left = [tmp_path / "game" / f"state{suffix}", tmp_path / "server" / f"match{suffix}",
            tmp_path / f"yard_native__mypyc{suffix}"]
    kept = [tmp_path / "game" / f"belief{suffix}", tmp_path / "game" / "state.py"]
    for path in left + kept:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k != "YARD_NATIVE"}
    done = subprocess.run([sys.executable, "setup.py", "--version"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in left)
    assert all(path.exists() for path in kept)
    assert "removed game/state" in done.stdout
