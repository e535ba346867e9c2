"""DQN training loop: in-process games against registered bots, evaluation, checkpoints.

The learner plays one role: Mister X (seat 0) or the detectives (every detective seat, or
only seat 1 beside a scripted ``partner``). Each game the opposing side is one of the named
opponent bots, drawn at random (seeded). Game ``i`` uses seed ``seed + i``.

Rewards (defaults from the issue): Mister X +1 per survived round, -5 when caught or
cornered; a detective +1 for stepping on a possible location of Mister X, +10 when its move
catches (or corners) him, -10 when the detectives lose.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bots.arena import bot_seed
from bots.base import Bot
from bots.dqn.agent import DqnAgent, DqnConfig, NStep, Transition
from bots.dqn.features import (
    Encoder,
    GridEncoder,
    Role,
    acting_station,
    board_signature,
    make_encoder,
    move_of,
    observe,
    recorded_features,
)
from bots.dqn.model import Arch, export_params
from bots.dqn.policy import WeightsError, save_weights
from bots.registry import bot_from_spec
from game import MRX, Outcome, Ruleset, State, View, Winner, new_game
from game.errors import YardError


class TrainingError(YardError):
    """A training request cannot be carried out (bad device, opponent, checkpoint)."""


@dataclass
class Rewards:
    """Reward values (each is a ``yard train dqn`` option ``--reward-<name>``)."""

    mrx_round: float = 1.0
    """Mister X, per round survived."""
    mrx_caught: float = -5.0
    """Mister X, when caught or cornered."""
    det_possible: float = 1.0
    """A detective stepping on a possible location of Mister X."""
    det_capture: float = 10.0
    """The detective whose move catches or corners Mister X."""
    det_lose: float = -10.0
    """Every learning detective, when the detectives lose."""
    det_team: float = 0.0
    """Every other learning detective, when a teammate catches or corners him (off by
    default: the issue's rewards credit only the capturing detective)."""
    det_closer: float = 0.0
    """Potential-based shaping (off by default): a detective's potential is minus this
    times its mean distance to the possible locations; reward += γ·Φ(s') − Φ(s)."""
    mrx_far: float = 0.0
    """Potential-based shaping (off by default): Mister X's potential is this times his
    distance to the nearest detective."""


@dataclass
class TrainSpec:
    """One training run."""

    rules: Ruleset
    role: Role
    opponents: list[str]
    games: int
    seed: int = 0
    device: str = "cpu"
    partner: str | None = None
    arch: Arch | None = None
    config: DqnConfig = field(default_factory=DqnConfig)
    rewards: Rewards = field(default_factory=Rewards)
    eval_every: int = 500
    eval_games: int = 100
    keep_best: bool = True
    features: str | None = None
    """Grid encoder version ("grid-v1", "grid-v2"); default the newest."""
    time_limit: float = 0.0
    """Stop after this many seconds of this invocation's wall time (0: no limit); the run
    then ends with an evaluation, as at its last game."""


@dataclass
class TrainStats:
    """Running numbers shown by the progress bar and returned at the end."""

    games: int = 0
    recent_wins: deque[bool] = field(default_factory=lambda: deque(maxlen=200))
    recent_loss: deque[float] = field(default_factory=lambda: deque(maxlen=200))
    evals: list[dict[str, Any]] = field(default_factory=list)
    best_score: float = -1.0
    best_eval: dict[str, Any] | None = None
    """The evaluation of the weights :meth:`Trainer.final_params` ships under keep-best."""
    seconds: float = 0.0

    @property
    def win_rate(self) -> float:
        """Learner's win rate over the recent games."""
        return sum(self.recent_wins) / len(self.recent_wins) if self.recent_wins else 0.0

    @property
    def loss(self) -> float:
        """Mean recent loss."""
        return float(np.mean(self.recent_loss)) if self.recent_loss else 0.0


def make_meta(spec: TrainSpec, encoder: Encoder) -> dict[str, Any]:
    """The self-description stored with the weights."""
    arch = spec.arch or (Arch.MLP if isinstance(encoder, GridEncoder) else Arch.SCORER)
    grid = isinstance(encoder, GridEncoder)
    if grid == (arch is Arch.SCORER):
        raise TrainingError(f"architecture {arch.value} does not fit board "
                            f"{spec.rules.board.name} (grid boards: mlp or cnn; graphs: scorer)")
    meta: dict[str, Any] = {
        "kind": "grid" if grid else "graph", "arch": arch.value, "role": spec.role.value,
        "ruleset": spec.rules.name, "signature": board_signature(spec.rules),
        "state_dim": encoder.state_dim, "hidden": list(spec.config.hidden)}
    if isinstance(encoder, GridEncoder):
        meta.update(planes=encoder.n_planes, scalars=encoder.n_scalars,
                    frame=list(encoder.frame), features=encoder.features)
    else:
        meta["cand_dim"] = encoder.cand_dim
    return meta


class Trainer:
    """Owns the agent, the opponent bots and the episode loop of one training run."""

    def __init__(self, spec: TrainSpec) -> None:
        """Build the agent, the opponents and the encoder that ``spec`` describes."""
        check_device(spec.device)
        torch.set_num_threads(1)
        self.spec = spec
        grid = spec.rules.board.is_grid and spec.arch is not Arch.SCORER
        if spec.features is not None and not grid:
            raise TrainingError(f"--features {spec.features}: only grid encoders have versions")
        try:
            self.encoder = make_encoder(spec.rules, "grid" if grid else "graph",
                                        spec.features if grid else None)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        self.meta = make_meta(spec, self.encoder)
        self.agent = DqnAgent(self.meta, spec.config, spec.device, spec.seed)
        self.rng = random.Random(spec.seed)
        self.opponents = [bot_from_spec(name, spec.seed) for name in spec.opponents]
        self.partner = bot_from_spec(spec.partner, spec.seed) if spec.partner else None
        self._check_roles()
        self.stats = TrainStats()
        self._nstep: dict[int, NStep] = {}
        self.dist = np.asarray(spec.rules.board.distances(), dtype=np.float32)
        self.best_params = export_params(self.agent.net)

    def _check_roles(self) -> None:
        need = "detectives" if self.spec.role is Role.MRX else "mrx"
        for bot in self.opponents:
            if need not in bot.roles:
                raise TrainingError(f"opponent {bot.name!r} cannot play {need}")
        if self.partner is not None and "detectives" not in self.partner.roles:
            raise TrainingError(f"partner {self.partner.name!r} cannot play detectives")
        if self.partner is not None and self.spec.role is Role.MRX:
            raise TrainingError("--partner is for training detectives")

    # ------------------------------------------------------------------ episodes

    def learner_seats(self, state: State) -> set[int]:
        """Seats the learner plays in this game."""
        if self.spec.role is Role.MRX:
            return {MRX}
        if self.partner is not None:
            return {1}
        return set(range(1, state.n_detectives + 1))

    def play(self, seed: int, opponent: Bot, epsilon: float, learn: bool) -> Outcome:
        """Play one game; with ``learn`` store transitions and train on the way."""
        state = new_game(self.spec.rules, seed)
        mine = self.learner_seats(state)
        others = self._seat_bots(state, mine, opponent, seed)
        pending: dict[int, Transition] = {}
        self._nstep = {seat: NStep(self.spec.config.n_step, self.spec.config.gamma)
                       for seat in mine}
        rew = self.spec.rewards
        while state.outcome is None:
            seat = state.to_move
            legal = state.legal_moves()
            view = state.view(seat)
            if seat not in mine:
                move = others[seat].choose(view, legal)
            else:
                obs = observe(self.encoder, view, legal)
                phi = self.potential(view)
                if seat in pending:
                    done = pending.pop(seat)
                    done.next_obs = obs
                    done.reward += (rew.mrx_round if seat == MRX else 0.0) \
                        + self.spec.config.gamma * phi - done.extra["phi"]
                    self._finish(seat, done, learn)
                action = self.agent.act(obs, epsilon)
                move = move_of(self.encoder, view, legal, action)
                gain = rew.det_possible if seat != MRX and move.to in view.possible else 0.0
                pending[seat] = Transition(obs, action, gain, None, {"phi": phi})
            state = state.apply_unchecked(move)
            if state.outcome is not None and seat != MRX and seat in pending and \
                    state.outcome.winner is Winner.DETECTIVES:
                pending[seat].reward = rew.det_capture
                for other, item in pending.items():
                    if other != seat:
                        item.reward += rew.det_team
        self._end(state.outcome, pending, learn)
        return state.outcome

    def _seat_bots(self, state: State, mine: set[int], opponent: Bot,
                   seed: int) -> dict[int, Bot]:
        bots: dict[int, Bot] = {}
        for seat in range(state.n_detectives + 1):
            if seat in mine:
                continue
            bots[seat] = self.partner if seat != MRX and self.partner else opponent
        for bot in {id(b): b for b in bots.values()}.values():
            seats = [s for s, b in bots.items() if b is bot]
            bot.begin(state.rules, seats, bot_seed(seed, seats[0]))
        return bots

    def _end(self, outcome: Outcome, pending: dict[int, Transition], learn: bool) -> None:
        rew = self.spec.rewards
        mrx_won = outcome.winner is Winner.MRX
        for seat, item in pending.items():
            item.reward -= item.extra["phi"]
            if seat == MRX:
                item.reward += rew.mrx_round if mrx_won else rew.mrx_caught
            elif mrx_won:
                item.reward += rew.det_lose
            self._finish(seat, item, learn)

    def potential(self, view: View) -> float:
        """Shaping potential Φ of the acting seat (0 unless a shaping reward is set)."""
        rew = self.spec.rewards
        here = acting_station(view)
        if view.to_move == MRX:
            if not rew.mrx_far:
                return 0.0
            return rew.mrx_far * float(self.dist[here, list(view.detectives)].min())
        if not rew.det_closer or not view.possible:
            return 0.0
        return -rew.det_closer * float(self.dist[here, list(view.possible)].mean())

    def _finish(self, seat: int, item: Transition, learn: bool) -> None:
        if not learn:
            return
        for ready in self._nstep[seat].push(item):
            loss = self.agent.remember(ready)
            if loss is not None:
                self.stats.recent_loss.append(loss)

    def learner_won(self, outcome: Outcome) -> bool:
        """Did the learner's side win?"""
        side = Winner.MRX if self.spec.role is Role.MRX else Winner.DETECTIVES
        return outcome.winner is side

    # ------------------------------------------------------------------ the run

    def train(self, on_game: Callable[[TrainStats], None] | None = None,
              checkpoint: Path | None = None) -> TrainStats:
        """Play games up to ``spec.games`` (continuing after a resume), or until
        ``spec.time_limit`` runs out."""
        spec = self.spec
        started = time.perf_counter() - self.stats.seconds
        deadline = time.perf_counter() + spec.time_limit if spec.time_limit > 0 else None
        while self.stats.games < spec.games:
            i = self.stats.games
            opponent = self.rng.choice(self.opponents)
            self.agent.set_learning_rate(spec.config.learning_rate(i))
            outcome = self.play(spec.seed + i, opponent, spec.config.epsilon(i), learn=True)
            self.stats.games += 1
            self.stats.recent_wins.append(self.learner_won(outcome))
            self.stats.seconds = time.perf_counter() - started
            out_of_time = deadline is not None and time.perf_counter() >= deadline
            if spec.eval_every and (self.stats.games % spec.eval_every == 0
                                    or self.stats.games == spec.games or out_of_time):
                self.evaluate_and_keep()
                if checkpoint is not None:
                    self.save_checkpoint(checkpoint)
            if on_game is not None:
                on_game(self.stats)
            if out_of_time:
                break
        return self.stats

    def evaluate(self, games: int, seed: int = 10**6) -> dict[str, float]:
        """Greedy win rate of the learner against each opponent (fixed seeds)."""
        out: dict[str, float] = {}
        for bot in self.opponents:
            wins = sum(self.learner_won(self.play(seed + g, bot, 0.0, learn=False))
                       for g in range(games))
            out[bot.name] = wins / games if games else 0.0
        return out

    def evaluate_and_keep(self) -> dict[str, float]:
        """Evaluate now; remember the weights if they are the best so far."""
        rates = self.evaluate(self.spec.eval_games)
        score = float(np.mean(list(rates.values())))
        self.stats.evals.append({"games": self.stats.games, **rates})
        if score >= self.stats.best_score or not self.spec.keep_best:
            self.stats.best_score = score
            self.stats.best_eval = self.stats.evals[-1]
            self.best_params = export_params(self.agent.net)
        return rates

    def final_params(self) -> dict[str, Any]:
        """The weights to ship: the best evaluated ones (``keep_best``) or the latest."""
        if self.spec.keep_best and self.stats.evals:
            return self.best_params
        return export_params(self.agent.net)

    def save_weights(self, path: Path, info: dict[str, Any]) -> None:
        """Write the weights file with training details in its meta."""
        training = {"opponents": self.spec.opponents, "partner": self.spec.partner,
                    "games": self.stats.games, "seed": self.spec.seed,
                    "seconds": round(self.stats.seconds, 1), "evals": self.stats.evals,
                    "config": self.spec.config.to_dict(), "rewards": asdict(self.spec.rewards),
                    "shipped_eval": self.stats.best_eval if self.spec.keep_best
                    else (self.stats.evals[-1] if self.stats.evals else None),
                    **info}
        save_weights(path, {**self.meta, "training": training}, self.final_params())

    # ------------------------------------------------------------------ checkpoints

    def save_checkpoint(self, path: Path) -> None:
        """Save networks, optimiser and progress (not the replay buffer)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = {"games": self.stats.games, "seconds": self.stats.seconds,
                 "evals": self.stats.evals, "best_score": self.stats.best_score,
                 "best_eval": self.stats.best_eval,
                 "best_params": self.best_params, "rng": self.rng.getstate(),
                 "opponents": self.spec.opponents, "eval_games": self.spec.eval_games}
        torch.save(self.agent.checkpoint(extra), path)

    def resume(self, path: Path) -> None:
        """Continue from a checkpoint written by :meth:`save_checkpoint`."""
        try:
            ckpt: dict[str, Any] = torch.load(path, map_location=self.agent.device,
                                              weights_only=False)
        except (OSError, RuntimeError) as exc:
            raise TrainingError(f"cannot read checkpoint {path}: {exc}") from None
        meta = ckpt.get("meta")
        if isinstance(meta, dict) and meta.get("kind") == "grid":
            meta = {**meta, "features": recorded_features(meta)}
        if meta != self.meta:
            raise WeightsError(f"checkpoint {path} is for {meta}, "
                               f"not for this run ({self.meta})")
        self.agent.restore(ckpt)
        self.stats.games = int(ckpt["games"])
        self.stats.seconds = float(ckpt["seconds"])
        self.stats.evals = list(ckpt["evals"])
        same_eval = (ckpt.get("opponents"), ckpt.get("eval_games")) == \
            (self.spec.opponents, self.spec.eval_games)
        # Scores from another evaluation (other opponents or game count) are not comparable.
        self.stats.best_score = float(ckpt["best_score"]) if same_eval else -1.0
        self.stats.best_eval = ckpt.get("best_eval")
        self.best_params = ckpt["best_params"]
        self.rng.setstate(ckpt["rng"])


def check_device(device: str) -> None:
    """Reject devices that are unknown or not available here."""
    if device == "cpu":
        return
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise TrainingError(f"--device {device}: CUDA is not available on this machine "
                                "(torch reports no GPU); use --device cpu")
        return
    raise TrainingError(f"--device {device!r}: use cpu or cuda")

