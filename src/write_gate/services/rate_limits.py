"""Taking a write from an agent's rate bucket in the graph (core.cypher.rate_limits), so every gate on the graph
counts the agent's writes together: a RATE_LIMITED refusal, with how long to wait, when the bucket is empty."""

from write_gate.core.cypher import rate_limits as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.rate_limit import wait_seconds
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.engines.errors import engine_failure


async def take_write(backend: GraphBackend, agent_id: str, per_minute: int, now: float) -> None:
    """One write off the agent's bucket, or RATE_LIMITED (nothing taken). `now`: seconds since the epoch."""
    params = {"agent": agent_id, "per_minute": per_minute, "now": float(now)}
    try:
        [row] = await backend.write(Statement(cypher.TAKE.text, params))
    except (BackendUnavailable, BackendError) as exc:
        refused = engine_failure(exc, "count of this agent's writes")
        if refused.rejected.error_code is ErrorCode.BACKEND_UNAVAILABLE:
            refused.rejected.details["applied"] = False  # the call's own write was never sent
        raise refused from exc
    if row["taken"]:
        return
    seconds = wait_seconds(row["tokens"], per_minute)
    raise GateRejection(
        ErrorCode.RATE_LIMITED,
        f"over this agent's {per_minute} writes a minute, counted across every gate on this graph; "
        f"retry in {seconds:g} seconds",
        retry_after_seconds=seconds,
        limit="max_writes_per_minute",
        max=per_minute,
        shared="graph",
    )
