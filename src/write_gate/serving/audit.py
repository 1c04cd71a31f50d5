"""One structured log record per tool decision: who, what, on which label, how it ended, how long it took.

Tokens and property values are never logged: a decision carries names and codes only. The fields go in as
the record's own fields (logs.py writes them as one JSON object), not as text inside the message.
"""

import logging
import time
from typing import Any

logger = logging.getLogger("write_gate.decisions")


class Decision:
    def __init__(self, agent: str, tool: str, space: str | None = None) -> None:
        self.agent, self.tool, self.space = agent, tool, space  # space: where it worked, when spaces are on
        self.started = time.perf_counter()

    def cancelled(self) -> None:
        """The client gave up on the call (notifications/cancelled, a closed stream or pipe) and the gate's work for
        it stopped there: a read's or a write's alike, since either held an engine connection until then."""
        if not logger.isEnabledFor(logging.INFO):
            return
        fields: dict[str, Any] = {"event": "tool_call", "agent": self.agent, "tool": self.tool, "space": self.space}
        fields |= {"status": "cancelled", "latency_ms": round((time.perf_counter() - self.started) * 1000, 3)}
        fields = {k: v for k, v in fields.items() if v is not None}
        logger.info("%s cancelled", self.tool, extra=fields)

    def done(self, structured: dict[str, Any] | None, is_error: bool) -> None:
        if not logger.isEnabledFor(logging.INFO):
            return  # the record's fields are not built for a level that is off (WRITE_GATE_LOG_LEVEL=WARNING)
        structured = structured or {}
        fields = {
            "event": "tool_call",
            "agent": self.agent,
            "tool": self.tool,
            "space": self.space,
            "label": structured.get("label") or structured.get("type"),
            "status": "rejected" if is_error else structured.get("status", "ok"),
            "error_code": structured.get("error_code") if is_error else None,
            "latency_ms": round((time.perf_counter() - self.started) * 1000, 3),
        }
        fields = {k: v for k, v in fields.items() if v is not None}
        message = " ".join(str(fields[k]) for k in ("tool", "status", "error_code") if k in fields)
        logger.info(message, extra=fields)
