"""Trained Q-networks as numpy arrays: the weights file format and torch-free inference.

A weights file is an ``.npz`` archive: one array per parameter (torch ``state_dict`` names)
plus ``__meta__``, a JSON document saying what the network is for (encoder kind, role,
ruleset, board signature, layer sizes) and how it was trained. The playing bot evaluates
MLPs here with numpy — a few microseconds per move, no torch import. CNNs are evaluated by
torch (see :mod:`bots.dqn.model`).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bots.dqn.features import FloatArray, IntArray
from game.errors import YardError

FORMAT = "yard-dqn/1"
META_KEY = "__meta__"


class WeightsError(YardError):
    """A DQN weights file is missing, unreadable, or does not fit the game."""


def save_weights(path: str | Path, meta: dict[str, Any], params: dict[str, FloatArray]) -> None:
    """Write ``params`` and ``meta`` to ``path`` (an ``.npz`` file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = np.frombuffer(json.dumps({**meta, "format": FORMAT}).encode(), dtype=np.uint8)
    arrays: dict[str, Any] = {META_KEY: blob, **params}
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)


def load_weights(path: str | Path) -> tuple[dict[str, Any], dict[str, FloatArray]]:
    """``(meta, params)`` read from a weights file; :class:`WeightsError` if unusable."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"DQN weights file {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: np.asarray(data[key]) for key in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise WeightsError(f"DQN weights file {path} cannot be read: {exc}") from None
    if META_KEY not in arrays:
        raise WeightsError(f"DQN weights file {path} has no {META_KEY} entry")
    meta: dict[str, Any] = json.loads(arrays.pop(META_KEY).tobytes().decode())
    if meta.get("format") != FORMAT:
        raise WeightsError(f"DQN weights file {path} has format {meta.get('format')!r}, "
                           f"expected {FORMAT!r}")
    return meta, {k: v.astype(np.float32) for k, v in arrays.items()}


def _relu(x: FloatArray) -> FloatArray:
    return np.maximum(x, 0.0, out=x)


def _linears(params: dict[str, FloatArray], prefix: str) -> list[tuple[FloatArray, FloatArray]]:
    """``(W^T, b)`` of each ``prefix.<i>.weight`` in index order."""
    idx = sorted(int(k[len(prefix) + 1:].split(".")[0]) for k in params
                 if k.startswith(prefix + ".") and k.endswith(".weight"))
    return [(np.ascontiguousarray(params[f"{prefix}.{i}.weight"].T),
             params[f"{prefix}.{i}.bias"]) for i in idx]


@dataclass
class NumpyMlpGrid:
    """A grid MLP (``body`` = Linear/ReLU stack) evaluated with numpy."""

    layers: list[tuple[FloatArray, FloatArray]]

    @classmethod
    def from_params(cls, params: dict[str, FloatArray]) -> NumpyMlpGrid:
        """Build from a ``GridMlp`` state dict."""
        return cls(_linears(params, "body"))

    def __call__(self, x: FloatArray) -> FloatArray:
        """Q-values of the actions for input ``x`` (one vector or a batch)."""
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i + 1 < len(self.layers):
                x = _relu(x)
        return x


@dataclass
class NumpyMoveScorer:
    """The graph move scorer (``MoveScorer``) evaluated with numpy."""

    state_w: FloatArray
    state_b: FloatArray
    embed: FloatArray
    cand_w: FloatArray
    head: list[tuple[FloatArray, FloatArray]]

    @classmethod
    def from_params(cls, params: dict[str, FloatArray]) -> NumpyMoveScorer:
        """Build from a ``MoveScorer`` state dict."""
        return cls(np.ascontiguousarray(params["state_in.weight"].T), params["state_in.bias"],
                   params["dest_embed.weight"], np.ascontiguousarray(params["cand_in.weight"].T),
                   _linears(params, "head"))

    def __call__(self, state: FloatArray, dests: IntArray, cands: FloatArray) -> FloatArray:
        """Q-value of each candidate move of one state."""
        h = state @ self.state_w + self.state_b
        x = _relu(h[None, :] + self.embed[dests] + cands @ self.cand_w)
        for i, (w, b) in enumerate(self.head):
            x = x @ w + b
            if i + 1 < len(self.head):
                x = _relu(x)
        out: FloatArray = x[:, 0]
        return out
