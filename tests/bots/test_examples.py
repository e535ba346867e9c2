"""The examples run: the ten-line Python SDK bot and the raw-JSON Node bot play a game."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from game import Termination, load_board
from protocol import StartMatch, encode
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from server.core import board_message
from tests import SCALE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def test_the_node_example_computes_london_distances_from_the_board_message(
        tmp_path: Path) -> None:
    """A bot in another language gets the board as data (the ``board`` message, as the
    server encodes it): the Node example's breadth-first search over it gives the same
    shortest-path distance as the rules engine for every pair of London stations."""
    board = load_board("london")
    message = tmp_path / "board.json"
    message.write_text(encode(board_message(board)))
    script = (f"const bot = require({json.dumps(str(EXAMPLES / 'js' / 'bot.js'))});"
              "const msg = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
              "const b = bot.loadBoard(msg); const rows = [];"
              "for (let s = 1; s <= msg.stations; s++) "
              "rows.push(bot.distancesFrom(b, s).slice(1));"
              "console.log(JSON.stringify(rows));")
    done = subprocess.run(["node", "-e", script, str(message)], capture_output=True,
                          text=True, timeout=60 * SCALE, check=False)
    assert done.returncode == 0, done.stderr
    distances = json.loads(done.stdout)
    assert len(distances) == board.n_stations == 199
    assert distances == [[board.distance(a, b) for b in board.stations]
                         for a in board.stations]
    assert max(map(max, distances)) > 5  # a real graph, not station-number differences
