"""Deep Q-learning bots for both roles (issue 6).

* :mod:`bots.dqn.features` — view encoders (numpy only): grid planes with a 4-action mask,
  and per-candidate move features for graph boards.
* :mod:`bots.dqn.model` — the networks (torch) and the torch-free weights file format.
* :mod:`bots.dqn.agent` — the DQN learner: replay buffer, target network, Double DQN.
* :mod:`bots.dqn.train` / training loop (``yard train dqn``, in :mod:`yard.cli.train_dqn`).
* :mod:`bots.dqn.bot` — :class:`~bots.dqn.bot.DqnBot`, the playing bot (numpy inference).

Importing this package does not import torch; only the model, agent and training modules do.
"""
