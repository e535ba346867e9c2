"""A bot that plays badly on purpose, for tests that need bots of clearly different
strength (the ladder's): Mister X moves as close to the detectives as he can, detectives
move away from every place Mister X may be. Seeded like any bot."""

from bots.sdk import Bot, run
from bots.simple import nearest
from game import MRX


class Blunder(Bot):
    name = "blunder"

    def choose(self, view, legal):
        ends = [m.destination for m in legal]
        targets = list(view.detectives) if view.to_move == MRX else sorted(view.possible)
        if not targets:
            return self.rng.choice(legal)
        gaps = nearest(view, ends, targets).tolist()
        pick = min(gaps) if view.to_move == MRX else max(gaps)
        return self.rng.choice([m for m, g in zip(legal, gaps, strict=True) if g == pick])


if __name__ == "__main__":
    run(Blunder)
