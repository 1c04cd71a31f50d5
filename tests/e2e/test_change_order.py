"""The order of one subject's changes under concurrent gates (issue 28, item 3), on every engine: several
`write-gate serve` processes on one graph, each an agent of its own, write one property of one Person at once.
get_history lists every revision once, newest first, and changes_since hands a poller reading while they write
each change once, each one after the change it followed (its `before` is the `after` before it). And the `seq`
a statement gives a change sorts after its subject's last one, whatever the writer's clock says."""

from typing import Any

import anyio
import pytest

from tests.conftest import MATRIX_SCHEMAS, ok, open_client
from write_gate.core.cypher.change_order import next_seq
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

GATES, WRITES = 3, 6
ADA = {"label": "Person", "merge_keys": {"name": "Ada"}}


def write(gate: int, i: int) -> dict[str, Any]:
    return {**ADA, "properties": {"v": f"{gate}-{i}"}, "source": f"gate-{gate}", "extraction_method": "api"}


def ada_changes(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes of Ada's `v`, as (before, after), in the order the feed answered them."""
    out = []
    for change in changes:
        if change["subject"] == {"label": "Person", "merge_keys": {"name": "Ada"}}:
            [v] = [p for p in change["properties"] if p["property"] == "v"]
            out.append((v["before"], v["after"]))
    return out


def chained(pairs: list[tuple[Any, Any]]) -> bool:
    """Each change replaced the value the one before it wrote: none came early, none was missed."""
    return all(later[0] == earlier[1] for earlier, later in zip(pairs, pairs[1:], strict=False))


async def test_one_subjects_changes_are_listed_and_fed_in_revision_order_across_gate_processes(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    reader_settings = settings.model_copy(update={"change_settle_seconds": 0.0})
    fed: list[tuple[Any, Any]] = []
    async with open_client(reader_settings, "in_process") as reader:
        cursor: str | None = None

        async def poll() -> None:
            nonlocal cursor
            page = await ok(reader, "changes_since", {"limit": 5} | ({"cursor": cursor} if cursor else {}))
            cursor = page["next_cursor"]
            fed.extend(ada_changes(page["changes"]))
            assert chained(fed), fed  # checked as they arrive: a later revision never before an earlier one

        async def gate(n: int, started: anyio.Event) -> None:
            async with open_client(settings.model_copy(update={"agent": f"gate-{n}"}), "stdio") as client:
                started.set()
                await go.wait()
                async with anyio.create_task_group() as writes:  # all at once: the gate decides them concurrently
                    for i in range(WRITES):
                        writes.start_soon(ok, client, "write_node", write(n, i))
            done.append(n)

        go, done = anyio.Event(), []
        with anyio.fail_after(120):
            async with anyio.create_task_group() as gates:
                ready = [anyio.Event() for _ in range(GATES)]
                for n in range(GATES):
                    gates.start_soon(gate, n, ready[n])
                for event in ready:
                    await event.wait()
                go.set()  # every gate has started: they write at once, and the reader polls while they do
                while len(done) < GATES:
                    await poll()
            while len(fed) < GATES * WRITES:
                before = len(fed)
                await poll()
                if len(fed) == before:
                    break
        history = (await ok(reader, "get_history", {**ADA, "property": "v", "limit": 100}))["changes"]
    written = GATES * WRITES
    assert [c["revision"] for c in history] == list(range(written, 0, -1))
    assert chained([(c["before"], c["after"]) for c in reversed(history)])
    assert len(fed) == written and fed[0][0] is None and chained(fed)
    assert fed == [(c["before"], c["after"]) for c in reversed(history)]


AT = "2026-11-22T08:00:00.000Z"
SEQ_CASES = [
    ([None], AT),  # a subject's first change: the writer's time
    (["2026-11-22T07:00:00.000Z"], AT),  # after an earlier one
    ([AT], AT + "#"),  # the same millisecond: just after it
    ([AT + "##"], AT + "###"),
    (["2026-11-22T09:00:00.000Z#"], "2026-11-22T09:00:00.000Z##"),  # a writer whose clock lags: still after it
    ([None, AT + "#", "2026-11-22T07:00:00.000Z"], AT + "##"),  # a change to several subjects: after each one's
]


async def test_a_changes_seq_sorts_after_its_subjects_last_whatever_the_writers_clock(graph: GraphBackend) -> None:
    await graph.write(Statement("CREATE (:Probe)"))
    for previous, expected in SEQ_CASES:
        text = f"WITH $previous AS p RETURN {next_seq([], '$at', ['p']).replace('seq_of._seq', 'seq_of')} AS seq"
        [row] = await graph.write(Statement(text, {"at": AT, "previous": previous}))
        assert row["seq"] == expected, previous
        assert all(row["seq"] > p for p in previous if p is not None)
    [row] = await graph.write(Statement(f"MATCH (n:Probe) RETURN {next_seq(['n'], '$at')} AS seq", {"at": AT}))
    assert row["seq"] == AT
