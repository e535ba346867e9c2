"""A random bot that writes a line to a file each time it chooses a move: ``choose
<side> <ruleset>``, so a test sees when (and for which side) a process played moves.
Option ``log=PATH``; ``Hunter`` plays only the detectives."""

from pathlib import Path

from bots.sdk import Bot, run


class Recorder(Bot):
    name = "recorder"

    def __init__(self, seed: int | None = None, log: str = "") -> None:
        super().__init__(seed)
        self.log = Path(log) if log else None

    def choose(self, view, legal):
        if self.log is not None:
            side = "mrx" if view.to_move == 0 else "detectives"
            with self.log.open("a") as out:
                out.write(f"choose {side} {view.rules.name}\n")
        return self.rng.choice(legal)


class Hunter(Recorder):
    name = "hunter"
    roles = frozenset({"detectives"})


if __name__ == "__main__":
    run(Recorder)
