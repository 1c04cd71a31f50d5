"""Limits per agent (issue 15, item 5; shared by every gate on a graph since issue 26, item 5): a token bucket per
agent. An agent granted N writes a minute holds a bucket of N tokens that refills at N a minute; a write takes
one. So it may write N at once, then one every 60/N seconds, however many gates it writes through.

The bucket is a `:WriteGateRate` node in the graph (core.cypher.rate_limits takes a token in one statement, so
the gates on one graph count together); what is decided here is what a refusal says.
"""

import math

RATE_LABEL = "WriteGateRate"
SECONDS_PER_MINUTE = 60.0


def wait_seconds(tokens: float, per_minute: int) -> float:
    """How long until a bucket holding `tokens` (< 1) has one, rounded up to a tenth of a second, never 0 (a
    quotient a float's last digit puts just past a tenth is not rounded up for that)."""
    rate = per_minute / SECONDS_PER_MINUTE  # tokens a second
    return max(0.1, math.ceil(round((1.0 - tokens) / rate * 10, 6)) / 10)
