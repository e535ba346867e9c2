"""DQN training with Ray actors (bots/dqn/cluster.py): a local Ray instance with 2 CPUs.
Under CI (CI=true) a missing Ray is a failure; locally without Ray nothing is collected."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from yard_cli import yard_here

from bots.dqn.agent import DqnConfig
from bots.dqn.bot import load_model
from bots.dqn.cluster import ActorTrainer
from bots.dqn.features import Role, observe
from bots.dqn.model import export_params
from bots.dqn.train import Trainer, TrainSpec
from game import load_ruleset, new_game

HAVE_RAY = importlib.util.find_spec("ray") is not None
TINY = DqnConfig(hidden=(32, 16), learn_start=40, train_every=1, batch_size=16,
                 eps_decay_games=10, buffer_size=2_000)

# One worker runs these tests one after another on one Ray instance (conftest.RAY_GROUPS),
# while another runs tests/test_cluster.py on its own.
pytestmark = pytest.mark.xdist_group("ray-dqn")


def _spec(games: int, eval_every: int = 0, eval_games: int = 2) -> TrainSpec:
    return TrainSpec(load_ruleset("grid5"), Role.DETECTIVE, ["random", "greedy"], games,
                     seed=5, config=TINY, eval_every=eval_every, eval_games=eval_games)


def test_ci_installs_ray() -> None:
    if os.environ.get("CI") == "true":
        assert HAVE_RAY, "CI=true but ray is not installed: .ci/run must install .[cluster]"


def test_an_actor_plays_the_seeded_games_and_returns_their_transitions() -> None:
    learner = Trainer(_spec(4))
    actor = ActorTrainer(_spec(4))
    again = ActorTrainer(_spec(4))
    params = export_params(learner.agent.net)
    moves, wins = actor.generate(params, [0, 1])
    same, same_wins = again.generate(params, [0, 1])
    assert len(wins) == 2 and moves and wins == same_wins
    assert [t.action for t in moves] == [t.action for t in same]  # seeded: reproducible
    assert actor.agent.updates == 0 and len(actor.agent.buffer) == 0  # actors never learn
    assert all(t.next_obs is not None or t.reward != 0 for t in moves[-1:])


if HAVE_RAY or os.environ.get("CI") == "true":
    from bots.dqn.cluster import train_on_cluster

    def test_two_actors_feed_the_learner_which_trains_and_saves(ray_local: Any,
                                                                 tmp_path: Path) -> None:
        trainer = Trainer(_spec(16, eval_every=8, eval_games=2))
        before = export_params(trainer.agent.net)
        seen: list[int] = []
        stats, refreshes = train_on_cluster(trainer, ray_local, actors=2, refresh_steps=5,
                                            on_game=lambda s: seen.append(s.games),
                                            checkpoint=tmp_path / "run.ckpt.pt")
        assert stats.games == 16 and seen == list(range(1, 17))
        assert trainer.agent.updates > 0 and refreshes >= 1
        assert len(trainer.agent.buffer) > 0 and len(stats.evals) == 2
        after = export_params(trainer.agent.net)
        assert any(not np.array_equal(before[k], after[k]) for k in before)
        out = tmp_path / "w.npz"
        trainer.save_weights(out, {"command": "test"})
        model = load_model(out, trainer.spec.rules, Role.DETECTIVE)
        state = new_game("grid5", seed=2)
        state = state.apply(state.legal_moves()[0])
        obs = observe(model.encoder, state.view(state.to_move), state.legal_moves())
        assert np.isfinite(model.q(obs)).any()
        assert (tmp_path / "run.ckpt.pt").exists()


def test_bench_dqn_on_a_cluster_merges_its_seed_chunks_into_the_one_machine_numbers(
        request: pytest.FixtureRequest) -> None:
    """bench/dqn.py --cluster auto --jobs 4 (as in the README; the cluster is the tests' Ray
    instance, named by RAY_ADDRESS): every pairing's seed range split into 4 Ray tasks; the
    printed rates and intervals equal the run without --cluster."""
    if not HAVE_RAY:
        assert os.environ.get("CI") != "true", "CI must install the cluster extra"
        return
    ray = request.getfixturevalue("ray_local")
    bench = Path(__file__).parents[1] / "bench" / "dqn.py"
    args = [sys.executable, str(bench), "graph", "--rules", "grid5", "--mrx", "random",
            "--detectives", "rush", "--games", "10", "--seed", "7"]

    def rows(extra: list[str]) -> list[str]:
        env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
        done = subprocess.run([*args, *extra], capture_output=True, text=True, timeout=300,
                              env=env)
        assert done.returncode == 0, done.stderr
        # Drop the timing "(Ns)": the only part that may differ.
        return [line.rsplit("(", 1)[0] for line in done.stdout.splitlines()
                if line.startswith("grid5")]

    here = rows([])
    assert len(here) == 5 and "games=   10" in here[0]
    assert rows(["--cluster", "auto", "--jobs", "4"]) == here
    done = subprocess.run([*args, "--cluster", "nowhere"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "expected auto, ray://HOST:PORT" in done.stderr


def test_cli_trains_with_two_local_actors_and_writes_loadable_weights(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """`yard train dqn --cluster auto` (as in the README) on this machine's Ray instance (the
    tests' one, named by RAY_ADDRESS): `--cluster local:N` makes the same `ray.init` with
    N CPUs that the ray_local fixture makes, the address forms are tests/test_cluster.py's."""
    if not HAVE_RAY:
        assert os.environ.get("CI") != "true", "CI must install the cluster extra"
        return
    ray = request.getfixturevalue("ray_local")
    out = tmp_path / "w.npz"
    env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])",
         "train", "dqn", "--rules", "grid5", "--role", "detective", "--games", "6",
         "--hidden", "16", "--learn-start", "20", "--batch-size", "8", "--eval-every", "0",
         "--quiet", "--cluster", "auto", "--actors", "2", "--refresh-steps", "3",
         "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "after 6 games" in done.stdout
    load_model(out, load_ruleset("grid5"), Role.DETECTIVE)


def test_cli_rejects_a_bad_cluster_address(tmp_path: Path) -> None:
    # In this process: a `yard train` process imports torch and Ray first (seconds); the
    # test above runs the real command.
    done = yard_here("train", "dqn", "--rules", "grid5", "--role", "detective", "--games",
                     "2", "--cluster", "elsewhere", "--out", str(tmp_path / "w.npz"))
    assert done.returncode == 2 and "expected auto, ray://HOST:PORT" in done.stderr
    assert not (tmp_path / "w.npz").exists()
