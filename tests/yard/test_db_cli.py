"""``yard games`` and ``yard replay`` on a real SQLite file: through the command's entry
point (yard.cli.main, in this process), and as a real subprocess in
test_games_json_with_filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from tests.yard.commands import yard, yard_process


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with yard.db holding two grid5 games and one warwick game."""
    path = tmp_path_factory.mktemp("cli")
    with Database.connect(f"sqlite:///{path / 'yard.db'}") as store:
        for i, rules in enumerate(["grid5", "grid5", "warwick"]):
            result = play_game(rules, make_bot("random", i), [make_bot("rush", i)], seed=i)
            store.save_game(record_from_moves(f"game-{i}", result.start, result.moves,
                                              {0: "random", 1: "rush"}, result.outcome,
                                              seed=i))
    return path


def test_games_json_with_filters(folder: Path) -> None:
    out = yard_process("games", "--json", cwd=folder)  # the real command
    assert out.returncode == 0, out.stderr
    assert {g["game_id"] for g in json.loads(out.stdout)} == {"game-0", "game-1", "game-2"}
    out = yard("games", "--json", "--rules", "warwick", cwd=folder)
    [game] = json.loads(out.stdout)
    assert (game["game_id"], game["mrx_player"], game["detective_player"]) == \
        ("game-2", "random", "rush")
    assert len(json.loads(yard("games", "--json", "--limit", "2", cwd=folder).stdout)) == 2


def test_games_table_and_env_var(folder: Path, tmp_path: Path) -> None:
    out = yard("games", cwd=tmp_path, env={"YARD_DB": f"sqlite:///{folder / 'yard.db'}"})
    assert out.returncode == 0, out.stderr
    assert "game-0" in out.stdout and "warwick" in out.stdout and "rush" in out.stdout


def test_replay_as_detectives_hides_mister_x(folder: Path) -> None:
    with Database.connect(f"sqlite:///{folder / 'yard.db'}") as store:
        record = store.load_game("game-2")
    out = yard("replay", "game-2", "--as", "detectives", cwd=folder)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("game game-2  ruleset warwick")
    assert lines[2].startswith("start: mrx=? ")
    mrx_moves = [line.split()[1] for line in lines if line.startswith("  mrx")]
    assert len(mrx_moves) == record.moves and all(m.endswith(":?") for m in mrx_moves[:2])
    truth = yard("replay", "game-2", "--as", "mrx", cwd=folder).stdout.splitlines()
    assert truth[2].startswith(f"start: mrx={record.mrx_path[0]} ")
    assert truth[-1].startswith("Mister X's path:")


@pytest.mark.parametrize("args, message", [
    (["replay", "no-such-game"], "error: no game 'no-such-game'"),
    (["games", "--db", "sqlite:///missing.db"], "error: no database file"),
    (["games", "--db", "bogus-url"], "error: bad database URL"),
    (["replay", "game-0", "--db", "nodialect://x"], "error: cannot open database"),
])
def test_user_mistakes_are_one_line_and_exit_2(folder: Path, args: list[str],
                                               message: str) -> None:
    out = yard(*args, cwd=folder)
    assert out.returncode == 2
    assert out.stderr.startswith(message) and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr
