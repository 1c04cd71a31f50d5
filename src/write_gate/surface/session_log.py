"""MCP logging: each tool decision sent to the client as `notifications/message`, at or above the level the
session set with `logging/setLevel` (nothing before it sets one). Like the decision log line, a message
carries names and codes only: never property values, never tokens.

On 2026-07-28 connections `logging/setLevel` is gone: a request opts in with its `_meta` log level, and
the SDK's rule for that is applied here too.

With JSON answers over HTTP (WRITE_GATE_HTTP_RESPONSE=json) a POST's answer is one body with no room for
notifications, and the SDK drops those tied to the call: a handshake-era session's call notifications (these
messages, progress, a toolset's list_changed) go to its GET stream instead (`call_scoped`).
"""

import logging
from typing import Any, get_args

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from write_gate.surface.mcp_context import GateContext

logger = logging.getLogger(__name__)

LEVELS: tuple[types.LoggingLevel, ...] = get_args(types.LoggingLevel)  # severity-ascending
LOGGER = "write_gate.decisions"
_STATE_KEY = "write_gate.log_level"


def _connection_state(ctx: GateContext) -> dict[str, Any] | None:
    # The SDK keeps per-connection state on `Connection.state`; the request context reaches it only
    # through the session (SDK 2.3 has no public accessor on the lowlevel context yet).
    connection = getattr(ctx.session, "_connection", None)
    return getattr(connection, "state", None)


async def set_level(ctx: GateContext, params: types.SetLevelRequestParams) -> types.EmptyResult:
    state = _connection_state(ctx)
    if state is not None:
        state[_STATE_KEY] = params.level
    return types.EmptyResult()


def decision_level(tool_is_read: bool, is_error: bool, error_code: str | None) -> types.LoggingLevel:
    if error_code in ("INTERNAL_ERROR", "BACKEND_UNAVAILABLE"):
        return "error"
    if is_error:
        return "warning"
    return "debug" if tool_is_read else "info"


def wanted(level: types.LoggingLevel, threshold: types.LoggingLevel | None) -> bool:
    return threshold is not None and LEVELS.index(level) >= LEVELS.index(threshold)


def decision_data(agent: str, tool: str, structured: dict[str, Any] | None, is_error: bool) -> dict[str, Any]:
    """Names and codes only, from the answer (a rejection's message may quote an argument: left out)."""
    structured = structured or {}
    data = {
        "agent": agent,
        "tool": tool,
        "status": "rejected" if is_error else structured.get("status", "ok"),
        "label": None if is_error else structured.get("label") or structured.get("type"),
        "error_code": structured.get("error_code") if is_error else None,
    }
    return {k: v for k, v in data.items() if v is not None}


def call_scoped(ctx: GateContext, json_answers: bool) -> bool:
    """Whether a notification about this call goes on the call's own stream (else: the session's GET stream).
    Only a handshake-era HTTP session answered in JSON has a GET stream to send it to instead; a 2026-07-28
    request has no session (its messages are the request's or none), stdio has one pipe."""
    return not (json_answers and ctx.request is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS)


async def report_progress(
    ctx: GateContext, scoped: bool, progress: float, total: float | None = None, message: str | None = None
) -> None:
    """`notifications/progress` for this call, if its caller asked for progress, on the stream `scoped` says."""
    if scoped:
        await ctx.session.report_progress(progress, total, message)
        return
    token = ctx.meta.get("progress_token") if ctx.meta is not None else None
    if token is not None:
        await ctx.session.send_progress_notification(token, progress, total, message)


async def send_decision(ctx: GateContext, level: types.LoggingLevel, data: dict[str, Any], scoped: bool = True) -> None:
    """On this request's stream (`scoped`, else the session's GET stream), if the session (or, on 2026-07-28, the
    request) asked for this level."""
    if level not in allowed_log_levels(ctx.protocol_version, ctx.meta):
        return  # a 2026-07-28 request that did not opt in at this level
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        state = _connection_state(ctx)
        if not wanted(level, state.get(_STATE_KEY) if state is not None else None):
            return
    notification = types.LoggingMessageNotification(
        params=types.LoggingMessageNotificationParams(level=level, data=data, logger=LOGGER)
    )
    try:
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id if scoped else None)
    except Exception:  # noqa: BLE001 - a log message must never fail the call it describes
        logger.debug("could not send notifications/message", exc_info=True)
