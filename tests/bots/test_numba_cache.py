"""bots/numba_cache.py: a module's numba cache is dropped when a module it compiles in
changes, and kept otherwise."""

from __future__ import annotations

from pathlib import Path

from bots.numba_cache import forget_stale


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
