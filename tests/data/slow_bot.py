"""A random bot that a test can hold back, so a game is still running when the test acts on
it (the cluster tests kill a worker in the middle of one; the browser test watches a
tournament that is running), without burning CPU while it waits.

Options (``class=tests/data/slow_bot.py:Slow option.hold=PATH option.think=S``):

``hold``
    a file: while it exists, every move waits for the test to remove it (a condition, not a
    fixed time; at most ``HOLD_LIMIT_S``, so a test that dies holding it never hangs a bot)
``think``
    seconds each move takes on top of that (default 0.15: a slow player)
"""

import time
from pathlib import Path

from bots.sdk import Bot, run

HOLD_LIMIT_S = 120.0


class Slow(Bot):
    name = "slow"

    def __init__(self, seed: int | None = None, hold: str = "", think: float = 0.15) -> None:
        super().__init__(seed)
        self.hold = Path(hold) if hold else None
        self.think = think

    def choose(self, view, legal):
        if self.hold is not None:
            deadline = time.monotonic() + HOLD_LIMIT_S
            while self.hold.exists() and time.monotonic() < deadline:
                time.sleep(0.01)  # waiting for the test to remove the file
        if self.think > 0:
            time.sleep(self.think)
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(Slow)
