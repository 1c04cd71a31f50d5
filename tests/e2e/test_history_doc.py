"""docs/provenance/change-record.md shows what the gate does: its two writes, made here as shown, leave the
record it shows (as stored) and get_history answers what it shows, on every engine. "..." stands for any
value (an id, a time, a claim), as in README.md's blocks (tests/e2e/readme_blocks.py)."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MATRIX_SCHEMAS, ok, open_client
from tests.e2e.readme_blocks import Block, assert_matches, blocks
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

PAGE = Path(__file__).parents[2] / "docs" / "provenance" / "change-record.md"


def shown(key: str) -> Any:
    [block] = [b for b in blocks(PAGE) if b.key == key]
    return json.loads(block.text)


def writes() -> list[Block]:
    return [b for b in blocks(PAGE) if b.lang == "json" and b.key.startswith('{"label": "Person"')]


def by_property(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its aligned lists in the order of its property names (the engine keeps a map's keys in an
    order of its own)."""
    order = sorted(range(len(record["properties"])), key=lambda i: record["properties"][i])
    aligned = ("properties", "before_values", "after_values", "before_claims")
    return {k: [v[i] for i in order] if k in aligned and isinstance(v, list) else v for k, v in record.items()}


async def test_the_page_shows_what_its_writes_record_and_get_history_answers(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    assert len(writes()) == 2
    async with open_client(settings.model_copy(update={"agent": "crm-bot"}), "in_process") as client:
        for block in writes():
            await ok(client, "write_node", json.loads(block.text))
        answer = await ok(client, "get_history", {"label": "Person", "merge_keys": {"name": "Ada"}})
    rows = await graph.read(Statement("MATCH (h:WriteGateChange {revision: 2}) RETURN properties(h) AS p"))
    [second] = [row["p"] for row in rows]
    assert_matches(by_property(second), shown("second-record"), "the second record")
    assert_matches(answer, shown("get-history"), "get_history")
