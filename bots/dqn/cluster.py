"""DQN training with Ray actors (``yard train dqn --cluster ADDRESS --actors N``).

The learner (this process, on the head node: ``--device cuda`` when it has a GPU) owns the
network, the replay memory and the optimiser, exactly as in single-process training. N Ray
actors play the games: each holds a CPU copy of the network (refreshed every K learner
steps, ``--refresh-steps``), plays the game indices it is given with the run's seeds
(game ``i``: seed ``seed + i``, ε of game ``i``, its opponent drawn from a generator seeded
by ``seed`` and ``i``) and returns the finished n-step transitions; the learner feeds them
into its replay memory (:meth:`~bots.dqn.agent.DqnAgent.remember`, which runs the gradient
steps). Evaluations, checkpoints and the weights file are the learner's, unchanged.

Games are seeded, but transitions arrive in the order the actors finish, so a cluster run
is not bit-for-bit reproducible (a single-process run is).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bots.base import Bot
from bots.dqn.agent import Transition
from bots.dqn.model import export_params, load_params
from bots.dqn.train import Trainer, TrainingError, TrainSpec, TrainStats


class ActorTrainer(Trainer):
    """A :class:`Trainer` that plays on CPU and collects its transitions instead of
    learning from them (one per Ray actor)."""

    def __init__(self, spec: TrainSpec) -> None:
        """A trainer for ``spec`` with no transitions collected yet."""
        super().__init__(spec)
        self.collected: list[Transition] = []

    def _finish(self, seat: int, item: Transition, learn: bool) -> None:
        if learn:
            self.collected.extend(self._nstep[seat].push(item))

    def opponent_of(self, game: int) -> Bot:
        """The opponent of game ``game`` (the same on every actor)."""
        return random.Random(self.spec.seed * 1_000_003 + game).choice(self.opponents)

    def generate(self, params: dict[str, Any], games: list[int]
                 ) -> tuple[list[Transition], list[bool]]:
        """Play ``games`` (indices) with ``params``; their transitions and learner wins."""
        load_params(self.agent.net, params)
        wins = []
        for game in games:
            outcome = self.play(self.spec.seed + game, self.opponent_of(game),
                                self.spec.config.epsilon(game), learn=True)
            wins.append(self.learner_won(outcome))
        out, self.collected = self.collected, []
        return out, wins


class GameActor:
    """The Ray actor: an :class:`ActorTrainer` on one CPU."""

    def __init__(self, spec: TrainSpec) -> None:
        """A single-threaded trainer for ``spec``, moved to the CPU."""
        import torch

        torch.set_num_threads(1)
        self.trainer = ActorTrainer(_on_cpu(spec))

    def generate(self, params: dict[str, Any], games: list[int]
                 ) -> tuple[list[Transition], list[bool]]:
        """See :meth:`ActorTrainer.generate`."""
        return self.trainer.generate(params, games)


def _on_cpu(spec: TrainSpec) -> TrainSpec:
    return replace(spec, device="cpu", eval_every=0, time_limit=0.0)


def train_on_cluster(trainer: Trainer, ray: Any, actors: int, refresh_steps: int, *,
                     games_per_task: int = 1,
                     on_game: Callable[[TrainStats], None] | None = None,
                     checkpoint: Path | None = None) -> tuple[TrainStats, int]:
    """Play ``trainer.spec.games`` games on ``actors`` Ray actors (Ray initialised by the
    caller) and learn from them in this process; evaluations and checkpoints as in
    :meth:`Trainer.train`. Returns the stats and how many weight refreshes were sent."""
    if actors < 1 or refresh_steps < 1 or games_per_task < 1:
        raise TrainingError("--actors and --refresh-steps must be at least 1")
    spec, stats, agent = trainer.spec, trainer.stats, trainer.agent
    actor_class = ray.remote(GameActor).options(num_cpus=1)
    workers = [actor_class.remote(spec) for _ in range(actors)]
    started = time.perf_counter() - stats.seconds
    deadline = time.perf_counter() + spec.time_limit if spec.time_limit > 0 else None
    params_ref = ray.put(export_params(agent.net))
    refreshed_at = agent.updates
    refreshes = 0
    next_game = stats.games
    running: dict[Any, tuple[Any, list[int]]] = {}  # generate() ref -> (actor, games)

    def submit(worker: Any) -> None:
        nonlocal next_game
        games = list(range(next_game, min(spec.games, next_game + games_per_task)))
        if games and (deadline is None or time.perf_counter() < deadline):
            next_game = games[-1] + 1
            running[worker.generate.remote(params_ref, games)] = (worker, games)

    try:
        for worker in workers:
            submit(worker)
        while running:
            (ref,), _ = ray.wait(list(running), num_returns=1)
            worker, _ = running.pop(ref)
            transitions, wins = ray.get(ref)
            _learn(trainer, transitions)
            if agent.updates - refreshed_at >= refresh_steps:
                params_ref = ray.put(export_params(agent.net))
                refreshed_at = agent.updates
                refreshes += 1
            submit(worker)
            _count_games(trainer, wins, started, bool(running), on_game, checkpoint)
    finally:
        for worker in workers:
            ray.kill(worker)
    return stats, refreshes


def _learn(trainer: Trainer, transitions: list[Transition]) -> None:
    """Feed ``transitions`` to the agent at the learning rate of the games played so far."""
    agent, stats = trainer.agent, trainer.stats
    agent.set_learning_rate(trainer.spec.config.learning_rate(stats.games))
    for item in transitions:
        loss = agent.remember(item)
        if loss is not None:
            stats.recent_loss.append(loss)


def _count_games(trainer: Trainer, wins: list[bool], started: float, more: bool,
                 on_game: Callable[[TrainStats], None] | None,
                 checkpoint: Path | None) -> None:
    """Count the finished games (``wins``: whether the learner won each), evaluating and
    keeping a checkpoint when due (``more``: games are still running)."""
    spec, stats = trainer.spec, trainer.stats
    for won in wins:
        stats.games += 1
        stats.recent_wins.append(won)
        stats.seconds = time.perf_counter() - started
        last = stats.games == spec.games or not more
        if spec.eval_every and (stats.games % spec.eval_every == 0 or last):
            trainer.evaluate_and_keep()
            if checkpoint is not None:
                trainer.save_checkpoint(checkpoint)
        if on_game is not None:
            on_game(stats)
