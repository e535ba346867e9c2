"""Flood control: the token bucket and its credits for replies the server asked for."""

from __future__ import annotations

from server.ratelimit import TokenBucket


def test_bucket_allows_rate_and_burst_only() -> None:
    bucket = TokenBucket(rate=2.0, burst=2.0, now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [True, True, False]
    assert bucket.take(0.5) and not bucket.take(0.5)


def test_credits_bypass_an_empty_bucket_once_each() -> None:
    bucket = TokenBucket(rate=1.0, burst=1.0, now=0.0)
    assert bucket.take(0.0) and not bucket.take(0.0)
    for _ in range(5):
        bucket.credit()
    assert [bucket.take(0.0) for _ in range(6)] == [True] * 5 + [False]
