"""Progress of a ``yard reproduce`` run on stderr.

On a terminal the line is rewritten after every chunk. Anywhere else (a log file, CI, a
background job) rewriting a line only piles up carriage returns, so a full line is written
at most every ``interval`` seconds, with the rate and the time left, and one at the end if
any was written before: a short run stays silent, a long one shows it is alive.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from yard.reproduce.model import ChunkResult

__all__ = ["ProgressLine", "format_duration"]


def format_duration(seconds: float) -> str:
    """``42s``, ``7m05s`` or ``2h03m``: short enough for a progress line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class ProgressLine:
    """A :data:`~yard.reproduce.model.ProgressFn` that reports games done out of ``total``.

    ``live`` picks the terminal form (one line rewritten in place); otherwise full lines
    come at most every ``interval`` seconds. ``write`` receives the text to print, without
    a trailing newline for a live line; ``clock`` is injectable for tests.
    """

    def __init__(self, name: str, total: int, *, live: bool, interval: float = 60.0,
                 write: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        """A progress line for ``total`` games of ``name``."""
        self.name = name
        self.total = total
        self.live = live
        self.interval = interval
        self._write = write
        self._clock = clock
        self._start = clock()
        self._last = self._start
        self._done = 0
        self._lines = 0

    def __call__(self, result: ChunkResult) -> None:
        """Count ``result``'s games and report when due."""
        self._done += result.games
        finished = self._done >= self.total
        if self.live:
            self._write(f"\r{self.name}: {self._done}/{self.total} games"
                        + ("\n" if finished else ""))
            return
        now = self._clock()
        if now - self._last >= self.interval or (finished and self._lines):
            self._last = now
            self._lines += 1
            self._write(self.line(now) + "\n")

    def line(self, now: float) -> str:
        """``brno: 1200/9000 games (13%), 4.1 games/s, 12m30s elapsed, about 31m40s left``."""
        elapsed = now - self._start
        text = (f"{self.name}: {self._done}/{self.total} games "
                f"({100 * self._done // max(1, self.total)}%)")
        if elapsed <= 0 or self._done == 0:
            return text
        rate = self._done / elapsed
        text += f", {rate:.1f} games/s, {format_duration(elapsed)} elapsed"
        if self._done < self.total:
            text += f", about {format_duration((self.total - self._done) / rate)} left"
        return text
