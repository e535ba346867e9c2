"""How many new accounts (bots registering, people claiming a name) the server makes: at
most so many per remote address and in all within a sliding window, and at most so many
being made at once (each is a database write and a scrypt hash, done off the loop on a
thread of their own: :mod:`host.accounts`). A registration over a bound is refused at once
with ``registration_limit``, saying which bound and when to try again, so a flood costs the
server a refusal each, never the logins of the bots already registered (sans-I/O: the
core asks with the time of the ``hello``).

>>> limits = Registrations(per_address=2, total=3, window_s=60.0, queue=8)
>>> [limits.refusal("10.0.0.1", 0.0) or limits.begin(c, "10.0.0.1", 0.0) for c in (1, 2)]
[None, None]
>>> limits.refusal("10.0.0.1", 1.0)
'registrations from 10.0.0.1: 2 in the last 60 s, at most 2 (try again in 59 s)'
>>> limits.refusal("10.0.0.1", 61.0) is None
True
"""

from __future__ import annotations

from collections import deque


class Registrations:
    """Registrations per address and in all within ``window_s`` seconds (at most
    ``per_address`` and ``total``), and at most ``queue`` being made at once."""

    def __init__(self, per_address: int, total: int, window_s: float, queue: int) -> None:
        """Nothing counted yet (the bounds are as the class says)."""
        self.per_address = per_address
        self.total = total
        self.window_s = window_s
        self.queue = queue
        self._all: deque[float] = deque()
        self._by_address: dict[str, deque[float]] = {}
        #: Connections whose registration is being made now.
        self.pending: set[int] = set()
        #: Registrations refused so far.
        self.refused = 0

    def refusal(self, address: str | None, now: float) -> str | None:
        """Why a registration from ``address`` at ``now`` is refused, or ``None``."""
        start = now - self.window_s
        _expire(self._all, start)
        if len(self._by_address) > 4 * self.total + 64:  # forget quiet addresses
            self._by_address = {a: q for a, q in self._by_address.items()
                                 if q and q[-1] > start}
        reason = None
        if len(self.pending) >= self.queue:
            reason = (f"{len(self.pending)} registrations are being made now, at most "
                      f"{self.queue} at once (try again in a few seconds)")
        elif len(self._all) >= self.total:
            reason = (f"registrations on this server: {len(self._all)} in the last "
                      f"{self.window_s:g} s, at most {self.total} "
                      f"(try again in {self._wait(self._all, now)} s)")
        else:
            mine = self._by_address.get(address or "?")
            if mine is not None:
                _expire(mine, start)
            if mine is not None and len(mine) >= self.per_address:
                reason = (f"registrations from {address or 'this address'}: {len(mine)} in "
                          f"the last {self.window_s:g} s, at most {self.per_address} "
                          f"(try again in {self._wait(mine, now)} s)")
        self.refused += reason is not None
        return reason

    def begin(self, conn: int, address: str | None, now: float) -> None:
        """Connection ``conn`` (from ``address``) registers now: counted, and pending
        until :meth:`end`."""
        self._all.append(now)
        self._by_address.setdefault(address or "?", deque()).append(now)
        self.pending.add(conn)

    def end(self, conn: int) -> None:
        """Connection ``conn``'s registration was made or refused (or it was no
        registration)."""
        self.pending.discard(conn)

    def _wait(self, times: deque[float], now: float) -> int:
        """Whole seconds until the oldest of ``times`` leaves the window."""
        return max(1, int(times[0] + self.window_s - now + 0.999))


def _expire(times: deque[float], start: float) -> None:
    """Drop the times before ``start`` (the oldest first)."""
    while times and times[0] <= start:
        times.popleft()
