"""Optional native build: ``YARD_NATIVE=1 pip install ...`` compiles the hot modules with mypyc.

Everything else about the package lives in pyproject.toml. Without ``YARD_NATIVE`` (the
default) nothing is compiled and yard is pure Python; the compiled modules behave the same
(CI runs the rules, protocol and server tests against both) and cut the server's CPU per
move by 13-16% (bench/RESULTS.md, "Native core").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup

# The modules on the hot path of a served move: the rules engine, the match core, the codec.
# They are mypy-strict and avoid what mypyc cannot compile (kw_only dataclasses, object.__new__).
# server/native.py lists the same modules (a test keeps the two in step).
NATIVE_MODULES = [
    "game/board.py",
    "game/moves.py",
    "game/outcome.py",
    "game/position.py",
    "game/rules.py",
    "game/state.py",
    "game/views.py",
    "server/core.py",
    "server/match.py",
    "protocol/codec.py",
]

HERE = Path(__file__).resolve().parent


def remove_native_build() -> None:
    """Delete the compiled modules an earlier native build left in the source tree.

    An editable native install builds them in place, where they shadow the ``.py`` files;
    a later pure install must take them away, or they would keep running (and import a
    shared library that the new install no longer maps).
    """
    doomed = [so for path in NATIVE_MODULES
              for so in (HERE / path).parent.glob(f"{Path(path).stem}.*.so")]
    doomed += HERE.glob("yard_native__mypyc.*.so")
    for so in doomed:
        so.unlink()
        print(f"removed {so.relative_to(HERE)} (an earlier YARD_NATIVE=1 build)")


ext_modules = []
if os.environ.get("YARD_NATIVE", "").strip() in ("", "0"):
    remove_native_build()
else:
    try:
        from mypyc.build import mypycify
    except ImportError:
        # pip first runs this file to ask what the build needs (egg_info); mypy arrives after
        # that, through build_backend/yard_build.py. Anywhere else, missing mypy is an error.
        if "egg_info" not in sys.argv:
            raise SystemExit("YARD_NATIVE=1 needs mypy (mypyc) in the build environment: pip "
                             "install 'mypy>=1.10', or build without --no-build-isolation"
                             ) from None
    else:
        ext_modules = mypycify(NATIVE_MODULES, opt_level="3", group_name="yard_native")

setup(ext_modules=ext_modules)
