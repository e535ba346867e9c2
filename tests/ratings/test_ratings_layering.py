"""ratings is pure: importing it (all but the CLI) loads no database, server, bots or
torch, so the server and tournament runner can call it freely."""

from __future__ import annotations

import subprocess
import sys

PURE = ["ratings", "ratings.elo", "ratings.bootstrap", "ratings.leaderboard",
        "ratings.matrix", "ratings.outcomes", "ratings.stats", "ratings.export",
        "ratings.render", "ratings.sprt", "ratings.ranking"]
FORBIDDEN = ["sqlalchemy", "db", "server", "bots", "torch", "asyncio", "websockets",
             "matplotlib"]


def test_pure_modules_import_nothing_heavy() -> None:
    code = (f"import sys\nfor m in {PURE!r}: __import__(m)\n"
            f"print(sorted(m for m in {FORBIDDEN!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"
