"""Small statistics helpers shared by the leaderboard and the win-rate matrix.

>>> low, high = wilson_interval(5, 10)
>>> round(low, 4), round(high, 4)
(0.2366, 0.7634)
"""

from __future__ import annotations

import math

#: Two-sided 95% normal quantile.
Z95 = 1.959964


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default); ``(0, 1)`` for no
    trials."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
