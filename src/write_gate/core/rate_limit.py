"""Limits per agent (issue 15, item 5): a token bucket per agent, decided purely (the caller passes the time).

An agent granted N writes a minute holds a bucket of N tokens that refills at N a minute; a write takes one. So
it may write N at once, then one every 60/N seconds. The buckets live in one gate process: N gates on one graph
each allow the rate.
"""

from dataclasses import dataclass

SECONDS_PER_MINUTE = 60.0


@dataclass
class Bucket:
    tokens: float
    at: float  # when `tokens` was counted (a monotonic clock's seconds)


class RateLimiter:
    def __init__(self) -> None:
        self._buckets: dict[str, tuple[int, Bucket]] = {}

    def take(self, agent_id: str, per_minute: int, now: float) -> float:
        """Take a token from the agent's bucket: 0.0 when it had one, else the seconds until it will (> 0),
        and nothing is taken. A changed limit starts a full bucket."""
        held = self._buckets.get(agent_id)
        if held is None or held[0] != per_minute:
            held = self._buckets[agent_id] = (per_minute, Bucket(float(per_minute), now))
        bucket = held[1]
        rate = per_minute / SECONDS_PER_MINUTE  # tokens a second
        bucket.tokens = min(float(per_minute), bucket.tokens + max(0.0, now - bucket.at) * rate)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / rate
