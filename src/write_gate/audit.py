"""One structured log line per tool decision: who, what, on which label, how it ended, how long it took.

Tokens and property values are never logged: a decision line carries names and codes only.
"""

import json
import logging
import time
from typing import Any

logger = logging.getLogger("write_gate.decisions")


class Decision:
    def __init__(self, agent: str, tool: str) -> None:
        self.agent, self.tool = agent, tool
        self.started = time.perf_counter()

    def done(self, structured: dict[str, Any] | None, is_error: bool) -> None:
        structured = structured or {}
        line = {
            "event": "tool_call",
            "agent": self.agent,
            "tool": self.tool,
            "label": structured.get("label") or structured.get("type"),
            "status": "rejected" if is_error else structured.get("status", "ok"),
            "error_code": structured.get("error_code") if is_error else None,
            "latency_ms": round((time.perf_counter() - self.started) * 1000, 3),
        }
        logger.info(json.dumps({k: v for k, v in line.items() if v is not None}))
