"""Metrics and traces, read the way monitoring reads them: the Prometheus text a scrape gets, parsed with
prometheus_client's own parser, and the spans and metric the OpenTelemetry SDK's in-memory exporter and reader
collect. Each through a real MCP client session against a real engine (docs/operations/observability.md)."""

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, Implementation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import MATRIX_SCHEMAS, ok, rejected
from tests.e2e.http_process import free_port, request
from tests.e2e.stdio_process import RawStdio
from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Metrics, Telemetry, Tracing, tracing_from_environment
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.schema_resources import SCHEMA_URI
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


async def test_a_statement_the_engine_refuses_is_counted_as_an_error_and_its_span_marked(
    settings: Settings, graph
) -> None:
    tracing, exporter, _ = _tracing()
    metrics = Metrics()
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(metrics, tracing))
    async with Client(server) as client:
        await ok(client, "search_nodes", {"query": "x"})
        engine = server.services.gate.backend  # the instrumented engine every tool's statements go through
        with pytest.raises(BackendError):
            await engine.read(Statement("RETURN $x +", {"x": SECRET}))  # a statement the engine cannot parse
        found = samples(metrics)
    assert value(found, "write_gate_engine_statements_total", operation="read", outcome="error") == 1
    [failed] = [s for s in exporter.get_finished_spans() if s.attributes.get("db.query.text") == "RETURN $x +"]
    assert failed.status.status_code is StatusCode.ERROR and failed.attributes["error.type"]
    assert SECRET not in json.dumps([dict(failed.attributes), failed.status.description], default=str)


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


def json_objects(text: str) -> list[Any]:
    """Every JSON object in a text that holds them among other lines (the console exporter's are indented)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (at := text.find("{", at)) != -1:
        try:
            value, at = decoder.raw_decode(text, at)
            found.append(value)
        except ValueError:
            at += 1
    return found


def scrape_when_up(url: str) -> tuple[int, dict[str, str], str]:
    deadline = time.monotonic() + 60
    while (answer := request(url, "GET", "/metrics"))[0] == 0:
        assert time.monotonic() < deadline, "nothing listened on the metrics port"
        time.sleep(0.05)
    return answer


async def test_over_stdio_spans_go_to_stderr_and_metrics_to_their_own_port(
    settings: Settings, graph, tmp_path: Path
) -> None:
    """`serve` over stdio with OTEL_TRACES_EXPORTER=console and a metrics port: stdout carries MCP alone, the spans
    of every request (a handshake of 2025-06-18 without `_meta`, its notification, a call, a malformed call, a
    method the gate does not serve, a resource read) reach stderr when the process ends, and /metrics answers on
    127.0.0.1 beside the pipe, with the Host rule of HTTP."""
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    port = free_port()
    log = tmp_path / "stderr.log"
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    with log.open("wb") as stderr:
        server = RawStdio(settings, stderr=stderr, OTEL_TRACES_EXPORTER="console", WRITE_GATE_METRICS_PORT=str(port))
        try:
            server.initialize()
            meta = {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
            call = {"name": "write_node", "arguments": person("Alice", note=SECRET), "_meta": meta}
            assert server.request(1, "tools/call", call)["result"]["isError"] is False
            assert server.request(2, "tools/call", {"name": 5})["error"]["code"] == -32602  # INVALID_PARAMS
            assert server.request(3, "prompts/get", {"name": "summary"})["error"]["code"] == -32601  # no prompts
            assert "contents" in server.request(4, "resources/read", {"uri": SCHEMA_URI})["result"]
            url = f"http://127.0.0.1:{port}"
            status, headers, body = scrape_when_up(url)
            assert status == 200 and headers["content-type"].startswith("text/plain")
            found = {(s.name, tuple(sorted(s.labels.items()))): s.value
                     for f in text_string_to_metric_families(body) for s in f.samples}  # fmt: skip
            assert value(found, "write_gate_tool_calls_total", tool="write_node", outcome="ok", error_code="",
                         agent="unlisted") == 1  # fmt: skip
            assert request(url, "GET", "/metrics", headers={"Host": "evil.example"})[0] == 421
        finally:
            assert server.process.stdin is not None
            server.process.stdin.close()  # the client goes: the server ends, and its spans are flushed
            assert server.process.wait(timeout=60) == 0
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in server.stdout)  # nothing else on stdout
    text = log.read_text()
    spans = {s["name"]: s for s in json_objects(text) if s.get("kind") == "SpanKind.SERVER"}
    assert {"initialize", "notifications/initialized", "tools/call write_node", "tools/call", "prompts/get summary",
            f"resources/read {SCHEMA_URI}"} <= spans.keys(), sorted(spans)  # fmt: skip
    assert spans["tools/call write_node"]["context"]["trace_id"] == f"0x{trace_id}"
    assert spans["initialize"]["attributes"]["network.transport"] == "pipe"
    assert "jsonrpc.request.id" not in spans["notifications/initialized"]["attributes"]
    assert spans["tools/call"]["attributes"]["error.type"] == "-32602"
    assert spans["prompts/get summary"]["attributes"]["rpc.response.status_code"] == "-32601"
    assert spans["prompts/get summary"]["attributes"]["gen_ai.prompt.name"] == "summary"
    assert spans[f"resources/read {SCHEMA_URI}"]["attributes"]["mcp.resource.uri"] == SCHEMA_URI
    assert "mcp.server.operation.duration" in text  # the metric, printed by the console exporter at exit
    assert SECRET not in text


@contextmanager
def otlp_collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP collector on 127.0.0.1: its URL, and each export it received (path, protobuf body)."""
    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the handler's name in http.server
            received.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass

    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=collector.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{collector.server_address[1]}", received
    finally:
        collector.shutdown()
        collector.server_close()


