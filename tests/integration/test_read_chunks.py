"""A heavy read goes to the engine as statements of bounded size (issue 37's crowd): the entities of a page are
expanded (their properties and relations) `EXPAND_CHUNK` at a time, so a write waits at most one short statement
in the engine, and the gate parses one short reply at a time. The answer is the one a single statement gave.
Counted through the gate's own statement spans (one per engine statement). Runs on every engine tier."""

import math
from typing import Any

import pytest
from mcp import Client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import MATRIX_SCHEMAS, ok, open_client
from write_gate.core.cypher import reads as read_cypher
from write_gate.engines import GraphBackend
from write_gate.services.reads import EXPAND_CHUNK, OPEN_ENTITIES
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Telemetry, Tracing
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PROV = {"source": "crm", "extraction_method": "manual"}
PEOPLE = EXPAND_CHUNK * 2 + 7  # three chunks, the last a short one


def person(i: int) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": f"P{i:04d}"}, **PROV}


def works_for(i: int) -> dict[str, Any]:
    return {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": f"P{i:04d}"},
        "to_label": "Organization",
        "to_keys": {"name": f"Org{i % 3}"},
        "endpoint_policy": "merge_endpoints",
        **PROV,
    }


def expands(exporter: InMemorySpanExporter, outgoing_only: bool) -> int:
    text = read_cypher.expand(outgoing_only).text
    return sum(1 for span in exporter.get_finished_spans() if (span.attributes or {}).get("db.query.text") == text)


async def test_a_page_is_expanded_in_statements_of_bounded_size_and_answers_the_same(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    async with open_client(settings, "in_process") as writer:
        await ok(writer, "write_nodes", {"items": [person(i) for i in range(PEOPLE)]})
        await ok(writer, "write_relationships", {"items": [works_for(i) for i in range(0, PEOPLE, 2)]})
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=Tracing.from_providers(provider)))
    async with Client(server) as client:
        exporter.clear()
        read = await ok(client, "read_graph", {"labels": ["Person"], "limit": PEOPLE})
        assert expands(exporter, outgoing_only=True) == math.ceil(PEOPLE / EXPAND_CHUNK)
        exporter.clear()
        names = [f"P{i:04d}" for i in range(PEOPLE)]
        opened = await ok(client, "open_nodes", {"names": names, "neighbors": False})  # its first window
        window = min(PEOPLE, OPEN_ENTITIES)
        assert expands(exporter, outgoing_only=False) == math.ceil(window / EXPAND_CHUNK)
    # Every entity once, each with its own relation: what one statement answered.
    assert sorted(entity["name"] for entity in read["entities"]) == names
    assert read["next_cursor"] is None
    assert len({entity["name"] for entity in opened["entities"]} & set(names)) == window
    for answer in (read, opened):
        shown = [int(entity["name"][1:]) for entity in answer["entities"]]
        expected = sorted((f"P{i:04d}", f"Org{i % 3}") for i in shown if i % 2 == 0)
        assert sorted((r["from"], r["to"]) for r in answer["relations"]) == expected
