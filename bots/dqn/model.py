"""The Q-networks (torch): grid MLP and CNN with 4 outputs, and the graph move scorer.

All linear and convolution layers use Kaiming (He) initialisation for ReLU; biases start at
zero. :func:`build_net` makes a network from the ``meta`` of a weights file, so a file is
self-describing; :func:`export_params` / :func:`load_params` convert to and from the numpy
arrays of :mod:`bots.dqn.policy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
import torch
from torch import nn

from bots.dqn.features import FloatArray


class Arch(Enum):
    """Network architecture."""

    MLP = "mlp"
    CNN = "cnn"
    SCORER = "scorer"


def _init(module: nn.Module) -> None:
    if isinstance(module, nn.Linear | nn.Conv2d):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=0.1)


def _stack(sizes: Sequence[int]) -> nn.Sequential:
    """Linear layers of ``sizes`` with ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class GridMlp(nn.Module):
    """MLP from the grid input vector to the 4 action values."""

    def __init__(self, state_dim: int, hidden: Sequence[int], n_actions: int = 4) -> None:
        """Layers ``state_dim -> *hidden -> n_actions``."""
        super().__init__()
        self.body = _stack([state_dim, *hidden, n_actions])
        self.apply(_init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, state_dim)`` -> ``(B, n_actions)``."""
        out: torch.Tensor = self.body(x)
        return out


class GridCnn(nn.Module):
    """Two 3×3 convolutions over the planes, then an MLP (with the scalars) to 4 values."""

    def __init__(self, planes: int, height: int, width: int, scalars: int,
                 hidden: Sequence[int], channels: int = 16, n_actions: int = 4) -> None:
        """Layers for ``planes`` planes of ``height`` × ``width`` cells plus ``scalars``."""
        super().__init__()
        self.planes, self.height, self.width = planes, height, width
        self.conv = nn.Sequential(
            nn.Conv2d(planes, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.head = _stack([channels * height * width + scalars, *hidden, n_actions])
        self.apply(_init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, state_dim)`` -> ``(B, n_actions)``."""
        cells = self.planes * self.height * self.width
        grid = x[:, :cells].reshape(-1, self.planes, self.height, self.width)
        feats = self.conv(grid).flatten(1)
        out: torch.Tensor = self.head(torch.cat([feats, x[:, cells:]], dim=1))
        return out


class MoveScorer(nn.Module):
    """Q(state, candidate move) for graph boards.

    The first layer is split: ``state_in(state)`` once per state, plus the destination's
    embedding (a one-hot times a weight matrix) and ``cand_in(dense features)`` per
    candidate; then ReLU and the ``head`` MLP to one value.
    """

    def __init__(self, state_dim: int, cand_dim: int, n_stations: int,
                 hidden: Sequence[int]) -> None:
        """Embed the state and each candidate move, then score them with ``hidden`` layers."""
        super().__init__()
        first = hidden[0]
        self.state_in = nn.Linear(state_dim, first)
        self.dest_embed = nn.Embedding(n_stations + 1, first)
        self.cand_in = nn.Linear(cand_dim, first, bias=False)
        self.head = _stack([*hidden, 1])
        self.apply(_init)

    def forward(self, states: torch.Tensor, dests: torch.Tensor, cands: torch.Tensor,
                owner: torch.Tensor) -> torch.Tensor:
        """Values of ``M`` candidates; ``owner[i]`` indexes the state of candidate ``i``."""
        h = self.state_in(states)[owner] + self.dest_embed(dests) + self.cand_in(cands)
        out: torch.Tensor = self.head(torch.relu(h)).squeeze(-1)
        return out


def build_net(meta: dict[str, Any]) -> nn.Module:
    """A fresh network shaped as ``meta`` describes."""
    arch = Arch(meta["arch"])
    hidden = [int(h) for h in meta["hidden"]]
    if arch is Arch.MLP:
        return GridMlp(int(meta["state_dim"]), hidden)
    if arch is Arch.CNN:
        height, width = (int(v) for v in meta["frame"])
        return GridCnn(int(meta["planes"]), height, width, int(meta["scalars"]), hidden)
    return MoveScorer(int(meta["state_dim"]), int(meta["cand_dim"]),
                      int(meta["signature"]["stations"]), hidden)


def export_params(net: nn.Module) -> dict[str, FloatArray]:
    """The network's parameters as float32 numpy arrays (state-dict names)."""
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}


def load_params(net: nn.Module, params: dict[str, FloatArray]) -> None:
    """Load numpy parameters into ``net`` (shapes must match)."""
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in params.items()})
