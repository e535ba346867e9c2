"""The DQN learner: experience replay, a target network, optional Double DQN.

Loss is Huber (smooth L1) between ``Q(s, a)`` and ``r + γ · max_a' Q_target(s', a')``
(``0`` after a terminal step). With Double DQN the next action is chosen by the online
network and valued by the target network. Optimiser: Adam with gradient-norm clipping.
Exploration is ε-greedy with ε decaying linearly per game.
"""

from __future__ import annotations

import copy
import random
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from bots.dqn.adam import Adam
from bots.dqn.features import FloatArray, Obs
from bots.dqn.model import Arch, build_net


@dataclass
class DqnConfig:
    """Learning hyperparameters (each is a ``yard train dqn`` option of the same name)."""

    hidden: tuple[int, ...] = (128, 64)
    """Hidden layer sizes."""
    lr: float = 5e-4
    """Adam learning rate."""
    gamma: float = 0.95
    """Discount per own move."""
    batch_size: int = 64
    """Transitions per gradient step."""
    buffer_size: int = 20_000
    """Replay buffer capacity (transitions)."""
    learn_start: int = 1_000
    """Transitions collected before learning starts."""
    train_every: int = 2
    """Own moves between gradient steps."""
    target_sync: int = 500
    """Gradient steps between target-network copies."""
    double_dqn: bool = True
    """Choose the next action with the online net, value it with the target net."""
    eps_start: float = 1.0
    """ε at the first game."""
    eps_end: float = 0.05
    """ε after the decay."""
    eps_decay_games: int = 1_000
    """Games over which ε decays linearly."""
    grad_clip: float = 10.0
    """Maximum gradient norm."""
    n_step: int = 3
    """Own moves per return (1: plain one-step Q-learning)."""
    lr_end: float = 0.0
    """Learning rate reached after ``lr_decay_games`` (linear decay; 0: keep ``lr``)."""
    lr_decay_games: int = 0
    """Games over which the learning rate decays to ``lr_end`` (0: no decay)."""

    def learning_rate(self, game: int) -> float:
        """Adam's learning rate for game number ``game`` (0-based)."""
        if self.lr_end <= 0 or self.lr_decay_games <= 0:
            return self.lr
        frac = min(1.0, game / self.lr_decay_games)
        return self.lr + (self.lr_end - self.lr) * frac

    def epsilon(self, game: int) -> float:
        """ε for game number ``game`` (0-based)."""
        frac = min(1.0, game / max(self.eps_decay_games, 1))
        return self.eps_start + (self.eps_end - self.eps_start) * frac

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in weights files)."""
        return {**asdict(self), "hidden": list(self.hidden)}


@dataclass
class Transition:
    """One own move and what followed until the seat's next decision (or the game's end)."""

    obs: Obs
    action: int
    reward: float
    next_obs: Obs | None
    extra: dict[str, Any] = field(default_factory=dict)
    steps: int = 1
    """Own moves covered (n-step returns): the bootstrap is discounted by γ**steps."""


class NStep:
    """Turns one seat's successive one-step transitions into n-step ones.

    ``reward`` becomes ``r_0 + γ r_1 + … + γ^(n-1) r_(n-1)`` and ``next_obs`` the state n
    own moves later; the last ones of a game are cut short at the terminal step.
    """

    def __init__(self, n: int, gamma: float) -> None:
        """Accumulate ``n`` steps discounted by ``gamma``."""
        self.n = n
        self.gamma = gamma
        self.window: list[Transition] = []

    def push(self, item: Transition) -> list[Transition]:
        """Add a one-step transition; returns the n-step transitions now complete."""
        self.window.append(item)
        if item.next_obs is None:
            out = [self._join(self.window[i:]) for i in range(len(self.window))]
            self.window = []
            return out
        if len(self.window) < self.n:
            return []
        out = [self._join(self.window)]
        self.window.pop(0)
        return out

    def _join(self, items: list[Transition]) -> Transition:
        reward = sum(t.reward * self.gamma ** i for i, t in enumerate(items))
        first, last = items[0], items[-1]
        return Transition(first.obs, first.action, reward, last.next_obs, first.extra,
                          len(items))


class ReplayBuffer:
    """A fixed-size ring of transitions, sampled uniformly (seeded)."""

    def __init__(self, capacity: int, seed: int | None = None) -> None:
        """An empty buffer of at most ``capacity`` transitions, sampled with ``seed``."""
        self.capacity = capacity
        self.items: list[Transition] = []
        self.pos = 0
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        """The number of transitions held."""
        return len(self.items)

    def push(self, item: Transition) -> None:
        """Add a transition, overwriting the oldest when full."""
        if len(self.items) < self.capacity:
            self.items.append(item)
        else:
            self.items[self.pos] = item
        self.pos = (self.pos + 1) % self.capacity

    def sample(self, n: int) -> list[Transition]:
        """``n`` transitions drawn uniformly with replacement."""
        return [self.items[self.rng.randrange(len(self.items))] for _ in range(n)]


def _compact(obs: Obs) -> Obs:
    """Half-precision copy for the replay buffer (the inputs are 0/1 and small ratios)."""
    return Obs(obs.state.astype(np.float16), obs.mask, obs.dests,
               None if obs.cands is None else obs.cands.astype(np.float16))


class DqnAgent:
    """Online and target networks, optimiser and replay buffer for one model."""

    def __init__(self, meta: dict[str, Any], config: DqnConfig, device: str = "cpu",
                 seed: int | None = None) -> None:
        """Build the networks and the optimiser that ``meta`` and ``config`` describe."""
        self.meta = meta
        self.config = config
        self.device = torch.device(device)
        torch.set_num_threads(1)  # tiny networks: extra threads only contend for the cores
        if seed is not None:
            torch.manual_seed(seed)
        self.net = build_net(meta).to(self.device)
        self.target = copy.deepcopy(self.net)
        self.opt = Adam(self.net.parameters(), lr=config.lr)
        self.buffer = ReplayBuffer(config.buffer_size, seed)
        self.rng = random.Random(seed)
        self.graph = Arch(meta["arch"]) is Arch.SCORER
        self.moves = 0
        self.updates = 0

    # ------------------------------------------------------------------ acting

    @torch.no_grad()
    def q_values(self, obs: Obs) -> FloatArray:
        """Q-value of each action (grid, illegal ones ``-inf``) or candidate (graph)."""
        state = torch.from_numpy(obs.state).to(self.device)[None, :]
        if self.graph:
            assert obs.dests is not None and obs.cands is not None
            owner = torch.zeros(len(obs.dests), dtype=torch.long, device=self.device)
            q = self.net(state, torch.from_numpy(obs.dests).to(self.device),
                         torch.from_numpy(obs.cands).to(self.device), owner)
            out: FloatArray = q.cpu().numpy()
            return out
        assert obs.mask is not None
        values: FloatArray = self.net(state)[0].cpu().numpy()
        return np.where(obs.mask, values, -np.inf).astype(np.float32)

    def act(self, obs: Obs, epsilon: float) -> int:
        """ε-greedy action index."""
        if self.rng.random() < epsilon:
            if obs.mask is not None:
                return self.rng.choice(np.flatnonzero(obs.mask).tolist())
            assert obs.dests is not None
            return self.rng.randrange(len(obs.dests))
        return int(np.argmax(self.q_values(obs)))

    # ------------------------------------------------------------------ learning

    def remember(self, item: Transition) -> float | None:
        """Store a transition; run a gradient step when due. Returns the loss if one ran."""
        item.obs = _compact(item.obs)
        if item.next_obs is not None:
            item.next_obs = _compact(item.next_obs)
        self.buffer.push(item)
        self.moves += 1
        cfg = self.config
        if len(self.buffer) < cfg.learn_start or self.moves % cfg.train_every:
            return None
        return self.learn()

    def learn(self) -> float:
        """One gradient step on a sampled batch; returns the Huber loss."""
        batch = self.buffer.sample(self.config.batch_size)
        q, target = self._graph_batch(batch) if self.graph else self._grid_batch(batch)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        nn.utils.clip_grad_norm_(self.net.parameters(), self.config.grad_clip)
        self.opt.step()
        self.updates += 1
        if self.updates % self.config.target_sync == 0:
            self.sync_target()
        return float(loss.item())

    def sync_target(self) -> None:
        """Copy the online weights into the target network."""
        self.target.load_state_dict(self.net.state_dict())

    def _tensor(self, arrays: list[Any], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.from_numpy(np.stack(arrays)).to(self.device, dtype)

    def _returns(self, batch: list[Transition], next_value: torch.Tensor) -> torch.Tensor:
        rewards = torch.tensor([t.reward for t in batch], device=self.device)
        discount = torch.tensor([self.config.gamma ** t.steps if t.next_obs is not None
                                 else 0.0 for t in batch], device=self.device)
        return rewards + discount * torch.where(discount > 0, next_value, 0.0)

    def _grid_batch(self, batch: list[Transition]) -> tuple[torch.Tensor, torch.Tensor]:
        states = self._tensor([t.obs.state for t in batch])
        actions = torch.tensor([t.action for t in batch], device=self.device)
        q = self.net(states).gather(1, actions[:, None]).squeeze(1)
        dummy_mask = np.ones(4, dtype=np.bool_)
        nexts = [t.next_obs or Obs(t.obs.state, dummy_mask) for t in batch]
        with torch.no_grad():
            nstates = self._tensor([n.state for n in nexts])
            masks = self._tensor([n.mask for n in nexts], torch.bool)
            target_q = self.target(nstates).masked_fill(~masks, -torch.inf)
            if self.config.double_dqn:
                best = self.net(nstates).masked_fill(~masks, -torch.inf).argmax(1)
                value = target_q.gather(1, best[:, None]).squeeze(1)
            else:
                value = target_q.max(1).values
        return q, self._returns(batch, value)

    def _graph_batch(self, batch: list[Transition]) -> tuple[torch.Tensor, torch.Tensor]:
        dev = self.device
        states = self._tensor([t.obs.state for t in batch])
        dests = torch.tensor([int(t.obs.dests[t.action]) for t in batch  # type: ignore[index]
                              ], device=dev)
        cands = self._tensor([t.obs.cands[t.action] for t in batch])  # type: ignore[index]
        owner = torch.arange(len(batch), device=dev)
        q = self.net(states, dests, cands, owner)
        with torch.no_grad():
            value = self._graph_next_value(batch)
        return q, self._returns(batch, value)

    def _graph_next_value(self, batch: list[Transition]) -> torch.Tensor:
        dev = self.device
        value = torch.zeros(len(batch), device=dev)
        live = [(i, t.next_obs) for i, t in enumerate(batch) if t.next_obs is not None]
        if not live:
            return value
        states = self._tensor([n.state for _, n in live])
        owner = torch.from_numpy(np.concatenate(
            [np.full(len(n.dests), j) for j, (_, n) in enumerate(live)])).to(dev)  # type: ignore[arg-type]
        dests = torch.from_numpy(np.concatenate([n.dests for _, n in live])).to(dev)
        cands = torch.from_numpy(np.concatenate([n.cands for _, n in live])).to(dev).float()
        target_q = self.target(states, dests, cands, owner)
        chooser = self.net(states, dests, cands, owner) if self.config.double_dqn else target_q
        best = torch.full((len(live),), -torch.inf, device=dev).scatter_reduce(
            0, owner, chooser, reduce="amax")
        picked = torch.where(chooser >= best[owner], target_q, -torch.inf)
        live_value = torch.full((len(live),), -torch.inf, device=dev).scatter_reduce(
            0, owner, picked, reduce="amax")
        index = torch.tensor([i for i, _ in live], device=dev)
        return value.index_put((index,), live_value)

    # ------------------------------------------------------------------ persistence

    def set_learning_rate(self, lr: float) -> None:
        """Use ``lr`` for the next gradient steps."""
        for group in self.opt.param_groups:
            group["lr"] = lr

    def checkpoint(self, extra: dict[str, Any]) -> dict[str, Any]:
        """Everything needed to resume training (the replay buffer is not kept)."""
        return {"meta": self.meta, "config": self.config.to_dict(),
                "net": self.net.state_dict(), "target": self.target.state_dict(),
                "opt": self.opt.state_dict(), "moves": self.moves, "updates": self.updates,
                **extra}

    def restore(self, ckpt: dict[str, Any]) -> None:
        """Load networks, optimiser and counters from :meth:`checkpoint` output."""
        self.net.load_state_dict(ckpt["net"])
        self.target.load_state_dict(ckpt["target"])
        self.opt.load_state_dict(ckpt["opt"])
        # The optimiser state carries the old learning rate; the run's own option wins.
        self.set_learning_rate(self.config.lr)
        self.moves = int(ckpt["moves"])
        self.updates = int(ckpt["updates"])
