"""The limit a read call is held to as a whole (WRITE_GATE_CALL_LIMIT_SECONDS; issue 37): the engine holds each
read statement to its own limit, but a call of many statements (an export of the whole graph reads it a page at
a time) could still run for minutes while its agent's share of the gate stays taken. A write is not cut short: its
statements are bounded by the batch limits, and one stopped halfway would leave half a batch written."""

import math

from write_gate.core.model import ErrorCode, Rejected

# The share of the limit kept for stopping and answering: the work is stopped at its next wait on the engine or
# a worker thread, which may come a statement later (measured at a million nodes: an export stopped at the limit
# itself answered 0.31 s past it).
STOPPING_SHARE = 0.05


def call_limit(read_only: bool, seconds: float) -> float:
    """How long a call's work may run: a read's limit (`seconds`; 0 turns it off) less STOPPING_SHARE of it, no
    limit for a write."""
    return seconds * (1 - STOPPING_SHARE) if read_only and seconds > 0 else math.inf


def call_limit_passed(tool: str, seconds: float) -> Rejected:
    """The answer of a read stopped at the call limit: nothing partial, and what to do instead."""
    return Rejected(
        error_code=ErrorCode.QUERY_TIMEOUT,
        message=f"{tool} ran past the gate's call limit of {seconds:g} s and was stopped",
        details={
            "limit": "call_limit_seconds",
            "limit_seconds": seconds,
            "hint": "narrow the call: a filter, fewer names, a smaller limit, or page with the cursor; for the "
            "whole graph, `write-gate export` writes it to a file without a limit",
        },
    )
