"""Whether the hot modules run compiled (``YARD_NATIVE=1`` installs, see setup.py) or as Python.

A compiled module (a ``.so`` beside its ``.py``) shadows its source: after editing the ``.py``
of an editable native install, the old compiled code still runs until it is rebuilt. This
module finds such stale builds so ``yard serve`` can say so instead of silently running
yesterday's rules.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

#: The modules setup.py compiles when ``YARD_NATIVE=1`` (keep the two lists in step).
NATIVE_MODULES = (
    "game.board", "game.moves", "game.outcome", "game.position", "game.rules", "game.state",
    "game.views", "server.core", "server.match", "protocol.codec",
)

# Installers write the .so and the .py of one build within moments of each other.
_STALE_AFTER_S = 2.0


@dataclass(frozen=True, slots=True)
class NativeStatus:
    """Which of :data:`NATIVE_MODULES` are compiled, and which compiled ones are stale."""

    compiled: tuple[str, ...]
    stale: tuple[str, ...]  # compiled, but the .py beside the .so is newer

    @property
    def native(self) -> bool:
        """True when every hot module runs compiled."""
        return len(self.compiled) == len(NATIVE_MODULES)

    def describe(self) -> str:
        """One line for logs: ``native core: ...`` or ``pure-Python core``."""
        if not self.compiled:
            return "pure-Python core"
        return (f"native core: {len(self.compiled)} of {len(NATIVE_MODULES)} hot modules "
                f"compiled with mypyc")


def native_status() -> NativeStatus:
    """Inspect the hot modules (importing them if needed)."""
    compiled: list[str] = []
    stale: list[str] = []
    for name in NATIVE_MODULES:
        origin = Path(getattr(importlib.import_module(name), "__file__", "") or "")
        if not is_compiled(origin):
            continue
        compiled.append(name)
        if is_stale(origin):
            stale.append(name)
    return NativeStatus(tuple(compiled), tuple(stale))


def is_compiled(origin: Path) -> bool:
    """Whether a module's ``__file__`` is an extension module rather than Python source."""
    return origin.suffix in (".so", ".pyd")


def is_stale(origin: Path) -> bool:
    """Whether the ``.py`` beside the compiled ``origin`` was changed after it was built."""
    source = origin.parent / f"{origin.name.split('.', 1)[0]}.py"
    try:
        return source.stat().st_mtime > origin.stat().st_mtime + _STALE_AFTER_S
    except OSError:
        return False  # a wheel may ship without sources: nothing to compare
