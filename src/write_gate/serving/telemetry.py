"""What the gate tells monitoring: Prometheus metrics (prometheus-client) and OpenTelemetry traces and metrics.

Both are off unless asked for, and cost nothing then: no wrapper around the engine, no counter on the call path.
- Metrics: one CollectorRegistry per server (never the process-wide default, so two servers in one process never
  mix their counts), scraped at /metrics (docs/operations/observability.md). An agent label carries only names the
  agents file lists (every other caller is `unlisted`): label values an agent could choose would grow without bound.
- Traces: a server span per MCP request (surface/mcp_spans.py) and a child span per engine statement carrying its
  shape (the statement's text: values are always parameters, and parameters are never recorded). On when the
  standard OpenTelemetry variables name an exporter (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_EXPORTER`), or
  when a caller hands in its own providers (tests use the SDK's in-memory exporter).
"""

import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry.metrics import Histogram as OtelHistogram
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import SpanKind, StatusCode, Tracer, TracerProvider
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from write_gate import __version__

UNLISTED = "unlisted"  # the agent label of a caller the agents file does not list

# Seconds; a write on the embedded engine takes about a millisecond, a large batch or import many seconds.
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
STATEMENT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
# What the MCP semantic conventions advise for mcp.server.operation.duration.
OPERATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class Metrics:
    """The gate's Prometheus metrics, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.calls = Counter(
            "write_gate_tool_calls",
            "Tool calls by tool, outcome (ok or rejected), error code and agent.",
            ["tool", "outcome", "error_code", "agent"],
            registry=r,
        )
        self.call_seconds = Histogram(
            "write_gate_tool_call_duration_seconds",
            "Time to answer a tool call, by tool.",
            ["tool"],
            buckets=CALL_BUCKETS,
            registry=r,
        )
        self.statements = Counter(
            "write_gate_engine_statements",
            "Statements sent to the graph engine, by operation (read or write) and outcome (ok or error).",
            ["operation", "outcome"],
            registry=r,
        )
        self.statement_seconds = Histogram(
            "write_gate_engine_statement_duration_seconds",
            "Time the graph engine took for a statement, by operation.",
            ["operation"],
            buckets=STATEMENT_BUCKETS,
            registry=r,
        )
        self.replays = Counter(
            "write_gate_idempotent_replays",
            "Write calls answered with the stored outcome of their idempotency key (nothing ran again).",
            ["tool", "agent"],
            registry=r,
        )
        self.rate_limited = Counter(
            "write_gate_rate_limit_refusals",
            "Calls refused with RATE_LIMITED (over the agent's max_writes_per_minute or its fair share).",
            ["tool", "agent"],
            registry=r,
        )
        self.held_back = Counter(
            "write_gate_held_back_calls",
            "Calls an agent's fair share in this gate refused, by agent and limit (max_calls_in_flight, read_budget).",
            ["agent", "limit"],
            registry=r,
        )
        self.quarantine = Gauge(
            "write_gate_quarantine_entries", "Rejected writes kept for replay, by space.", ["space"], registry=r
        )
        self.open_conflicts = Gauge(
            "write_gate_open_conflicts",
            "Conflicts held open (keep_both) awaiting resolve_conflict.",
            ["space"],
            registry=r,
        )
        self.registry_version = Gauge(
            "write_gate_registry_version",
            "The schema registry's version in force (-1: not loaded).",
            ["space"],
            registry=r,
        )

    def call(
        self, tool: str, agent: str, seconds: float, is_error: bool, error_code: str | None, replayed: bool
    ) -> None:
        """One answered tool call; `agent` is already a label value (a listed name or UNLISTED)."""
        outcome = "rejected" if is_error else "ok"
        self.calls.labels(tool, outcome, (error_code or "") if is_error else "", agent).inc()
        self.call_seconds.labels(tool).observe(seconds)
        if replayed:
            self.replays.labels(tool, agent).inc()
        if is_error and error_code == "RATE_LIMITED":
            self.rate_limited.labels(tool, agent).inc()

    def cancelled(self, tool: str, agent: str) -> None:
        """A tool call the client gave up on before its answer: counted, never answered."""
        self.calls.labels(tool, "cancelled", "", agent).inc()


@dataclass(frozen=True)
class Tracing:
    """OpenTelemetry's tracer and the MCP conventions' operation-duration histogram."""

    tracer: Tracer
    operation_duration: OtelHistogram | None

    @classmethod
    def from_providers(cls, tracer_provider: TracerProvider, meter_provider: MeterProvider | None = None) -> "Tracing":
        tracer = tracer_provider.get_tracer("write-gate", __version__)
        histogram = None
        if meter_provider is not None:
            meter = meter_provider.get_meter("write-gate", __version__)
            histogram = meter.create_histogram(
                "mcp.server.operation.duration",
                unit="s",
                description="MCP request or notification duration as observed on the receiver.",
                explicit_bucket_boundaries_advisory=list(OPERATION_BUCKETS),
            )
        return cls(tracer, histogram)


_CLAUSE = re.compile(
    r"\b(MATCH|OPTIONAL MATCH|MERGE|CREATE|SET|DELETE|DETACH DELETE|REMOVE|UNWIND|CALL|FOREACH|RETURN|GRAPH\.\w+)\b"
)


def query_summary(text: str) -> str:
    """A statement's clauses in order, each once where repeated in a row (`MATCH SET RETURN`): a short name for
    its shape that holds no label and no value."""
    clauses: list[str] = []
    for found in _CLAUSE.findall(text):
        if not clauses or clauses[-1] != found:
            clauses.append(found)
    return " ".join(clauses[:6]) or "statement"


def shape_id(text: str) -> str:
    """The same statement shape has the same id on every gate and run."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class EngineTarget:
    """What a statement span says of the engine: `db.system.name` and `db.namespace` (graph or database)."""

    system: str
    namespace: str


