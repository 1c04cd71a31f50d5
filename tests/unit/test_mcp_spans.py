"""The gate's span middleware (surface/mcp_spans.py) in the SDK's own server runner, around handlers that do what
the gate's never do: crash, answer a tool error without the gate's error code, or (an inner middleware) answer a
model before the runner has serialised it. Spans and the duration metric are read from the SDK's in-memory
exporter and reader; no engine is involved."""

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from write_gate.serving.telemetry import Tracing
from write_gate.surface.mcp_spans import McpSpans

pytestmark = pytest.mark.anyio

TOOLS = ["crash", "plain_error", "answered_early"]


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=name, input_schema={"type": "object"}) for name in TOOLS])


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "crash":
        raise RuntimeError("a handler's own defect")
    # A tool error with text only: no structured content, so no error code.
    return types.CallToolResult(content=[types.TextContent(type="text", text="no")], is_error=True)


async def answered_early(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """An inner middleware that answers one tool itself, with a model the runner has not serialised."""
    if ctx.method == "tools/call" and (ctx.params or {}).get("name") == "answered_early":
        content = [types.TextContent(type="text", text="early")]
        return types.CallToolResult(content=content, structured_content={"error_code": "EARLY"}, is_error=True)
    return await call_next(ctx)


async def test_a_crash_a_plain_tool_error_and_an_early_model_answer_each_mark_their_span() -> None:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = Server("spans", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware = [
        McpSpans(Tracing.from_providers(provider, MeterProvider(metric_readers=[reader]))),
        answered_early,
    ]
    async with Client(server) as client:
        with pytest.raises(MCPError):
            await client.call_tool("crash", {})
        assert (await client.call_tool("plain_error", {})).is_error
        assert (await client.call_tool("answered_early", {})).is_error
    spans = {s.name: s for s in exporter.get_finished_spans()}
    crash = spans["tools/call crash"]
    assert crash.attributes["error.type"] == "RuntimeError" and crash.status.status_code is StatusCode.ERROR
    assert "a handler's own defect" not in str(crash.status.description)  # the exception's text is not recorded
    plain = spans["tools/call plain_error"]
    assert plain.attributes["error.type"] == "tool_error" and "write_gate.error_code" not in plain.attributes
    early = spans["tools/call answered_early"]
    assert (early.attributes["error.type"], early.attributes["write_gate.error_code"]) == ("tool_error", "EARLY")
    durations = {
        (point.attributes["gen_ai.tool.name"], point.attributes.get("error.type"))
        for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
        if metric.name == "mcp.server.operation.duration"
        for point in metric.data.data_points
        if "gen_ai.tool.name" in point.attributes
    }
    assert durations == {("crash", "RuntimeError"), ("plain_error", "tool_error"), ("answered_early", "tool_error")}
