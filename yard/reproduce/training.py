"""Training runs of ``yard reproduce``: one DQN per :class:`~yard.reproduce.model.Training`
variant, with the trainer of ``yard train dqn`` (:class:`bots.dqn.train.Trainer`).

A run is a pure function of its variant, budget and seed: the trainer seeds Python's and
torch's generators from the seed and uses one torch thread, so the same seed gives the same
weights and the same evaluation curve in any worker process.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from yard.reproduce.model import TRAIN_SEED_OFFSET, ReproduceError, Training


@dataclass(frozen=True)
class TrainTask:
    """One variant to train and where to write its weights."""

    training: Training
    quick: bool
    games: int | None
    seed: int
    path: Path
    eval_games: int | None = None

    @property
    def budget(self) -> dict[str, int]:
        """Training games, evaluation interval and games, ε-decay games."""
        return self.training.budget(self.quick, self.games, self.eval_games)

    @property
    def train_seed(self) -> int:
        """Game seed of the first training game (and the seed of the learner)."""
        return self.seed + TRAIN_SEED_OFFSET


def train_command(task: TrainTask) -> str:
    """The ``yard train dqn`` command that makes the same run (same weights and curve)."""
    t, b = task.training, task.budget
    parts = ["yard", "train", "dqn", "--rules", t.rules, "--role", "mrx", "--opponents",
             ",".join(t.opponents), "--arch", t.arch, "--games", str(b["games"]),
             "--eval-every", str(b["eval_every"]), "--eval-games", str(b["eval_games"]),
             "--eps-decay-games", str(b["eps_decay_games"]), "--seed", str(task.train_seed)]
    if t.hidden is not None:
        parts += ["--hidden", ",".join(map(str, t.hidden))]
    for name, value in t.rewards:
        parts += [f"--reward-{name.replace('_', '-')}", f"{value:g}"]
    parts += ["--quiet", "--out", f"{t.variant}.npz"]
    return shlex.join(parts)


def train_variant(task: TrainTask) -> dict[str, Any]:
    """Train one variant, write its weights to ``task.path`` and return its record: the
    evaluation curve (``evals``: win rate against each opponent every ``eval_every``
    games), the evaluation of the kept weights, wall and CPU seconds."""
    from bots.dqn.agent import DqnConfig
    from bots.dqn.features import Role
    from bots.dqn.model import Arch
    from bots.dqn.train import Rewards, Trainer, TrainSpec
    from game import load_ruleset

    t, b = task.training, task.budget
    known = {f.name for f in fields(Rewards)}
    unknown = [name for name, _ in t.rewards if name not in known]
    if unknown:
        raise ReproduceError(f"variant {t.variant}: unknown reward(s) {unknown}")
    config = DqnConfig(eps_decay_games=b["eps_decay_games"])
    if t.hidden is not None:
        config = DqnConfig(hidden=t.hidden, eps_decay_games=b["eps_decay_games"])
    spec = TrainSpec(load_ruleset(t.rules), Role.MRX, list(t.opponents), b["games"],
                     task.train_seed, arch=Arch(t.arch), config=config,
                     rewards=Rewards(**dict(t.rewards)), eval_every=b["eval_every"],
                     eval_games=b["eval_games"])
    started, cpu = time.perf_counter(), time.process_time()
    trainer = Trainer(spec)
    stats = trainer.train()
    task.path.parent.mkdir(parents=True, exist_ok=True)
    command = train_command(task)
    trainer.save_weights(task.path, {"command": command})
    return {"variant": t.variant, "label": t.label, "arch": t.arch,
            "hidden": list(config.hidden), "rewards": {f.name: getattr(spec.rewards, f.name)
                                                       for f in fields(Rewards)},
            "opponents": list(t.opponents), "seed": task.train_seed, **b,
            "comparisons": list(t.comparisons), "evals": stats.evals,
            "kept_eval": stats.best_eval, "weights": str(task.path), "command": command,
            "seconds": round(time.perf_counter() - started, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2)}
