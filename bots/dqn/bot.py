"""``dqn``: the trained Q-network bot, for Mister X and for detectives.

The bot learns the ruleset in :meth:`DqnBot.new_game` and loads the shipped weights for
that ruleset and role (``bots/dqn/weights/<ruleset>-<role>.npz``; failing that, any shipped
file for the same board and role). ``weights=PATH`` overrides. Inference is numpy for MLPs
(torch is imported only for CNN weights).

>>> from bots.arena import play_game
>>> from bots.registry import make_bot
>>> result = play_game("grid5", make_bot("random", 1), [make_bot("dqn", 2)], seed=3)
>>> result.outcome.winner is not None
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bots.base import Bot
from bots.dqn.features import (
    Encoder,
    GridEncoder,
    Obs,
    Role,
    board_signature,
    make_encoder,
    move_of,
    observe,
    recorded_features,
)
from bots.dqn.policy import NumpyMlpGrid, NumpyMoveScorer, WeightsError, load_weights
from game import Move, Ruleset, View

WEIGHTS_DIR = Path(__file__).parent / "weights"

QFunction = Callable[[Obs], np.ndarray[Any, Any]]


@dataclass
class LoadedModel:
    """A weights file made ready to play one role on one ruleset."""

    path: Path
    meta: dict[str, Any]
    encoder: Encoder
    q: QFunction


def shipped_weights(rules: Ruleset, role: Role) -> Path:
    """The shipped weights file for ``rules`` and ``role`` (see the module docstring)."""
    exact = WEIGHTS_DIR / f"{rules.name}-{role.value}.npz"
    if exact.is_file():
        return exact
    signature = board_signature(rules)
    for path in sorted(WEIGHTS_DIR.glob(f"*-{role.value}.npz")):
        meta, _ = load_weights(path)
        if _same_board(meta.get("signature", {}), signature):
            return path
    raise WeightsError(f"no shipped DQN weights for ruleset {rules.name!r} (board "
                       f"{rules.board.name}) as {role.value}; train some with `yard train dqn "
                       f"--rules {rules.name} --role {role.value} ...` and pass weights=PATH")


def _same_board(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(key) == b.get(key) for key in ("board", "stations", "width", "height"))


def load_model(path: Path, rules: Ruleset, role: Role) -> LoadedModel:
    """Load ``path`` and check that it fits ``rules`` and ``role``."""
    meta, params = load_weights(path)
    if meta.get("role") != role.value:
        raise WeightsError(f"DQN weights {path} are for {meta.get('role')}, not {role.value}")
    if not _same_board(meta.get("signature", {}), board_signature(rules)):
        raise WeightsError(f"DQN weights {path} were trained on board "
                           f"{meta.get('signature', {}).get('board')}, not "
                           f"{rules.board.name} (ruleset {rules.name})")
    try:
        encoder = make_encoder(rules, meta.get("kind"), recorded_features(meta))
    except ValueError as exc:
        raise WeightsError(f"DQN weights {path}: {exc}; retrain them") from None
    if meta.get("state_dim") != encoder.state_dim or (
            not isinstance(encoder, GridEncoder) and meta.get("cand_dim") != encoder.cand_dim):
        raise WeightsError(f"DQN weights {path} have input sizes that do not match this "
                           "version's encoder; retrain them")
    try:
        q = _q_function(meta, params)
    except (KeyError, ValueError) as exc:
        raise WeightsError(f"DQN weights {path} are incomplete or malformed: {exc}") from None
    return LoadedModel(path, meta, encoder, q)


def _q_function(meta: dict[str, Any], params: dict[str, Any]) -> QFunction:
    arch = meta.get("arch")
    if arch == "mlp":
        mlp = NumpyMlpGrid.from_params(params)
        return lambda obs: np.where(obs.mask, mlp(obs.state), -np.inf)  # type: ignore[arg-type]
    if arch == "scorer":
        scorer = NumpyMoveScorer.from_params(params)
        return lambda obs: scorer(obs.state, obs.dests, obs.cands)  # type: ignore[arg-type]
    if arch == "cnn":
        return _torch_q_function(meta, params)
    raise ValueError(f"unknown architecture {arch!r}")


def _torch_q_function(meta: dict[str, Any], params: dict[str, Any]) -> QFunction:
    import torch

    from bots.dqn.model import build_net, load_params

    torch.set_num_threads(1)
    net = build_net(meta)
    load_params(net, params)
    net.eval()

    def q(obs: Obs) -> np.ndarray[Any, Any]:
        with torch.no_grad():
            values = net(torch.from_numpy(obs.state)[None, :])[0].numpy()
        return np.where(obs.mask, values, -np.inf)  # type: ignore[arg-type]

    return q


class DqnBot(Bot):
    """Plays the move with the highest Q-value (ε-random with ``epsilon`` > 0).

    Options: ``weights`` — a weights file to use instead of the shipped one; ``epsilon`` —
    probability of a uniformly random legal move (default 0: always greedy); ``safe`` —
    Mister X plays the best-valued move whose destination no detective can reach next turn
    (distance >= 2 from each), when there is one (default off).
    """

    name = "dqn"

    def __init__(self, seed: int | None = None, *, weights: str = "",
                 epsilon: float = 0.0, safe: bool = False) -> None:
        """Set the bot's options; the networks load at the first game.

        Args:
            seed: seeds ``self.rng`` (not an option: see :meth:`Bot.create`)
            weights: a weights file instead of the shipped one
            epsilon: probability of a random legal move (0: always greedy)
            safe: Mister X avoids moves a detective can reach next turn
        """
        super().__init__(seed)
        self.weights = weights
        self.epsilon = epsilon
        self.safe = safe
        self.models: dict[Role, LoadedModel] = {}
        self._cache: dict[tuple[str, int, Role], LoadedModel] = {}

    def new_game(self, rules: Ruleset, seats: Sequence[int]) -> None:
        """Load (or reuse) the weights for each role this bot plays."""
        self.models = {role: self._model(rules, role)
                       for role in {Role.of_seat(seat) for seat in seats}}

    def _model(self, rules: Ruleset, role: Role) -> LoadedModel:
        key = (rules.name, id(rules), role)
        if key not in self._cache:
            path = Path(self.weights) if self.weights else shipped_weights(rules, role)
            self._cache[key] = load_model(path, rules, role)
        return self._cache[key]

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """The legal move with the best Q-value for the seat to move."""
        role = Role.of_seat(view.to_move)
        model = self.models.get(role)
        if model is None:
            model = self.models[role] = self._model(view.rules, role)
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(legal)
        obs = observe(model.encoder, view, legal)
        values = model.q(obs)
        best = move_of(model.encoder, view, legal, int(np.argmax(values)))
        if not self.safe or role is not Role.MRX:
            return best
        return self._safest(view, legal, values, model) or best

    def _safest(self, view: View, legal: Sequence[Move], values: np.ndarray[Any, Any],
                model: LoadedModel) -> Move | None:
        """The best-valued legal move that ends out of every detective's next step."""
        dist = view.rules.board.distances()
        detectives = np.asarray(view.detectives)
        for index in np.argsort(-values, kind="stable"):
            if not np.isfinite(values[index]):
                break
            move = move_of(model.encoder, view, legal, int(index))
            if move in legal and dist[move.destination, detectives].min() >= 2:
                return move
        return None

    def describe(self) -> str:
        """Name plus the weights used."""
        used = ", ".join(f"{r.value}={m.path.name}" for r, m in self.models.items())
        return f"dqn({used})" if used else "dqn"
