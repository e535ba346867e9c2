"""Server logging that a flood cannot blow up: repeated lines are thinned out, and the
process's open-file limit is raised to what the connection caps need.

:class:`RateLimitFilter` lets through at most ``burst`` records with the same logger,
level and message template per ``period`` seconds; the first record let through after a
quiet spell says how many were suppressed. Tracebacks of suppressed records are dropped
with them.

>>> import logging
>>> records = [logging.LogRecord("x", logging.ERROR, "f", 1, "accept failed: %s", ("EMFILE",),
...                              None) for _ in range(5)]
>>> limiter = RateLimitFilter(period=10.0, burst=2, clock=lambda: 0.0)
>>> [limiter.filter(r) for r in records]
[True, True, False, False, False]
>>> later = RateLimitFilter(period=10.0, burst=1, clock=iter([0.0, 1.0, 11.0]).__next__)
>>> [later.filter(r) for r in records[:3]], records[2].getMessage()
([True, False, True], 'accept failed: EMFILE (1 similar line suppressed in the last 10 s)')
"""

from __future__ import annotations

import logging
import resource
import sys
import time
from collections.abc import Callable

MAX_KEYS = 1000
"""Distinct message templates tracked; the oldest is forgotten beyond this."""


class RateLimitFilter(logging.Filter):
    """At most ``burst`` records per (logger, level, template) per ``period`` seconds."""

    def __init__(self, period: float = 10.0, burst: int = 5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Let ``burst`` records through per ``period`` seconds of ``clock``."""
        super().__init__()
        self.period = period
        self.burst = burst
        self.clock = clock
        self._windows: dict[tuple[str, int, str], list[float | int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Let ``record`` through unless its template is over its budget."""
        key = (record.name, record.levelno, str(record.msg)[:200])
        now = self.clock()
        window = self._windows.get(key)
        if window is None or now - window[0] >= self.period:
            suppressed = int(window[2]) if window is not None else 0
            self._windows.pop(key, None)
            self._windows[key] = [now, 1, 0]
            while len(self._windows) > MAX_KEYS:
                del self._windows[next(iter(self._windows))]
            if suppressed:
                plural = "" if suppressed == 1 else "s"
                record.msg = (f"{record.getMessage()} ({suppressed} similar line{plural} "
                              f"suppressed in the last {self.period:g} s)")
                record.args = None
            return True
        if window[1] < self.burst:
            window[1] += 1
            return True
        window[2] += 1
        return False


def configure(level: int = logging.WARNING, period: float = 10.0, burst: int = 5) -> None:
    """Log to stderr through a :class:`RateLimitFilter` (``yard serve``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RateLimitFilter(period, burst))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)


def raise_open_file_limit(need: int) -> int:
    """Raise this process's soft open-file limit toward ``need`` (up to the hard limit);
    returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else need
