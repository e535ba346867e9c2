"""The rules engine is a pure library: importing it loads no I/O or ML frameworks."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ["asyncio", "websockets", "sqlalchemy", "torch"]


def test_engine_imports_no_io_or_torch() -> None:
    code = ("import game, game.views, game.position, game.belief, game.board, game.rules; "
            "import sys, json; "
            f"print(json.dumps([m for m in {FORBIDDEN!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert json.loads(out.stdout) == []


def test_baseline_bots_do_not_load_torch() -> None:
    code = ("import bots.simple, bots.greedy, bots.arena, bots.registry, sys; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"
