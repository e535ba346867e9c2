"""Numba's on-disk cache, kept honest across modules.

Numba keys the cached machine code of a module's ``@njit(cache=True)`` functions by that
module's own source file (its modification time and size). Code those functions compile in
from another module, such as the rules kernel ``bots/mcts/kernel.py``, is not part of the
key: after that module changes, the cache would go on running the old code. :func:`forget_stale`
removes a module's cache files when a module it compiles in has changed since they were
written (a digest of those sources is kept next to the cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path


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


def _cache_dirs(source: Path) -> list[Path]:
    """Where numba may keep ``source``'s cache: ``__pycache__`` beside it, and under
    ``NUMBA_CACHE_DIR`` (which mirrors the source's directory path)."""
    dirs = [source.parent / "__pycache__"]
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        mirrored = Path(root) / source.parent.resolve().relative_to(source.anchor)
        dirs.append(mirrored)
    return [d for d in dirs if d.is_dir()]
