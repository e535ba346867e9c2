"""The ``dqn`` bot: shipped weights play full games; bad weights give clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bots.arena import play_game
from bots.dqn.bot import WEIGHTS_DIR, shipped_weights
from bots.dqn.features import Role
from bots.dqn.policy import WeightsError, load_weights, save_weights
from bots.registry import make_bot
from game import Termination, load_ruleset
from game.rules import ruleset_from_dict
from tests.yard_cli import yard_here

YARD = [str(Path(sys.executable).parent / "yard")]
SHIPPED = sorted(WEIGHTS_DIR.glob("*.npz"))


def test_weights_are_shipped_for_grid5_and_london() -> None:
    names = {p.name for p in SHIPPED}
    assert {"grid5-mrx.npz", "grid5-detective.npz"} <= names
    assert any(n.endswith("-mrx.npz") and not n.startswith("grid") for n in names)
    assert any(n.endswith("-detective.npz") and not n.startswith("grid") for n in names)
    assert all(p.stat().st_size < 5_000_000 for p in SHIPPED)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_each_shipped_model_plays_full_games(path: Path) -> None:
    meta, _ = load_weights(path)
    rules = load_ruleset(meta["ruleset"])
    assert shipped_weights(rules, Role(meta["role"])) == path
    opponent = "random"
    for seed in range(2):
        dqn = make_bot("dqn", seed)
        if meta["role"] == "mrx":
            result = play_game(rules, dqn, [make_bot(opponent, 7)], seed=seed)
        else:
            result = play_game(rules, make_bot(opponent, 7), [dqn], seed=seed)
        assert result.outcome.termination is not Termination.ILLEGAL_MOVE
        assert result.final.outcome is not None


def test_same_seed_same_game() -> None:
    a = play_game("grid5", make_bot("dqn", 1), [make_bot("random", 2)], seed=5)
    b = play_game("grid5", make_bot("dqn", 1), [make_bot("random", 2)], seed=5)
    assert a.moves == b.moves


def test_missing_weights_file_is_a_clear_error(tmp_path: Path) -> None:
    bot = make_bot("dqn", 1, {"weights": str(tmp_path / "none.npz")})
    with pytest.raises(WeightsError, match="does not exist"):
        play_game("grid5", bot, [make_bot("random", 2)], seed=1)


def test_weights_for_another_board_or_role_are_rejected(tmp_path: Path) -> None:
    grid = str(WEIGHTS_DIR / "grid5-detective.npz")
    with pytest.raises(WeightsError, match="trained on board grid5x5"):
        play_game("dash", make_bot("random", 1), [make_bot("dqn", 1, {"weights": grid})])
    with pytest.raises(WeightsError, match="are for detective, not mrx"):
        play_game("grid5", make_bot("dqn", 1, {"weights": grid}), [make_bot("random", 1)])
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip")
    with pytest.raises(WeightsError, match="cannot be read"):
        play_game("grid5", make_bot("random", 1), [make_bot("dqn", 1,
                                                             {"weights": str(broken)})])
    meta, params = load_weights(grid)
    save_weights(tmp_path / "old.npz", {**meta, "state_dim": 7}, params)
    with pytest.raises(WeightsError, match="retrain"):
        play_game("grid5", make_bot("random", 1),
                  [make_bot("dqn", 1, {"weights": str(tmp_path / "old.npz")})])
    save_weights(tmp_path / "future.npz", {**meta, "features": "grid-v9"}, params)
    with pytest.raises(WeightsError, match="unknown grid features 'grid-v9'"):
        play_game("grid5", make_bot("random", 1),
                  [make_bot("dqn", 1, {"weights": str(tmp_path / "future.npz")})])


def test_grid_weights_of_both_encoder_versions_play(tmp_path: Path) -> None:
    for features in ("grid-v1", "grid-v2"):
        out = tmp_path / f"{features}.npz"
        args = ["train", "dqn", "--rules", "grid5", "--role", "detective",
                "--games", "3", "--eval-every", "0", "--learn-start", "10", "--batch-size",
                "4", "--features", features, "--quiet", "--out", str(out)]
        # In this process (a `yard train` process spends seconds importing torch); the
        # real command runs in test_train_cli_writes_weights_and_resumes.
        done = yard_here(*args)
        assert done.returncode == 0, done.stderr
        meta, _ = load_weights(out)
        assert meta["features"] == features
        assert meta["scalars"] == (4 if features == "grid-v1" else 5)
        result = play_game("grid5", make_bot("random", 1),
                           [make_bot("dqn", 1, {"weights": str(out)})], seed=2)
        assert result.outcome is not None


def test_board_without_weights_is_a_clear_error() -> None:
    rules = ruleset_from_dict({"extends": "grid5", "name": "grid6", "board": "grid6x6"})
    with pytest.raises(WeightsError, match="no shipped DQN weights for ruleset 'grid6'"):
        play_game(rules, make_bot("random", 1), [make_bot("dqn", 1)], seed=1)


def test_registry_import_does_not_load_torch() -> None:
    code = ("import sys, bots.registry as r; r.bot_class('dqn'); "
            "from bots.arena import play_game; "
            "play_game('grid5', r.make_bot('random', 1), [r.make_bot('dqn', 1)], seed=1); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_train_cli_writes_weights_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "w.npz"
    args = [*YARD, "train", "dqn", "--rules", "grid5", "--role", "mrx", "--opponents",
            "rush,alphabeta:depth=1:time=0", "--games", "12", "--eval-every", "6",
            "--eval-games", "2", "--learn-start", "20", "--batch-size", "8", "--quiet",
            "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta, _ = load_weights(out)
    assert meta["role"] == "mrx" and meta["training"]["games"] == 12
    assert len(meta["training"]["evals"]) == 2
    more = [*args[:args.index("--games") + 1], "20", *args[args.index("--games") + 2:],
            "--resume", str(out.with_suffix(".ckpt.pt"))]
    done = yard_here(*more[len(YARD):])  # in this process: no second torch import
    assert done.returncode == 0, done.stderr
    assert load_weights(out)[0]["training"]["games"] == 20


def test_train_cli_user_errors_exit_2(tmp_path: Path) -> None:
    # In this process (a `yard train` process imports torch first: seconds per case); the
    # tests above run the real command.
    base = ["train", "dqn", "--rules", "grid5", "--games", "1", "--quiet",
            "--out", str(tmp_path / "x.npz")]
    cases = [(["--role", "mrx", "--opponents", "run"], "cannot play detectives"),
             (["--role", "mrx", "--hidden", "a,b"], "--hidden"),
             (["--role", "mrx", "--device", "tpu"], "use cpu or cuda"),
             (["--role", "mrx", "--opponents", "nobody"], "unknown bot"),
             (["--role", "mrx", "--features", "grid-v7"], "--features")]
    for extra, message in cases:
        done = yard_here(*base, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr


def test_ruleset_without_own_weights_uses_the_same_boards() -> None:
    bristol = load_ruleset("bristol")
    assert shipped_weights(bristol, Role.MRX).name == "classic-mrx.npz"
    result = play_game(bristol, make_bot("dqn", 1), [make_bot("random", 2)], seed=4)
    assert result.outcome.termination is not Termination.ILLEGAL_MOVE
