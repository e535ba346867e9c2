"""Numba's on-disk cache, kept honest across modules and against broken files.

Numba keys the cached machine code of a module's ``@njit(cache=True)`` functions by that
module's own source file (a hash of its content). Code those functions compile in from
another module, such as the rules kernel ``bots/mcts/kernel.py``, is not part of the key:
after that module changes, the cache would go on running the old code. :func:`forget_stale`
removes a module's cache files when a module it compiles in has changed since they were
written (a digest of those sources is kept next to the cache).

Numba also trusts the files it finds: an index or data file that does not unpickle (cut
short, overwritten, written by a process that imported the module under another name, as
``python -m doctest bots/alphabeta_kernel.py`` does) makes every call of the function
raise until the files are removed by hand. :func:`guard_cache` makes such a cache entry be
discarded and compiled again, with a warning in the log, and keeps a module imported under
another name off the disk cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from numba.core.caching import FunctionCache, _CacheLocator
from numba.core.registry import CPUDispatcher

log = logging.getLogger(__name__)


def forget_stale(module_file: str, depends_on: Sequence[str]) -> bool:
    """Drop the numba cache of ``module_file`` if a file of ``depends_on`` changed since
    it was written; returns whether it did. Call at import, before the first compile."""
    source = Path(module_file)
    digest = hashlib.sha1()
    for name in depends_on:
        with contextlib.suppress(OSError):
            digest.update(Path(name).read_bytes())
    stamp_text = digest.hexdigest()
    dropped = False
    for folder in _cache_dirs(source):
        stamp = folder / f"{source.stem}.depends"
        try:
            if stamp.read_text() == stamp_text:
                continue
        except OSError:
            pass  # no stamp yet: the cache (if any) predates the check
        for cached in [*folder.glob(f"{source.stem}.*.nbi"), *folder.glob(f"{source.stem}.*.nbc")]:
            with contextlib.suppress(OSError):
                cached.unlink()
                dropped = True
        with contextlib.suppress(OSError):
            stamp.write_text(stamp_text)
    return dropped


def guard_cache(namespace: Mapping[str, Any]) -> int:
    """Guard the disk cache of a module's numba functions (pass its ``globals()``): an
    entry that cannot be read back (an index or data file cut short, garbage, unreadable,
    or naming a module this process does not have) is logged, removed and compiled again,
    instead of raising; and a module imported under a name other than its package path
    (``python -m doctest bots/alphabeta_kernel.py`` imports ``alphabeta_kernel``) compiles
    without the disk cache, whose entries it would otherwise fill with types of a module
    that normal imports cannot find. Returns how many functions it guarded. Call at the
    end of the module, before the first compile."""
    name, expected = namespace["__name__"], _module_name(Path(namespace["__file__"]))
    foreign = name != expected
    if foreign:
        log.warning("%s imported as %r: its numba functions compile without the disk cache",
                    expected, name)
    guarded = 0
    for value in namespace.values():
        if not isinstance(value, CPUDispatcher) or value.py_func.__module__ != name:
            continue
        dispatcher: Any = value  # numba's types do not show its cache
        cache: Any = dispatcher._cache
        if isinstance(cache, FunctionCache):  # cache=True (not numba's NullCache)
            dispatcher._cache = recovering = _RecoveringCache(cache)
            if foreign:
                recovering.disable()  # numba's Cache.disable: neither loads nor saves
            guarded += 1
    return guarded


class _RecoveringCache:
    """Numba's per-function cache (``numba.core.caching.FunctionCache``, wrapped), whose
    failures to load or save an entry discard the entry's files: the function is then
    compiled as if it had never been cached."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return self._cache.load_overload(sig, target_context)
        except Exception as exc:  # any broken file: unpickling raises about anything
            self._discard("read", exc)
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            self._cache.save_overload(sig, data)
        except Exception as exc:  # an index gone bad since it was loaded
            self._discard("update", exc)
            try:
                self._cache.save_overload(sig, data)
            except Exception as again:  # e.g. a full disk: this process runs uncached
                log.warning("numba cache of %s: not saved (%r)", self._function(), again)

    def _discard(self, action: str, exc: Exception) -> None:
        index = Path(self._cache._cache_file._index_path)
        log.warning("numba cache of %s: cannot %s %s (%r); discarded, compiling again",
                    self._function(), action, index, exc)
        for path in [index, *index.parent.glob(f"{index.stem}.*.nbc")]:
            with contextlib.suppress(OSError):
                path.unlink()

    def _function(self) -> str:
        func = self._cache._py_func
        return f"{func.__module__}.{func.__qualname__}"


def _module_name(source: Path) -> str:
    """The dotted name ``source`` has as part of its package (``bots.mcts.kernel``)."""
    parts = [source.stem]
    folder = source.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _cache_dirs(source: Path) -> list[Path]:
    """Where numba may keep ``source``'s cache: ``__pycache__`` beside it, and under
    ``NUMBA_CACHE_DIR`` (a folder named after the source's folder and a hash of its path)."""
    dirs = [source.parent / "__pycache__"]
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        locator: Any = _CacheLocator
        dirs.append(Path(root) / locator.get_suitable_cache_subpath(str(source)))
    return [d for d in dirs if d.is_dir()]
