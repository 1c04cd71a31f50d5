"""A heavy read does not hold the gate's event loop (issue 37, item 4): while one session's large answer is being
shaped and serialised, another session's small call is answered."""

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from tests.conftest import ok
from write_gate.core.cypher import reads as read_cypher
from write_gate.core.cypher import resolution as resolution_cypher
from write_gate.engines import GraphBackend
from write_gate.services.reads import MAX_LIMIT
from write_gate.services.resolution import MAX_PAGE_SIZE
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Telemetry, Tracing, shape_id
from write_gate.surface.server import build_server

pytestmark = pytest.mark.anyio

NODES = 4_000  # enough that shaping the answer takes far longer than a small call's round trips


def person(i: int) -> dict[str, Any]:
    return {
        "label": "Person",
        "merge_keys": {"name": f"p{i:05d}"},
        "properties": {"observations": [f"likes topic {i % 97}", f"met at event {i % 31}"]},
        "source": "heavy",
        "extraction_method": "api",
    }


def knows(a: int, b: int) -> dict[str, Any]:
    return {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": f"p{a:05d}"},
        "to_label": "Person",
        "to_keys": {"name": f"p{b:05d}"},
        "source": "heavy",
        "extraction_method": "api",
    }


class Answered(SpanProcessor):
    """Sets `event` when the engine has answered a statement of this shape: from then on, what the gate does with
    the answer is its own work (shaping, serialising)."""

    def __init__(self, shape: str) -> None:
        self.shape = shape
        self.event = anyio.Event()

    def on_end(self, span: ReadableSpan) -> None:
        if (span.attributes or {}).get("write_gate.statement.shape") == self.shape:
            self.event.set()


async def at_once(*calls: Callable[[], Awaitable[None]]) -> None:
    """The calls started together, each in its own task; all done within 300 s."""
    with anyio.fail_after(300):
        async with anyio.create_task_group() as tasks:
            for call in calls:
                tasks.start_soon(call)


async def test_a_small_call_is_answered_while_a_huge_read_is_shaped(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    expand = read_cypher.expand(True)  # read_graph's last statement
    answered = Answered(shape_id(expand.text))
    provider = TracerProvider()
    provider.add_span_processor(answered)
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=Tracing.from_providers(provider)))
    order: list[str] = []
    async with Client(server, read_timeout_seconds=300) as reader, Client(server, read_timeout_seconds=300) as writer:
        assert (await ok(writer, "write_nodes", {"items": [person(i) for i in range(NODES)]}))["written"] == NODES
        links = [knows(i, (i * 7 + 1) % NODES) for i in range(NODES)]
        assert (await ok(writer, "write_relationships", {"items": links}))["written"] == NODES

        async def huge() -> None:
            # The largest page a read answers (open_nodes answers at most 200 entities a call).
            answer = await ok(reader, "read_graph", {"limit": MAX_LIMIT, "provenance": {}})
            assert len(answer["entities"]) == MAX_LIMIT and len(answer["relations"]) >= MAX_LIMIT - 10
            order.append("huge")

        async def small() -> None:
            await answered.event.wait()  # the huge answer is in the gate's hands now
            await ok(writer, "write_node", person(NODES))
            order.append("small")

        await at_once(huge, small)
    assert order == ["small", "huge"]


SYLLABLES = ["ac", "me", "glo", "bex", "ini", "tech", "sys", "ter", "ra", "no", "va", "lux", "cor", "pa", "zen", "ix"]


def organisation(i: int) -> dict[str, Any]:
    """Names from 16 syllables (`i`'s digits in base 16): blocks of hundreds, so scoring a page takes a while."""
    digits, n = [], i + 17
    while n:
        n, digit = divmod(n, 16)
        digits.append(SYLLABLES[digit])
    name = "".join(digits).capitalize()
    return {"label": "Organization", "merge_keys": {"name": name}, "source": "heavy", "extraction_method": "api"}


async def test_a_small_call_is_answered_while_duplicates_are_scored(
    settings: Settings, matrix_graph: GraphBackend
) -> None:
    """find_duplicates blocks and scores its page (thousands of nodes, a rapidfuzz call per proposed pair) in a
    worker thread: another session's write is answered meanwhile."""
    by_id = matrix_graph.dialect.pages_by_id  # a first page: by id from no bound, by `_key` from ''
    read = resolution_cypher.candidates("Organization", ["email", "url"], by_id=by_id, resume=not by_id)
    answered = Answered(shape_id(read.text))
    provider = TracerProvider()
    provider.add_span_processor(answered)
    server = build_server(settings, auto_migrate=False, telemetry=Telemetry(tracing=Tracing.from_providers(provider)))
    order: list[str] = []
    async with Client(server, read_timeout_seconds=300) as reader, Client(server, read_timeout_seconds=300) as writer:
        items = [organisation(i) for i in range(MAX_PAGE_SIZE)]
        assert (await ok(writer, "write_nodes", {"items": items}))["written"] == MAX_PAGE_SIZE

        async def scored() -> None:
            args = {"labels": ["Organization"], "page_size": MAX_PAGE_SIZE}
            answer = await ok(reader, "find_duplicates", args)
            assert answer["nodes_scanned"] == MAX_PAGE_SIZE and answer["pairs_compared"] > 10 * MAX_PAGE_SIZE
            order.append("scored")

        async def small() -> None:
            await answered.event.wait()  # the page is read: blocking and scoring it is the gate's own work now
            await ok(writer, "write_node", person(0))
            order.append("small")

        await at_once(scored, small)
    assert order == ["small", "scored"]