class Telemetry:
    """The metrics and the tracing a server keeps (each None when off), and the agents whose names may label."""

    def __init__(
        self,
        metrics: Metrics | None = None,
        tracing: Tracing | None = None,
        listed: Callable[[str], bool] | None = None,
    ) -> None:
        self.metrics = metrics
        self.tracing = tracing
        self._listed = listed or (lambda _agent: False)

    @property
    def on(self) -> bool:
        return self.metrics is not None or self.tracing is not None

    def agent_label(self, agent: str) -> str:
        return agent if self._listed(agent) else UNLISTED

    def listing(self, listed: Callable[[str], bool]) -> None:
        """Which agent names may label a metric (the server's agents file, once it has read it)."""
        self._listed = listed

    @contextmanager
    def statement(self, operation: str, text: str, target: EngineTarget) -> Iterator[None]:
        """Around one engine statement: its count and time, and its span (a child of the request's)."""
        started = time.perf_counter()
        outcome = "ok"
        span_cm: Any = None
        if self.tracing is not None:
            attributes = {
                "db.system.name": target.system,
                "db.namespace": target.namespace,
                "db.operation.name": operation,
                "db.query.summary": query_summary(text),
                "db.query.text": text,  # the shape: every value the gate sends is a parameter, never recorded
                "write_gate.statement.shape": shape_id(text),
            }
            span_cm = self.tracing.tracer.start_as_current_span(
                f"{operation} {attributes['db.query.summary']}",
                kind=SpanKind.CLIENT,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            )
        span = span_cm.__enter__() if span_cm is not None else None
        try:
            yield
        except BaseException as exc:
            outcome = "error"
            if span is not None:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR)  # the engine's message may quote a value: not recorded
            raise
        finally:
            if span_cm is not None:
                span_cm.__exit__(None, None, None)
            if self.metrics is not None:
                self.metrics.statements.labels(operation, outcome).inc()
                self.metrics.statement_seconds.labels(operation).observe(time.perf_counter() - started)


# --- OpenTelemetry from the environment --------------------------------------------------------------------

_TRACE_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def tracing_from_environment(environ: dict[str, str] | None = None) -> Tracing | None:
    """The standard OpenTelemetry variables, read as the SDK documents them: an OTLP endpoint (or
    `OTEL_TRACES_EXPORTER=otlp`) sends traces, and the operation-duration metric, over OTLP/HTTP;
    `OTEL_TRACES_EXPORTER=console` prints spans to stderr (stdout carries MCP over stdio). None (off) unless one
    of them is set, or when `OTEL_SDK_DISABLED=true`."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    exporter = env.get("OTEL_TRACES_EXPORTER", "").lower()
    if exporter in ("", "none") and not any(env.get(name) for name in _TRACE_VARIABLES):
        return None
    if exporter == "none":
        return None
    from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", "write-gate")})
    tracer_provider = SdkTracerProvider(resource=resource)
    if exporter == "console":
        tracer_provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
        reader = PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr))
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    meter_provider = SdkMeterProvider(resource=resource, metric_readers=[reader])
    return Tracing.from_providers(tracer_provider, meter_provider)
