"""The examples run: the ten-line Python SDK bot and the raw-JSON Node bot play a game."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from game import Termination
from protocol import StartMatch
from server.admin import AdminClient
from server.app import MatchServer
from server.core import ServerConfig

SCALE = float(os.environ.get("YARD_TEST_TIMEOUT_SCALE", "1"))
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


async def launch(*argv: str) -> asyncio.subprocess.Process:
    """Start an example bot and wait for its ``connected`` line."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60 * SCALE)
    assert line.startswith(b"connected as"), line
    return proc


async def test_python_and_node_examples_play_each_other() -> None:
    server = MatchServer(ServerConfig(), None, port=0)
    await server.start()
    try:
        py = await launch(sys.executable, str(EXAMPLES / "closer_bot.py"), "--url", server.url,
                          "--games", "2")
        js = await launch("node", "--experimental-websocket", "--no-warnings",
                          str(EXAMPLES / "js" / "bot.js"), "--url", server.url,
                          "--name", "jsbot", "--games", "2")
        async with AdminClient(server.url, server.admin_token) as admin:
            games = [await admin.start_match(StartMatch("classic", mrx, [det], seed=7))
                     for mrx, det in (("closer", "jsbot"), ("jsbot", "closer"))]
            results = [await admin.result(g, 60 * SCALE) for g in games]
        codes = [await asyncio.wait_for(p.wait(), 30 * SCALE) for p in (py, js)]
    finally:
        await server.stop()
    assert codes == [0, 0]
    for result in results:
        assert result.termination in {Termination.CAUGHT, Termination.SURVIVED,
                                      Termination.CORNERED, Termination.DETECTIVES_STUCK}
