"""A random bot that thinks for a fixed 0.15 s a move, so a game lasts long enough for the
cluster tests to kill its worker in the middle of it."""

import time

from bots.sdk import Bot, run


class Slow(Bot):
    name = "slow"

    def choose(self, view, legal):  # type: ignore[no-untyped-def]
        time.sleep(0.15)
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(Slow)
