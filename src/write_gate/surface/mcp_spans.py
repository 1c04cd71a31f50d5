"""A server span per MCP request and the `mcp.server.operation.duration` metric, as OpenTelemetry's semantic
conventions for MCP have them: the span is named `{mcp.method.name} {target}` (`tools/call write_node`), is a
SERVER span, and continues the trace an agent sent in the request's `params._meta` (`traceparent`,
`tracestate`), so an agent's trace runs on through the gate and down to each engine statement (whose spans are
this one's children: serving/telemetry.py).

The SDK ships a middleware of its own that does the spans with the process-wide tracer; the gate uses this one
instead, with the tracer its configuration gives (so tests and two servers in one process keep theirs apart),
and adds the duration metric. Tool arguments and results are never recorded.
"""

import time
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult
from opentelemetry.context import Context
from opentelemetry.propagate import extract
from opentelemetry.trace import SpanKind, StatusCode, get_current_span
from pydantic import ValidationError

from write_gate.serving.telemetry import Tracing


def parent_context(meta: Mapping[str, Any] | None) -> Context | None:
    """The W3C trace context in `_meta`, or None (no carrier, no valid `traceparent`, or values that are not
    text) so the span starts a trace of its own."""
    if not meta:
        return None
    try:
        context = extract(dict(meta))
    except Exception:  # the propagators raise TypeError, AttributeError... on a number where text belongs
        return None
    return context if get_current_span(context).get_span_context().is_valid else None


def _target(ctx: ServerRequestContext[Any, Any]) -> str | None:
    params = ctx.params or {}
    if ctx.method in ("tools/call", "prompts/get"):
        name = params.get("name")
        return name if isinstance(name, str) else None
    if ctx.method.startswith("resources/"):
        uri = params.get("uri")
        return uri if isinstance(uri, str) else None
    return None


def _tool_error(result: HandlerResult) -> dict[str, Any] | None:
    """A tool result that reaches the wire as an error (a model, or the dict a later stage serialises): its
    structured content; None for a success."""
    if isinstance(result, CallToolResult):
        return (result.structured_content or {}) if result.is_error else None
    if isinstance(result, dict) and result.get("isError") is True:
        structured = result.get("structuredContent")
        return structured if isinstance(structured, dict) else {}
    return None


class McpSpans:
    """Context-tier middleware (the SDK's `ServerMiddleware`): wraps every request and notification."""

    def __init__(self, tracing: Tracing) -> None:
        self._tracing = tracing

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        target = _target(ctx)
        attributes: dict[str, Any] = {
            "mcp.method.name": ctx.method,
            "mcp.protocol.version": ctx.protocol_version,
            "network.transport": "pipe" if ctx.request is None else "tcp",
        }
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        if ctx.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
            if target is not None:
                attributes["gen_ai.tool.name"] = target
        elif ctx.method.startswith("resources/") and target is not None:
            attributes["mcp.resource.uri"] = target
        elif ctx.method == "prompts/get" and target is not None:
            attributes["gen_ai.prompt.name"] = target
        error_type: str | None = None
        started = time.perf_counter()
        with self._tracing.tracer.start_as_current_span(
            f"{ctx.method} {target}" if target else ctx.method,
            kind=SpanKind.SERVER,
            attributes=attributes,
            context=parent_context(ctx.meta),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(ctx)
                if ctx.method == "tools/call" and (rejection := _tool_error(result)) is not None:
                    error_type = "tool_error"
                    span.set_attribute("error.type", error_type)
                    code = rejection.get("error_code")
                    if isinstance(code, str):
                        span.set_attribute("write_gate.error_code", code)
                    span.set_status(StatusCode.ERROR)
                return result
            except MCPError as exc:
                error_type = str(exc.error.code)
                span.set_attributes({"error.type": error_type, "rpc.response.status_code": error_type})
                span.set_status(StatusCode.ERROR, exc.error.message)
                raise
            except ValidationError:
                error_type = str(INVALID_PARAMS)  # pydantic's messages quote the client's input: not recorded
                span.set_attributes({"error.type": error_type, "rpc.response.status_code": error_type})
                span.set_status(StatusCode.ERROR, "Invalid request parameters")
                raise
            except Exception as exc:
                error_type = type(exc).__qualname__
                span.set_attribute("error.type", error_type)
                span.set_status(StatusCode.ERROR)
                raise
            finally:
                self._record(attributes, error_type, time.perf_counter() - started)

    def _record(self, attributes: dict[str, Any], error_type: str | None, seconds: float) -> None:
        histogram = self._tracing.operation_duration
        if histogram is None:
            return
        recorded = {
            k: v
            for k, v in attributes.items()
            if k in ("mcp.method.name", "mcp.protocol.version", "network.transport", "gen_ai.tool.name")
        }
        if error_type is not None:
            recorded["error.type"] = error_type
        histogram.record(seconds, recorded)
