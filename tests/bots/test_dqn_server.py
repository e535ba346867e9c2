"""The DQN bot over the real server: `yard serve`, `yard bot dqn`, `yard match`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from db.store import Database
from tests import SCALE
from tournament.processes import Child, start_bot, start_server, yard_argv


async def _match(url: str, mrx: str, detectives: str, seed: int) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(
        *yard_argv("match", "--server", url, "--rules", "grid5", "--mrx", mrx,
                   "--detectives", detectives, "--seed", str(seed), "--json"),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 60 * SCALE)
    assert proc.returncode == 0
    result: dict[str, object] = json.loads(out)
    return result


async def test_dqn_bot_plays_both_roles_over_the_server(tmp_path: Path) -> None:
    url_db = f"sqlite:///{tmp_path / 'served.db'}"
    server, url = await start_server(url_db, "--ready-file", str(tmp_path / "ready.txt"))
    bots: list[Child] = []
    try:
        bots = [await start_bot("dqn", url), await start_bot("random", url)]
        results = [await _match(url, "random", "dqn", 9), await _match(url, "dqn", "random", 9)]
    finally:
        for bot in bots:
            await bot.stop()
        assert await server.stop() == 0
    stored = Database.connect(url_db)
    for result in results:
        assert result["termination"] in {"caught", "survived", "cornered", "detectives_stuck"}
        record = stored.load_game(str(result["game"]))
        assert record.outcome.termination.value == result["termination"]
    stored.close()
