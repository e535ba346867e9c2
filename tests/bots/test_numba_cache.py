"""bots/numba_cache.py: a module's numba cache is dropped when a module it compiles in
changes, and kept otherwise; a broken or foreign cache entry is compiled again (each check
in fresh processes, on a cache of their own under NUMBA_CACHE_DIR)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import numba

from bots.numba_cache import forget_stale

ROOT = Path(__file__).resolve().parents[2]


def test_a_cache_is_dropped_only_when_a_dependency_changed(tmp_path: Path) -> None:
    module, kernel = tmp_path / "search.py", tmp_path / "kernel.py"
    module.write_text("# search\n")
    kernel.write_text("# kernel v1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    files = [cache / "search.walk-10.py311.nbi", cache / "search.walk-10.py311.1.nbc"]
    other = cache / "kernel.step-3.py311.nbi"
    for path in [*files, other]:
        path.write_text("cached")
    assert forget_stale(str(module), [str(kernel)])  # no stamp yet: the cache may be stale
    assert not any(p.exists() for p in files) and other.exists()
    for path in files:
        path.write_text("cached again")
    assert not forget_stale(str(module), [str(kernel)])  # nothing changed: kept
    assert all(p.exists() for p in files)
    kernel.write_text("# kernel v2\n")
    assert forget_stale(str(module), [str(kernel)])
    assert not any(p.exists() for p in files) and other.exists()


# A probe module: one tiny compiled function per kind of cache entry the test plants. Each
# compiles in a fraction of a second, against the minute of the real kernels.
_PROBE_HEAD = '''
from typing import Any, NamedTuple

from numba import njit

from bots.numba_cache import forget_stale, guard_cache

{stale}

class Pair(NamedTuple):
    a: Any
    b: Any
'''
_PROBE_FUNCTION = '''

@njit(cache=True)
def {name}(p):
    return p.a.sum() * 10 + p.b.sum()
'''
_RUN_PROBES = '''
import json, sys
from importlib import import_module

import numpy as np

out = {}
for module_name in sys.argv[1:]:
    module = import_module(module_name)
    for name, f in vars(module).items():
        if hasattr(f, "stats") and f.py_func.__module__ == module_name:
            value = f(module.Pair(np.arange(3), np.arange(4)))
            out[name] = [int(value), sum(f.stats.cache_hits.values()),
                         sum(f.stats.cache_misses.values())]
print(json.dumps(out))
'''
BROKEN = ("garbage_index", "truncated_index", "garbage_data", "truncated_data",
          "foreign_index", "unreadable_index")
PROBES = ("good", "foreign_import", "other_numba", *BROKEN)


def _probe_module(names: Sequence[str], stale: str = "") -> str:
    return (_PROBE_HEAD.format(stale=stale)
            + "".join(_PROBE_FUNCTION.format(name=name) for name in names)
            + "\n\nguard_cache(globals())\n")


def _run(args: Sequence[str], cwd: Path, cache: Path,
         *paths: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with ``cache`` as numba's cache and ``paths`` after the repository
    on the import path."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, paths)])}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240)


def _foreign_index(index: Path, module: str) -> None:
    """Overwrite ``index`` as a process that imported its module as ``module`` (a name
    normal imports do not have) would have written it: numba's version, then the source
    stamp and entries whose keys hold a type of that module."""
    foreign = types.ModuleType(module)
    key_type = type("Workspace", (), {"__module__": module})
    foreign.Workspace = key_type  # type: ignore[attr-defined]
    assert module not in sys.modules
    sys.modules[module] = foreign
    try:
        entries = pickle.dumps((b"stamp", {(key_type(),): index.stem + ".1.nbc"}))
    finally:
        del sys.modules[module]
    index.write_bytes(pickle.dumps(numba.__version__) + entries)


def _only(cache: Path, pattern: str) -> Path:
    (found,) = cache.rglob(pattern)
    return found


def _snapshot(cache: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in cache.rglob("*") if p.is_file()}


def test_a_broken_or_foreign_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    package = src / "probes"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(_probe_module(PROBES))
    (package / "edited.py").write_text(_probe_module(["edited"]))
    (package / "dep.txt").write_text("v1")
    stale = 'forget_stale(__file__, [__file__.replace("dependent.py", "dep.txt")])'
    (package / "dependent.py").write_text(_probe_module(["dependent"], stale))
    modules = ["probes.probe", "probes.edited", "probes.dependent"]
    everything = [*PROBES, "edited", "dependent"]

    built = _run(["-c", _RUN_PROBES, *modules], tmp_path, cache, src)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout) == {name: [36, 0, 1] for name in everything}

    # Imported under another name (as `python -m doctest` would): it compiles, and leaves
    # the cache as it was.
    before = _snapshot(cache)
    foreign = _run(["-c", "import numpy as np, probe; "
                    "print(probe.foreign_import(probe.Pair(np.arange(3), np.arange(4))))"],
                   tmp_path, cache, src, package)
    assert foreign.returncode == 0, foreign.stderr
    assert foreign.stdout.strip() == "36"
    assert "probes.probe imported as 'probe'" in foreign.stderr
    assert _snapshot(cache) == before

    index = {name: _only(cache, f"probe.{name}-*.nbi") for name in PROBES}
    data = {name: _only(cache, f"probe.{name}-*.1.nbc") for name in PROBES}
    index["garbage_index"].write_bytes(b"not a pickle")
    index["truncated_index"].write_bytes(index["truncated_index"].read_bytes()[:40])
    data["garbage_data"].write_bytes(b"not a pickle")
    data["truncated_data"].write_bytes(data["truncated_data"].read_bytes()[:100])
    _foreign_index(index["foreign_index"], "probe")
    index["unreadable_index"].unlink()
    index["unreadable_index"].mkdir()  # open() fails (as root, no mode bits would)
    old = index["other_numba"].read_bytes()
    version = pickle.dumps(numba.__version__)
    index["other_numba"].write_bytes(pickle.dumps("0.1.0") + old[len(version):])
    with (package / "edited.py").open("a") as source:
        source.write("# edited\n")
    (package / "dep.txt").write_text("v2")

    checked = _run(["-c", _RUN_PROBES, *modules], tmp_path, cache, src)
    assert checked.returncode == 0, checked.stderr
    hits = {"good", "foreign_import"}
    assert json.loads(checked.stdout) == {
        name: [36, 1, 0] if name in hits else [36, 0, 1] for name in everything}
    for name in BROKEN:
        assert f"numba cache of probes.probe.{name}: cannot read" in checked.stderr
    assert checked.stderr.count("cannot read") == len(BROKEN)

    again = _run(["-c", _RUN_PROBES, *modules], tmp_path, cache, src)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {  # the recompiled entries were saved (but where a
        name: [36, 0, 1] if name == "unreadable_index" else [36, 1, 0]  # folder sits)
        for name in everything}


_KERNEL_BOUND = ("from game import load_ruleset; "
                 "print(K.max_bound_from(K.tables_for(load_ruleset('grid5'))))")


def test_the_kernel_imported_under_another_name_leaves_its_cache_usable(
        tmp_path: Path) -> None:
    """The issue's case, on the rules kernel's smallest function: a run that imports
    bots/mcts/kernel.py as ``kernel`` (as ``python -m doctest`` does), then a cache entry
    such a run wrote before the guard: a normal import still computes."""
    cache = tmp_path / "cache"
    foreign = _run(["-c", f"import kernel as K; {_KERNEL_BOUND}"], tmp_path, cache,
                   ROOT / "bots" / "mcts")
    assert foreign.returncode == 0, foreign.stderr
    assert not cache.exists() or not any(cache.rglob("*.nbi"))
    normal = _run(["-c", f"from bots.mcts import kernel as K; {_KERNEL_BOUND}"], tmp_path,
                  cache)
    assert normal.returncode == 0, normal.stderr
    assert normal.stdout == foreign.stdout
    _foreign_index(_only(cache, "kernel.max_bound_from-*.nbi"), "kernel")
    recovered = _run(["-c", f"from bots.mcts import kernel as K; {_KERNEL_BOUND}"], tmp_path,
                     cache)
    assert recovered.returncode == 0, recovered.stderr
    assert recovered.stdout == foreign.stdout
    assert "ModuleNotFoundError(\"No module named 'kernel'\")" in recovered.stderr
