"""A read call is held to the call limit as a whole (issue 37: no single call runs longer than the configured
limit): an export that reads the graph a page at a time is stopped at the limit and answers QUERY_TIMEOUT with
what to do instead, never a partial export; the gate serves on; a write is never cut short by it."""

import math
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import ok, rejected
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.surface.call_limit import call_limit
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio

NODES = 3_000  # an export of these takes far longer than LIMIT on any machine this runs on
LIMIT = 0.05


def person(i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"p{i:05d}"},
        "properties": {"observations": [f"likes topic {i % 97}"]},
        "source": "limits",
        "extraction_method": "api",
    }


async def test_a_read_past_the_call_limit_is_stopped_and_the_gate_serves_on(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    limited = settings.model_copy(update={"call_limit_seconds": LIMIT})
    server = build_server(limited, auto_migrate=False)
    async with Client(server, read_timeout_seconds=120) as client:
        # A write is not held to the limit: every item of a batch far slower than it is written.
        written = await ok(client, "write_nodes", {"items": [person(i) for i in range(NODES)]})
        assert written["written"] == NODES
        with anyio.fail_after(60):
            answer = await rejected(client, "export_graph", {"format": "jsonl"})
        assert answer["error_code"] == "QUERY_TIMEOUT"
        assert answer["details"]["limit"] == "call_limit_seconds"
        assert answer["details"]["limit_seconds"] == LIMIT
        assert "write-gate export" in answer["details"]["hint"]
        # The gate and its engine serve on (a write: no read is sure to fit a limit this short on a loaded CI).
        assert (await ok(client, "write_node", person(NODES)))["status"] == "written"
    # The same export with the limit off answers the whole graph: the limit, not the export, stopped it.
    unlimited = build_server(settings.model_copy(update={"call_limit_seconds": 0}), auto_migrate=False)
    async with Client(unlimited, read_timeout_seconds=300) as client:
        exported = await ok(client, "export_graph", {"format": "jsonl"})
        assert exported["entities"] == NODES + 1


def test_only_a_read_is_limited_and_zero_turns_the_limit_off() -> None:
    assert call_limit(True, 10.0) == pytest.approx(9.5)  # a share kept for stopping and answering
    assert call_limit(False, 10.0) == math.inf
    assert call_limit(True, 0.0) == math.inf
