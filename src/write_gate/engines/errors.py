"""One mapping from an engine's failure to what the agent is told.

Engine text never reaches an agent: it can hold parameter fragments and internals (`MISCONF ...`,
parser positions). It is logged with an incident id, and the agent gets a code, a plain message and
that id.
"""

import logging
import uuid

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.engines import BackendError, BackendUnavailable, QueryTimeout, StorageUnavailable, WriteInDoubt

logger = logging.getLogger(__name__)


def engine_failure(exc: BackendError | BackendUnavailable, action: str) -> GateRejection:
    """`action` is what the gate was doing ("write", "read", ...), for the message; a write's answer says whether
    it may have been applied (`applied`)."""
    if isinstance(exc, StorageUnavailable):
        logger.error("the engine cannot store a %s: %s", action, exc)
        return GateRejection(
            ErrorCode.BACKEND_UNAVAILABLE,
            "the graph engine cannot store anything now (its disk or memory is full); reads still work",
            reason="storage",
        )
    if isinstance(exc, WriteInDoubt) and action == "write":
        return GateRejection(
            ErrorCode.BACKEND_UNAVAILABLE,
            f"{exc}: it may or may not have been applied; read before writing again, or send the same call with "
            "the same idempotency_key",
            reason="unreachable",
            applied="unknown",
        )
    if isinstance(exc, BackendUnavailable):
        # A write that never reached the engine was not applied (no backend sends a write again by itself).
        applied = {"applied": False} if action == "write" else {}
        return GateRejection(ErrorCode.BACKEND_UNAVAILABLE, str(exc), reason="unreachable", **applied)
    if isinstance(exc, QueryTimeout):
        # A read past the engine's limit ran and was ended: nothing of it was written, and the engine serves on.
        applied = {"applied": False} if action == "write" else {}
        return GateRejection(
            ErrorCode.QUERY_TIMEOUT,
            f"the graph engine stopped this call's {action} at its time limit of {exc.limit_seconds:g} s",
            limit_seconds=exc.limit_seconds,
            hint="narrow the call: fewer labels or names, a longer query, a smaller limit, or page with the cursor",
            **applied,
        )
    incident = uuid.uuid4().hex[:12]
    logger.error("incident %s: the engine refused a %s: %s", incident, action, exc)
    return GateRejection(
        ErrorCode.INTERNAL_ERROR,
        f"the graph engine refused the {action}; the gate logged it as incident {incident}",
        incident=incident,
    )


def no_text_search(exc: BackendError) -> bool:
    """The engine has no text search here (Memgraph before 3.6 without its flag): a search scans instead."""
    text = str(exc).lower()
    return "text_search" in text or "text search" in text or "text index" in text
