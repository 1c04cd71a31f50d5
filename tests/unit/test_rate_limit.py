"""The per-agent token bucket (core.rate_limit), on a clock the test moves."""

import pytest

from write_gate.core.rate_limit import RateLimiter


def test_a_full_bucket_then_one_write_per_refill() -> None:
    limiter = RateLimiter()
    assert [limiter.take("a", 3, 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a", 3, 0.0) == pytest.approx(20.0)  # 3 a minute: one every 20 s
    assert limiter.take("a", 3, 5.0) == pytest.approx(15.0)  # a refused write takes nothing
    assert limiter.take("a", 3, 20.0) == 0.0
    assert limiter.take("a", 3, 20.0) == pytest.approx(20.0)


def test_agents_have_their_own_buckets_and_a_bucket_holds_at_most_its_limit() -> None:
    limiter = RateLimiter()
    assert limiter.take("a", 1, 0.0) == 0.0
    assert limiter.take("b", 1, 0.0) == 0.0
    assert limiter.take("a", 1, 3600.0) == 0.0  # an hour idle refills one token, not sixty
    assert limiter.take("a", 1, 3600.0) == pytest.approx(60.0)


def test_a_changed_limit_starts_a_full_bucket() -> None:
    limiter = RateLimiter()
    assert limiter.take("a", 1, 0.0) == 0.0
    assert limiter.take("a", 1, 0.0) > 0
    assert limiter.take("a", 2, 0.0) == 0.0
