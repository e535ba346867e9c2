"""DQN training with Ray actors (bots/dqn/cluster.py): a local Ray instance with 2 CPUs.
Under CI (CI=true) a missing Ray is a failure; locally without Ray nothing is collected."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bots.dqn.agent import DqnConfig
from bots.dqn.bot import load_model
from bots.dqn.cluster import ActorTrainer
from bots.dqn.features import Role, observe
from bots.dqn.model import export_params
from bots.dqn.train import Trainer, TrainSpec
from game import load_ruleset, new_game
from tests.yard_cli import yard_here

HAVE_RAY = importlib.util.find_spec("ray") is not None
TINY = DqnConfig(hidden=(32, 16), learn_start=40, train_every=1, batch_size=16,
                 eps_decay_games=10, buffer_size=2_000)

# One worker runs these tests one after another on one Ray instance (conftest.RAY_GROUPS),
# while another runs tests/tournament/test_cluster.py on its own.
pytestmark = pytest.mark.xdist_group("ray")


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


def test_bench_dqn_on_a_cluster_merges_its_seed_chunks_into_the_one_machine_numbers(
        request: pytest.FixtureRequest) -> None:
    """bench/dqn.py --cluster auto --jobs N (as in the README; the cluster is the tests' Ray
    instance, named by RAY_ADDRESS): every pairing's seed range split into 2 Ray tasks (the
    instance's two prestarted workers); the printed rates and intervals equal the run
    without --cluster."""
    if not HAVE_RAY:
        assert os.environ.get("CI") != "true", "CI must install the cluster extra"
        return
    ray = request.getfixturevalue("ray_local")
    bench = Path(__file__).parents[2] / "bench" / "dqn.py"
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
    assert rows(["--cluster", "auto", "--jobs", "2"]) == here
    done = subprocess.run([*args, "--cluster", "nowhere"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "expected auto, ray://HOST:PORT" in done.stderr


#: ``yard train dqn`` (yard.cli.main, as the ``yard`` script runs it) with
#: :func:`~bots.dqn.cluster.train_on_cluster` watched: what it was asked, which games it
#: reported, what it left in the learner, written as JSON to ``$YARD_TEST_FACTS``.
_WATCHED_TRAIN = """
import json, os, sys
import numpy as np
import bots.dqn.cluster
from bots.dqn.model import export_params
from yard.cli import main

real, facts = bots.dqn.cluster.train_on_cluster, {}

def watched(trainer, ray, actors, refresh_steps, *, on_game=None, checkpoint=None, **kw):
    before, seen = export_params(trainer.agent.net), []

    def game(stats):
        seen.append(stats.games)
        if on_game is not None:
            on_game(stats)

    stats, refreshes = real(trainer, ray, actors, refresh_steps, on_game=game,
                            checkpoint=checkpoint, **kw)
    after = export_params(trainer.agent.net)
    facts.update(actors=actors, refresh_steps=refresh_steps, seen=seen, games=stats.games,
                 updates=trainer.agent.updates, refreshes=refreshes,
                 buffer=len(trainer.agent.buffer), evals=len(stats.evals),
                 changed=any(not np.array_equal(before[k], after[k]) for k in before),
                 checkpoint=checkpoint is not None and checkpoint.exists())
    return stats, refreshes

bots.dqn.cluster.train_on_cluster = watched
try:
    main(sys.argv[1:])
finally:
    with open(os.environ["YARD_TEST_FACTS"], "w") as out:
        json.dump(facts, out)
"""


def test_cli_trains_with_two_actors_that_feed_the_learner_and_writes_loadable_weights(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """`yard train dqn --cluster auto` (as in the README) on this machine's Ray instance (the
    tests' one, named by RAY_ADDRESS): `--cluster local:N` makes the same `ray.init` with
    N CPUs that the ray_local fixture makes, the address forms are
    tests/tournament/test_cluster.py's.
    Its learner (:func:`~bots.dqn.cluster.train_on_cluster`, watched) gets every game from
    the two actors in order, learns from their transitions, refreshes their weights,
    evaluates and checkpoints as it goes; the weights it writes load and play. One run for
    the command and the library: each actor is a process that imports torch (seconds)."""
    if not HAVE_RAY:
        assert os.environ.get("CI") != "true", "CI must install the cluster extra"
        return
    ray = request.getfixturevalue("ray_local")
    out, facts = tmp_path / "w.npz", tmp_path / "facts.json"
    env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address,
           "YARD_TEST_FACTS": str(facts)}
    done = subprocess.run(
        [sys.executable, "-c", _WATCHED_TRAIN, "train", "dqn", "--rules", "grid5",
         "--role", "detective", "--opponents", "random,greedy", "--seed", "5",
         "--games", "8", "--hidden", "32,16", "--learn-start", "40", "--train-every", "1",
         "--batch-size", "16", "--eps-decay-games", "10", "--eval-every", "4",
         "--eval-games", "2", "--quiet", "--cluster", "auto", "--actors", "2",
         "--refresh-steps", "5", "--out", str(out),
         "--checkpoint", str(tmp_path / "run.ckpt.pt")],
        capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "after 8 games" in done.stdout
    seen = json.loads(facts.read_text())
    assert seen["actors"] == 2 and seen["refresh_steps"] == 5
    assert seen["games"] == 8 and seen["seen"] == list(range(1, 9))
    assert seen["updates"] > 0 and seen["refreshes"] >= 1
    assert seen["buffer"] > 0 and seen["evals"] == 2
    assert seen["changed"]  # the learner's weights moved
    assert seen["checkpoint"]  # written by train_on_cluster at its evaluations
    model = load_model(out, load_ruleset("grid5"), Role.DETECTIVE)
    state = new_game("grid5", seed=2)
    state = state.apply(state.legal_moves()[0])
    obs = observe(model.encoder, state.view(state.to_move), state.legal_moves())
    assert np.isfinite(model.q(obs)).any()


def test_cli_rejects_a_bad_cluster_address(tmp_path: Path) -> None:
    # In this process: a `yard train` process imports torch and Ray first (seconds); the
    # test above runs the real command.
    done = yard_here("train", "dqn", "--rules", "grid5", "--role", "detective", "--games",
                     "2", "--cluster", "elsewhere", "--out", str(tmp_path / "w.npz"))
    assert done.returncode == 2 and "expected auto, ray://HOST:PORT" in done.stderr
    assert not (tmp_path / "w.npz").exists()