async def test_an_otlp_endpoint_receives_the_agents_trace_and_the_duration_metric(settings: Settings, graph) -> None:
    """OTEL_EXPORTER_OTLP_ENDPOINT, as OpenTelemetry's SDK documents it: the spans and the operation-duration metric
    go to the collector over OTLP/HTTP (protobuf), sent at the latest when the server ends."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    with otlp_collector() as (url, received):
        server = RawStdio(settings, OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_SERVICE_NAME="gate-under-test")
        try:
            server.initialize()
            call = {"name": "write_node", "arguments": person("Alice", note=SECRET)}
            call["_meta"] = {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
            assert server.request(1, "tools/call", call)["result"]["isError"] is False
        finally:
            assert server.process.stdin is not None
            server.process.stdin.close()
            assert server.process.wait(timeout=60) == 0
        exports = list(received)
    spans, services = {}, set()
    for path, body in exports:
        if path == "/v1/traces":
            traces = ExportTraceServiceRequest.FromString(body)
            for resource in traces.resource_spans:
                services |= {a.value.string_value for a in resource.resource.attributes if a.key == "service.name"}
                spans |= {s.name: s for scope in resource.scope_spans for s in scope.spans}
    assert services == {"gate-under-test"}
    assert spans["tools/call write_node"].trace_id.hex() == trace_id
    statements = [s for s in spans.values() if s.parent_span_id == spans["tools/call write_node"].span_id]
    assert statements, sorted(spans)
    metrics = [ExportMetricsServiceRequest.FromString(body) for path, body in exports if path == "/v1/metrics"]
    names = {m.name for r in metrics for rm in r.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert "mcp.server.operation.duration" in names
    assert all(SECRET.encode() not in body for _, body in exports)


def test_opentelemetry_stays_off_unless_its_variables_ask_for_an_exporter() -> None:
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert tracing_from_environment({}) is None
    assert tracing_from_environment({"OTEL_TRACES_EXPORTER": "none"}) is None
    assert tracing_from_environment({**endpoint, "OTEL_TRACES_EXPORTER": "none"}) is None  # named, but none
    assert tracing_from_environment({**endpoint, "OTEL_SDK_DISABLED": "true"}) is None
