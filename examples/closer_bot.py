"""A custom bot in a few lines: detectives close in on Mister X's possible stations.

Run a server (`yard serve`), then: python examples/closer_bot.py --url ws://127.0.0.1:8765
and play it: yard match --server ws://127.0.0.1:8765 --mrx random --detectives closer
Its one option, in any bot spec: yard play --detectives examples/closer_bot.py:Closer:greed=0.5
"""

from bots.sdk import MRX, Bot, run


class Closer(Bot):
    name = "closer"

    def __init__(self, greed: float = 1.0):
        """Args:
            greed: share of detective moves that close in (the rest are random)
        """
        self.greed = greed

    def choose(self, view, legal):
        if view.seat == MRX or self.rng.random() >= self.greed:
            return self.rng.choice(legal)
        board = view.rules.board
        return min(legal, key=lambda m: min(board.distance(m.to, p) for p in view.possible))


if __name__ == "__main__":
    run(Closer)
