"""Metrics and traces, read the way monitoring reads them: the Prometheus text a scrape gets, parsed with
prometheus_client's own parser, and the spans and metric the OpenTelemetry SDK's in-memory exporter and reader
collect. Each through a real MCP client session against a real engine (docs/operations/observability.md)."""

import json
from typing import Any

import pytest
from mcp import Client, Implementation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import MATRIX_SCHEMAS, ok, rejected
from write_gate.access.agents import AgentsFile, Grant
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Metrics, Telemetry, Tracing
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio

SECRET = "Sentinel-Value-7731"  # a value no statement text and no span may ever hold


def person(name: str, **props: Any) -> dict[str, Any]:
    keys = {"name": name}
    return {"label": "Person", "merge_keys": keys, "properties": props, "source": "t", "extraction_method": "api"}


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by name and labels, through the Prometheus text format."""
    text = generate_latest(metrics.registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.every_tier
async def test_metrics_count_calls_outcomes_statements_and_gauges(settings: Settings, graph, tmp_path) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    agents = AgentsFile.load(tmp_path / "agents.toml")
    agents.add("fleet-a", Grant(max_writes_per_minute=2))
    agents.save()
    settings = settings.model_copy(update={"agents_file": tmp_path / "agents.toml", "agent": "fleet-a"})
    metrics = Metrics()
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(metrics))
    async with Client(server, client_info=Implementation(name="telemetry-test", version="1")) as client:
        await ok(client, "write_node", {**person("Alice", age=30), "idempotency_key": "k1"})
        await ok(client, "write_node", {**person("Alice", age=30), "idempotency_key": "k1"})  # a repeat: nothing runs
        refused = await rejected(client, "write_node", {**person("Bob"), "label": "Nope!"})
        assert refused["error_code"] == "INVALID_INPUT"
        limited = await rejected(client, "write_node", person("Carol"))  # the third write that ran this minute
        assert limited["error_code"] == "RATE_LIMITED"
        await ok(client, "search_nodes", {"query": "Alice"})
        await server.operations.sample_gauges()  # as a scrape does
    found = samples(metrics)
    agent = {"agent": "fleet-a"}
    assert value(found, "write_gate_tool_calls_total", tool="write_node", outcome="ok", error_code="", **agent) == 2
    assert value(found, "write_gate_tool_calls_total", tool="write_node", outcome="rejected",
                 error_code="INVALID_INPUT", **agent) == 1  # fmt: skip
    assert value(found, "write_gate_tool_calls_total", tool="write_node", outcome="rejected",
                 error_code="RATE_LIMITED", **agent) == 1  # fmt: skip
    assert value(found, "write_gate_tool_calls_total", tool="search_nodes", outcome="ok", error_code="", **agent) == 1
    assert value(found, "write_gate_idempotent_replays_total", tool="write_node", **agent) == 1
    assert value(found, "write_gate_rate_limit_refusals_total", tool="write_node", **agent) == 1
    assert value(found, "write_gate_tool_call_duration_seconds_count", tool="write_node") == 4
    assert value(found, "write_gate_engine_statements_total", operation="write", outcome="ok") >= 1
    assert value(found, "write_gate_engine_statements_total", operation="read", outcome="ok") >= 1
    assert value(found, "write_gate_engine_statement_duration_seconds_count", operation="write") >= 1
    # The INVALID_INPUT write was kept; the rate-limited one is transient and was not.
    assert value(found, "write_gate_quarantine_entries", space="main") == 1
    assert value(found, "write_gate_open_conflicts", space="main") == 0
    assert value(found, "write_gate_registry_version", space="main") >= 1


async def test_an_agent_the_agents_file_does_not_list_is_labelled_unlisted(settings: Settings, graph) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    metrics = Metrics()
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(metrics))
    async with Client(server, client_info=Implementation(name="any-name-an-agent-picks", version="1")) as client:
        await ok(client, "write_node", person("Alice"))
    text = generate_latest(metrics.registry).decode()
    assert 'agent="unlisted"' in text and "any-name-an-agent-picks" not in text


def _tracing() -> tuple[Tracing, InMemorySpanExporter, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return Tracing.from_providers(provider, MeterProvider(metric_readers=[reader])), exporter, reader


@pytest.mark.every_tier
async def test_a_call_continues_the_agents_trace_down_to_each_engine_statement(settings: Settings, graph) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    tracing, exporter, reader = _tracing()
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=tracing))
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    async with Client(server) as client:
        exporter.clear()
        answer = await client.call_tool(
            "write_node", person("Alice", note=SECRET), meta={"traceparent": f"00-{trace_id}-{parent_id}-01"}
        )
        assert not answer.is_error, answer.structured_content
    spans = exporter.get_finished_spans()
    [call] = [s for s in spans if s.name == "tools/call write_node"]
    assert call.kind is SpanKind.SERVER
    assert format(call.context.trace_id, "032x") == trace_id  # the agent's trace, continued
    assert format(call.parent.span_id, "016x") == parent_id and call.parent.is_remote
    assert call.attributes["mcp.method.name"] == "tools/call"
    assert call.attributes["gen_ai.tool.name"] == "write_node"
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    statements = [s for s in spans if s.parent is not None and s.parent.span_id == call.context.span_id]
    assert statements, [s.name for s in spans]
    assert {s.attributes["db.operation.name"] for s in statements} >= {"write"}
    assert all(s.kind is SpanKind.CLIENT and s.attributes["db.query.text"] for s in statements)
    assert all(s.context.trace_id == call.context.trace_id for s in statements)
    # The statement's shape, never its parameters: the value sent is in no span.
    assert SECRET not in json.dumps([dict(s.attributes) for s in spans], default=str)
    durations = [
        point
        for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
        if metric.name == "mcp.server.operation.duration"
        for point in metric.data.data_points
    ]
    assert any(p.attributes.get("gen_ai.tool.name") == "write_node" and p.count == 1 for p in durations), durations


async def test_a_rejection_marks_its_span_as_a_tool_error(settings: Settings, graph) -> None:
    tracing, exporter, _ = _tracing()
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=tracing))
    async with Client(server) as client:
        exporter.clear()
        await rejected(client, "write_node", {**person("Bob"), "label": "Nope!"})
        without = await client.call_tool("search_nodes", {"query": "x"})  # no _meta: a trace of its own
        assert not without.is_error
    spans = {s.name: s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER}
    assert spans["tools/call write_node"].attributes["error.type"] == "tool_error"
    assert spans["tools/call write_node"].attributes["write_gate.error_code"] == "INVALID_INPUT"
    assert spans["tools/call search_nodes"].parent is None


async def test_with_nothing_configured_no_span_is_made_and_no_engine_is_wrapped(settings: Settings, graph) -> None:
    server = build_server(settings, auto_migrate=False)
    assert server.middleware == []  # not even the SDK's own span middleware
    async with Client(server) as client:
        await client.call_tool("search_nodes", {"query": "x"})
        gate = server.services.gate
        assert type(gate.backend).__name__ != "InstrumentedBackend"


async def test_a_trace_context_the_propagators_cannot_read_starts_a_trace_of_its_own(settings: Settings, graph) -> None:
    """`_meta` is the agent's to fill: a number where W3C text belongs (in `traceparent`, `tracestate` or
    `baggage`) never fails the call, whose span then starts a trace of its own. A tracer without a meter still
    makes every span."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=Tracing.from_providers(provider)))
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    carriers = [{"traceparent": 5}, {"traceparent": parent, "tracestate": 5}, {"baggage": 5}, {"baggage": [1]}]
    async with Client(server) as client:
        exporter.clear()
        for meta in carriers:
            answer = await client.call_tool("search_nodes", {"query": "x"}, meta=meta)
            assert not answer.is_error, (meta, answer.content)
    calls = [s for s in exporter.get_finished_spans() if s.name == "tools/call search_nodes"]
    assert len(calls) == len(carriers) and all(s.parent is None for s in calls)
