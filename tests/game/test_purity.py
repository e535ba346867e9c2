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


def test_listing_bots_loads_no_network_client_or_tournament_code() -> None:
    """``yard bots --json`` (run before every tournament to learn the bots' roles) loads no
    websockets, asyncio, SQLAlchemy or tournament code (``--engine``'s parser included):
    it is a process of its own, started for every tournament run."""
    code = ("import sys, json, contextlib, io; from yard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    main(['bots', '--json', '--only', 'random'])\n"
            "print(json.dumps([json.loads(out.getvalue())[0]['name'], sorted(m for m in "
            "['asyncio', 'websockets', 'sqlalchemy', 'tournament.engines', 'bots.client'] "
            "if m in sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert json.loads(out.stdout) == ["random", []]
