"""``yard games --player NAME --termination T``, and its table keeping how each game ended
at 80 columns (long ids and names, the longest termination), through the command's entry
point in this process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import Outcome, Termination, Winner
from tests.yard_cli import yard_here

NAMES = ("alphabeta-house", "greedy-house")
ENDINGS = [Outcome(Winner.MRX, Termination.DETECTIVES_STUCK),
           Outcome.forfeit(1, Termination.PROTOCOL_VIOLATION),
           Outcome(None, Termination.ABORTED)]


def yard(*args: str, cwd: Path, columns: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("YARD_DB", "COLUMNS")}
    return yard_here(*args, cwd=cwd, env=env | ({"COLUMNS": columns} if columns else {}))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yard.db with three games between two house bots with long names (in the first the
    detectives are a team of two bots), each ending differently, with ladder game ids."""
    path = tmp_path_factory.mktemp("games")
    with Database.connect(f"sqlite:///{path / 'yard.db'}") as store:
        for i, outcome in enumerate(ENDINGS):
            result = play_game("grid5", make_bot("random"), [make_bot("random")], seed=i)
            mrx, det = NAMES if i % 2 == 0 else NAMES[::-1]
            players = {0: mrx, 1: det} if i else {0: mrx, 1: "rush", 2: det}
            store.save_game(record_from_moves(f"g{i:012x}", result.start,
                                              result.moves, players, outcome, seed=i))
    return path


def test_games_are_filtered_by_player_and_termination(folder: Path) -> None:
    def ids(*args: str) -> list[str]:
        out = yard("games", *args, "--json", cwd=folder)
        assert out.returncode == 0, out.stderr
        return [g["game_id"] for g in json.loads(out.stdout)]

    everything = ids()
    assert len(everything) == 3
    assert ids("--player", NAMES[0]) == everything
    assert ids("--player", "rush") == ids("--termination", "detectives_stuck") == [
        "g000000000000"]  # rush: one of the detectives' seats
    assert ids("--player", NAMES[1], "--termination", "protocol_violation") == [
        "g000000000001"]
    assert ids("--player", "nobody") == []
    out = yard("games", "--termination", "lost", cwd=folder)
    assert out.returncode == 2 and "'lost' is not one of" in out.stderr


def test_the_games_table_keeps_how_games_ended_at_80_columns(folder: Path) -> None:
    out = yard("games", cwd=folder)  # a pipe: 80 columns
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    for ending in ENDINGS:  # whole, on one line
        assert ending.termination.value in out.stdout
    assert "mrx:" in out.stdout and "none:" in out.stdout  # the winner too
    wide = yard("games", cwd=folder, columns="200")
    header = wide.stdout.splitlines()[1]
    assert "winner" in header and "reason" in header and "tournament" in header
