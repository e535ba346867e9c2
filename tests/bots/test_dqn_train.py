"""DQN learning: a short run improves on grid5; weights and checkpoints round-trip."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from bots.dqn.agent import DqnConfig, NStep, Transition
from bots.dqn.bot import load_model
from bots.dqn.features import Obs, Role, observe
from bots.dqn.model import build_net, export_params, load_params
from bots.dqn.policy import WeightsError, load_weights
from bots.dqn.train import Trainer, TrainingError, TrainSpec
from game import load_ruleset, new_game

FAST = DqnConfig(hidden=(64, 32), lr=1e-3, learn_start=300, train_every=2, target_sync=200,
                 eps_decay_games=250, buffer_size=5_000)


def _spec(rules: str, role: Role, games: int, **kw: object) -> TrainSpec:
    return TrainSpec(load_ruleset(rules), role, ["random"], games, seed=11, config=FAST,
                     eval_every=0, **kw)  # type: ignore[arg-type]


def test_short_training_beats_untrained_net_on_grid5() -> None:
    # Seeded, so one fixed outcome: 0.42 -> 0.83 of 60 evaluation games after 150 training
    # games (seeds 1, 2, 3 gain 0.37, 0.25, 0.53 alike; 400 games and 150 evaluation games
    # cost three times as much for the same claim). Strength itself: bench/dqn.py.
    trainer = Trainer(_spec("grid5", Role.DETECTIVE, 150))
    before = trainer.evaluate(60)["random"]
    trainer.train()
    after = trainer.evaluate(60)["random"]
    assert after >= before + 0.15, (before, after)


def _trained(rules: str, role: Role, games: int = 40) -> Trainer:
    cfg = DqnConfig(hidden=(32, 16), learn_start=50, eps_decay_games=20, batch_size=16)
    trainer = Trainer(TrainSpec(load_ruleset(rules), role, ["random"], games, seed=3,
                                config=cfg, eval_every=0))
    trainer.train()
    return trainer


@pytest.mark.parametrize(("rules", "role"), [("grid5", Role.MRX), ("dash", Role.DETECTIVE)])
def test_weights_round_trip_gives_identical_q_values(rules: str, role: Role,
                                                     tmp_path: Path) -> None:
    trainer = _trained(rules, role, games=6 if rules == "dash" else 40)
    assert trainer.agent.updates > 0 or rules == "dash"
    path = tmp_path / "w.npz"
    trainer.save_weights(path, {"command": "test"})
    meta, params = load_weights(path)
    net = build_net(meta)
    load_params(net, params)
    model = load_model(path, trainer.spec.rules, role)
    state = new_game(rules, seed=8)
    if role is Role.DETECTIVE:
        state = state.apply(state.legal_moves()[0])
    obs = observe(model.encoder, state.view(state.to_move), state.legal_moves())
    trained_q = trainer.agent.q_values(obs)
    trainer.agent.net = net
    assert np.array_equal(trainer.agent.q_values(obs), trained_q)
    finite = np.isfinite(trained_q)
    assert np.allclose(model.q(obs)[finite], trained_q[finite], atol=1e-5)


def test_checkpoint_resume_continues_the_run(tmp_path: Path) -> None:
    trainer = _trained("grid5", Role.DETECTIVE, games=30)
    ckpt = tmp_path / "run.ckpt.pt"
    trainer.save_checkpoint(ckpt)
    again = Trainer(TrainSpec(load_ruleset("grid5"), Role.DETECTIVE, ["random"], 45, seed=3,
                              config=trainer.spec.config, eval_every=0))
    again.resume(ckpt)
    assert again.stats.games == 30
    for a, b in zip(again.agent.net.parameters(), trainer.agent.net.parameters(), strict=True):
        assert torch.equal(a, b)
    again.train()
    assert again.stats.games == 45


def test_resume_uses_the_learning_rate_of_the_new_run(tmp_path: Path) -> None:
    trainer = _trained("grid5", Role.DETECTIVE, games=2)
    ckpt = tmp_path / "run.ckpt.pt"
    trainer.save_checkpoint(ckpt)
    slower = replace(trainer.spec.config, lr=1e-5)
    again = Trainer(TrainSpec(load_ruleset("grid5"), Role.DETECTIVE, ["random"], 4, seed=3,
                              config=slower, eval_every=0))
    again.resume(ckpt)
    assert [g["lr"] for g in again.agent.opt.param_groups] == [1e-5]


def test_learning_rate_decays_linearly_when_asked() -> None:
    assert DqnConfig(lr=1e-3).learning_rate(10**6) == 1e-3
    decaying = DqnConfig(lr=1e-3, lr_end=1e-4, lr_decay_games=100)
    assert decaying.learning_rate(0) == 1e-3
    assert decaying.learning_rate(50) == pytest.approx(5.5e-4)
    assert decaying.learning_rate(100) == decaying.learning_rate(5000) == pytest.approx(1e-4)
    spec = _spec("grid5", Role.DETECTIVE, 3)
    spec.config = replace(FAST, lr_end=1e-5, lr_decay_games=2)
    trainer = Trainer(spec)
    trainer.train()
    assert [g["lr"] for g in trainer.agent.opt.param_groups] == [pytest.approx(1e-5)]


def test_time_limit_stops_early_with_a_final_evaluation() -> None:
    spec = _spec("grid5", Role.DETECTIVE, 1000)
    spec.time_limit, spec.eval_every, spec.eval_games = 1e-9, 500, 2
    trainer = Trainer(spec)
    stats = trainer.train()
    assert stats.games == 1
    assert [e["games"] for e in stats.evals] == [1]
    assert stats.best_eval == stats.evals[0]


def test_weights_record_which_evaluation_they_ship(tmp_path: Path) -> None:
    spec = _spec("grid5", Role.DETECTIVE, 4)
    spec.eval_every, spec.eval_games = 1, 3
    trainer = Trainer(spec)
    trainer.train()
    scores = [e["random"] for e in trainer.stats.evals]
    trainer.save_weights(tmp_path / "w.npz", {"command": "test"})
    shipped = load_weights(tmp_path / "w.npz")[0]["training"]["shipped_eval"]
    assert shipped["random"] == max(scores)
    # keep-best takes the latest of equal scores
    assert shipped["games"] == max(e["games"] for e in trainer.stats.evals
                                   if e["random"] == max(scores))


def test_checkpoints_from_before_encoder_versions_resume_as_v1(tmp_path: Path) -> None:
    spec = _spec("grid5", Role.DETECTIVE, 2, features="grid-v1")
    trainer = Trainer(spec)
    trainer.train()
    ckpt = tmp_path / "old.ckpt.pt"
    trainer.save_checkpoint(ckpt)
    saved = torch.load(ckpt, weights_only=False)
    del saved["meta"]["features"]  # as written before versions existed
    torch.save(saved, ckpt)
    Trainer(_spec("grid5", Role.DETECTIVE, 3, features="grid-v1")).resume(ckpt)
    with pytest.raises(WeightsError, match="not for this run"):
        Trainer(_spec("grid5", Role.DETECTIVE, 3)).resume(ckpt)


def test_resume_rejects_a_checkpoint_of_another_model(tmp_path: Path) -> None:
    trainer = _trained("grid5", Role.MRX, games=2)
    ckpt = tmp_path / "mrx.ckpt.pt"
    trainer.save_checkpoint(ckpt)
    other = Trainer(_spec("grid5", Role.DETECTIVE, 2))
    with pytest.raises(WeightsError, match="not for this run"):
        other.resume(ckpt)


def test_bad_requests_are_clear_errors() -> None:
    with pytest.raises(TrainingError, match="cannot play detectives"):
        Trainer(TrainSpec(load_ruleset("grid5"), Role.MRX, ["run"], 1))
    if not torch.cuda.is_available():
        with pytest.raises(TrainingError, match="CUDA is not available"):
            Trainer(TrainSpec(load_ruleset("grid5"), Role.MRX, ["random"], 1, device="cuda"))


def test_loaded_params_match_export() -> None:
    trainer = _trained("grid5", Role.MRX, games=1)
    params = export_params(trainer.agent.net)
    net = build_net(trainer.meta)
    load_params(net, params)
    for key, value in net.state_dict().items():
        assert np.array_equal(value.numpy(), params[key])


def test_n_step_returns_sum_discounted_rewards_and_cut_at_the_end() -> None:
    gamma = 0.5
    joiner = NStep(3, gamma)
    obs = [Obs(np.full(2, i, dtype=np.float32)) for i in range(5)]
    ready: list[Transition] = []
    for i in range(4):
        ready += joiner.push(Transition(obs[i], i, 1.0, obs[i + 1] if i < 3 else None))
    # one full 3-step transition from move 0, then moves 1..3 cut short by the game's end
    assert [(t.action, t.steps, t.reward) for t in ready] == [
        (0, 3, 1.75), (1, 3, 1.75), (2, 2, 1.5), (3, 1, 1.0)]
    assert ready[0].next_obs is obs[3]
    assert all(t.next_obs is None for t in ready[1:])


def test_detective_trains_beside_a_scripted_partner() -> None:
    cfg = DqnConfig(hidden=(16,), learn_start=10, batch_size=8)
    trainer = Trainer(TrainSpec(load_ruleset("dash").with_detectives(3), Role.DETECTIVE,
                                ["random"], 3, seed=2, config=cfg, partner="rush",
                                eval_every=0))
    assert trainer.learner_seats(new_game(trainer.spec.rules, 1)) == {1}
    trainer.train()
    assert trainer.stats.games == 3 and trainer.agent.moves > 0
    with pytest.raises(TrainingError, match="partner"):
        Trainer(TrainSpec(load_ruleset("grid5"), Role.MRX, ["rush"], 1, partner="rush"))
