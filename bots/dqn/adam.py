"""Adam for the DQN agent: ``torch.optim.Adam``'s update (its default path on the CPU) and
its ``state_dict`` form, without importing the torch compiler.

Every ``torch.optim`` optimiser imports ``torch._dynamo`` (and sympy) on its first use,
about 1.8 CPU-s: more than a short training run takes, paid again by every process that
trains (``yard train``, each cluster actor, each ``yard reproduce`` worker). This one runs
the same tensor operations in the same order, so its steps are bitwise those of
``torch.optim.Adam(params, lr)`` on the CPU, and checkpoints written with either load into
the other (``tests/bots/test_dqn_adam.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

_GROUP_DEFAULTS: dict[str, Any] = {
    "weight_decay": 0, "amsgrad": False, "maximize": False, "foreach": None,
    "capturable": False, "differentiable": False, "fused": None,
    "decoupled_weight_decay": False,
}


class Adam:
    """Adam without weight decay or AMSGrad over one group of parameters."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        """Optimise ``params`` with learning rate ``lr`` and Adam's ``betas`` and ``eps``."""
        self.params = list(params)
        self.param_groups: list[dict[str, Any]] = [
            {"params": self.params, "lr": lr, "betas": betas, "eps": eps, **_GROUP_DEFAULTS}]
        self.state: dict[torch.nn.Parameter, dict[str, torch.Tensor]] = {}

    def zero_grad(self) -> None:
        """Drop the gradients (``set_to_none``, as ``torch.optim`` does by default)."""
        for param in self.params:
            param.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step for every parameter that has a gradient."""
        group = self.param_groups[0]
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        for param in self.params:
            grad = param.grad
            if grad is None:
                continue
            state = self.state.get(param)
            if state is None:
                state = self.state[param] = {
                    "step": torch.tensor(0.0, dtype=torch.float32),
                    "exp_avg": torch.zeros_like(param, memory_format=torch.preserve_format),
                    "exp_avg_sq": torch.zeros_like(param,
                                                   memory_format=torch.preserve_format)}
            step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
            step_t += 1
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = step_t.item()
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)

    def state_dict(self) -> dict[str, Any]:
        """``torch.optim.Adam.state_dict()``'s form: state by parameter index."""
        index = {param: i for i, param in enumerate(self.params)}
        state = {index[param]: dict(values) for param, values in self.state.items()}
        groups = [{**{k: v for k, v in group.items() if k != "params"},
                   "params": list(range(len(self.params)))} for group in self.param_groups]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load :meth:`state_dict` output, or ``torch.optim.Adam``'s for the same
        parameters; raises ``ValueError`` when it was saved for other parameters."""
        groups = state_dict["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self.params):
            raise ValueError("the optimiser state was saved for other parameters "
                             f"({[len(g['params']) for g in groups]} against "
                             f"{len(self.params)})")
        saved = groups[0]
        group = self.param_groups[0]
        group.update(lr=saved["lr"], betas=tuple(saved["betas"]), eps=saved["eps"])
        order = {pid: i for i, pid in enumerate(saved["params"])}
        self.state = {}
        for pid, values in state_dict["state"].items():
            param = self.params[order[pid]]
            self.state[param] = {
                "step": torch.as_tensor(values["step"], dtype=torch.float32).clone(),
                "exp_avg": values["exp_avg"].to(param.device, param.dtype).clone(),
                "exp_avg_sq": values["exp_avg_sq"].to(param.device, param.dtype).clone()}
