"""Monte Carlo Tree Search bot with the published Scotland Yard enhancements.

The registry entry is ``bots.mcts.bot:MctsBot``; the compiled playout kernel lives in
:mod:`bots.mcts.kernel`.
"""
