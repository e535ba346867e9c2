"""The DQN agent's Adam (:mod:`bots.dqn.adam`) against ``torch.optim.Adam``: the same steps
bit for bit, checkpoints that load both ways, and no torch compiler imported to train."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest
import torch
from torch import nn

from bots.dqn.adam import Adam


def _net(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def _train(net: nn.Module, opt: Adam | torch.optim.Adam, seed: int, steps: int) -> None:
    """``steps`` gradient steps on seeded batches, with the agent's clipping."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x, y = torch.randn(8, 6, generator=gen), torch.randn(8, 3, generator=gen)
        loss = nn.functional.smooth_l1_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()


def _saved(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` written to a checkpoint and read back, as training resumes it."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded: dict[str, Any] = torch.load(buffer, weights_only=True)
    return loaded


def _same(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


@pytest.mark.parametrize("lr", [1e-3, 0.05])
def test_steps_equal_torch_adam_bit_for_bit_and_checkpoints_load_both_ways(lr: float) -> None:
    ours_net, torch_net = _net(1), _net(1)
    ours, reference = Adam(ours_net.parameters(), lr=lr), torch.optim.Adam(
        torch_net.parameters(), lr=lr)
    _train(ours_net, ours, 7, 30)
    _train(torch_net, reference, 7, 30)
    assert _same(ours_net, torch_net)
    assert not _same(ours_net, _net(1))  # it did train

    # A checkpoint of torch's resumes in ours, and one of ours in torch's.
    saved_torch, saved_ours = _saved(reference.state_dict()), _saved(ours.state_dict())
    assert saved_ours.keys() == saved_torch.keys()
    assert saved_ours["param_groups"] == saved_torch["param_groups"]
    resumed_net, torch_resumed_net = _net(2), _net(2)
    resumed_net.load_state_dict(torch_net.state_dict())
    torch_resumed_net.load_state_dict(ours_net.state_dict())
    resumed = Adam(resumed_net.parameters(), lr=lr)
    resumed.load_state_dict(saved_torch)
    torch_resumed = torch.optim.Adam(torch_resumed_net.parameters(), lr=lr)
    torch_resumed.load_state_dict(saved_ours)
    for net, opt in ((ours_net, ours), (torch_net, reference), (resumed_net, resumed),
                     (torch_resumed_net, torch_resumed)):
        _train(net, opt, 8, 10)
    assert _same(resumed_net, ours_net) and _same(torch_resumed_net, ours_net)
    assert _same(torch_net, ours_net)


def test_a_state_for_other_parameters_is_refused() -> None:
    opt = Adam(_net(1).parameters(), lr=0.01)
    other = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="saved for other parameters"):
        opt.load_state_dict(Adam(other.parameters(), lr=0.01).state_dict())


def test_training_imports_no_torch_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason for the class: its steps never import ``torch._dynamo`` (``torch.optim``
    would, ~1.8 CPU-s in each process that trains). With the module made unimportable, our
    steps run and torch's fail."""
    monkeypatch.setitem(sys.modules, "torch._dynamo", None)
    net = _net(3)
    _train(net, Adam(net.parameters(), lr=0.01), 9, 3)
    with pytest.raises(ImportError):
        _train(net, torch.optim.Adam(net.parameters(), lr=0.01), 9, 1)
