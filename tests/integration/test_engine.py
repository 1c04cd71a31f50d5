"""The engine protocol against a real engine: parameters, read-only reads, DDL, constraints."""

import pytest

from tests.conftest import is_bolt_tier
from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, ConstraintViolation, GraphBackend
from write_gate.serving.config import BackendKind, Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

AWKWARD = ['a"b', "a'b", "back\\slash", "`tick`", 'x" }) MATCH (n) DETACH DELETE n //', "line\nbreak", "ünï ☃ 𝄞"]


async def test_values_round_trip_as_parameters(graph: GraphBackend) -> None:
    for i, text in enumerate(AWKWARD):
        await graph.write(Statement("CREATE (n:Probe {i: $i, s: $s})", {"i": i, "s": text}))
    rows = await graph.read(Statement("MATCH (n:Probe) RETURN n.s AS s ORDER BY n.i"))
    assert [r["s"] for r in rows] == AWKWARD


# Every escape a parameter's text can need: those FalkorDB reads (\n \t \r \b \f), the control characters it does
# not (sent raw), separators, non-ASCII, quotes and backslashes together (engines/falkordb_params.py).
ESCAPES = ["\r\b\f", "ctl \x01\x07\x0b\x1f\x7f", "sep \u2028\u2029 \u0085", "\\u0041 \\n", 'mix "\\\n\t é 😀', ""]


@pytest.mark.every_tier
async def test_every_string_and_nested_value_reads_back_as_sent(graph: GraphBackend) -> None:
    nested = {"m": {"k": ESCAPES, "n": [1, 2.5, True, None, [["deep"]]]}}
    for i, text in enumerate(ESCAPES):
        await graph.write(Statement("CREATE (n:Probe {i: $i, s: $s, l: $l})", {"i": i, "s": text, "l": [text, text]}))
    rows = await graph.read(Statement("MATCH (n:Probe) RETURN n.s AS s, n.l AS l ORDER BY n.i"))
    assert [r["s"] for r in rows] == ESCAPES and [r["l"] for r in rows] == [[t, t] for t in ESCAPES]
    [row] = await graph.read(Statement("RETURN $m AS m", nested))
    assert row["m"] == nested["m"]


async def test_reads_are_read_only_at_the_engine(graph: GraphBackend) -> None:
    await graph.write(Statement("CREATE (:Existing)"))
    with pytest.raises(BackendError):
        await graph.read(Statement("CREATE (n:Sneaky) RETURN n"))
    assert await graph.read(Statement("MATCH (n:Sneaky) RETURN n")) == []


async def test_reading_a_graph_that_does_not_exist_yet_finds_nothing(graph: GraphBackend) -> None:
    assert await graph.read(Statement("MATCH (n) RETURN n")) == []


async def test_ddl_is_idempotent_and_merge_keeps_keys_unique(graph: GraphBackend) -> None:
    await graph.write(Statement("CREATE (:Thing {name: 'seed'})"))
    for _ in range(2):
        await graph.ensure_index("Thing", "name")
        await graph.ensure_unique("Thing", "name")
    # Empty and white-space-edged keys: FalkorDB's unique constraint crashed its server on these.
    for name in ["a", "Alice Smith ", " ", "", "\tx", "a"]:
        await graph.write(Statement("MERGE (:Thing {name: $name})", {"name": name}))
    rows = await graph.read(Statement("MATCH (n:Thing) RETURN n.name AS name ORDER BY name"))
    assert [r["name"] for r in rows] == sorted(["seed", "a", "Alice Smith ", " ", "", "\tx"])


async def test_memgraph_unique_constraint_refuses_a_second_create(graph: GraphBackend, settings: Settings) -> None:
    if settings.backend is not BackendKind.MEMGRAPH:
        pytest.skip("FalkorDB gets no unique constraint: its serialised MERGE needs none (see FalkorDBDialect)")
    if is_bolt_tier(settings):
        pytest.skip("the Bolt double records Memgraph's constraints, not enforces them: only real Memgraph proves them")
    await graph.ensure_unique("Thing", "name")
    await graph.write(Statement("CREATE (:Thing {name: 'a'})"))
    with pytest.raises(ConstraintViolation):
        await graph.write(Statement("CREATE (:Thing {name: 'a'})"))
