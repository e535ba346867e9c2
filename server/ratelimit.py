"""A token bucket for per-connection flood control (time passed in, sans-I/O).

>>> bucket = TokenBucket(rate=1.0, burst=2.0, now=0.0)
>>> [bucket.take(0.0), bucket.take(0.0), bucket.take(0.0), bucket.take(1.0)]
[True, True, False, True]
"""

from __future__ import annotations


class TokenBucket:
    """Allows ``rate`` events per second on average and bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        """A full bucket refilled at ``rate`` tokens a second up to ``burst``."""
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now
        self.credits = 0

    def credit(self) -> None:
        """Grant one event that bypasses the rate (e.g. the reply to a request we sent);
        credits are spent before tokens and are not capped by ``burst``."""
        self.credits += 1

    def take(self, now: float) -> bool:
        """Spend a credit or one token if available."""
        if self.credits:
            self.credits -= 1
            return True
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
