"""Every statement shape each dialect can emit, written out to tests/golden/<dialect>/ for review.

A builder change that alters Cypher fails here until the golden file is regenerated with
`UPDATE_GOLDEN=1 uv run pytest tests/unit/test_golden.py` and the diff is read.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from write_gate import cypher, read_cypher
from write_gate.cypher import Endpoint, Provenance
from write_gate.dialect import FalkorDBDialect, MemgraphDialect

GOLDEN = Path(__file__).parent.parent / "golden"
PROV = Provenance(0.675, "test", "manual", "0.1.0", "2026-01-01T00:00:00.000Z", "agent-7")
ALICE = Endpoint("Person", {"name": "Alice"})
ACME = Endpoint("Organization", {"name": "Acme", "country": "NL"})

# Statements that are the same on every engine: portable Cypher by design.
PORTABLE: dict[str, Callable[[], cypher.Statement]] = {
    "write_node": lambda: cypher.write_node("Person", {"name": "Alice"}, {"age": 30}, PROV, None),
    "write_node_remapped": lambda: cypher.write_node("Person", {"name": "Alice"}, {}, PROV, ":person"),
    "write_relationship_fail_if_missing": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {"since": 2020}, PROV, None, merge_endpoints=False
    ),
    "write_relationship_merge_endpoints": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {}, PROV, None, merge_endpoints=True
    ),
    "write_relationship_remapped": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {}, PROV, ":EMPLOYED_BY", merge_endpoints=False
    ),
    "endpoint_presence": lambda: cypher.endpoint_presence(ALICE, ACME),
    "read_registry": lambda: cypher.READ_REGISTRY,
    "upsert_schema_entries": lambda: cypher.upsert_schema_entries([]),
    "applied_migrations": lambda: cypher.APPLIED_MIGRATIONS,
    "memory_create_relationship_if_absent": lambda: cypher.create_relationship_if_absent(
        "KNOWS", ALICE, ACME, {}, PROV, ":knows"
    ),
    "memory_create_node_if_name_absent": lambda: cypher.create_node_if_name_absent(
        ["Person", "Organization"], "Alice", cypher.write_node("Person", {"name": "Alice"}, {}, PROV, None)
    ),
    "memory_add_observations": lambda: cypher.add_observations("Person", "Alice", ["x"], PROV),
    "memory_delete_observations": lambda: cypher.delete_observations("Person", "Alice", ["x"], PROV.last_updated),
    "memory_delete_nodes": lambda: cypher.delete_nodes([1, 2], ["Alice"]),
    "memory_delete_relationship": lambda: cypher.delete_relationship("KNOWS", ALICE, ACME),
    "typed_write_add": lambda: cypher.typed_write(
        "Npc",
        {"name": "Gandalf"},
        {"role": "Wizard"},
        PROV,
        [cypher.Link("LOCATED_IN", Endpoint("Location", {"name": "Rivendell"}))],
        create=True,
        merge_endpoints=False,
    ),
    "typed_write_update_merge_endpoints": lambda: cypher.typed_write(
        "Npc",
        {"name": "Gandalf"},
        {},
        PROV,
        [
            cypher.Link("LOCATED_IN", Endpoint("Location", {"name": "Mordor"})),
            cypher.Link("MEMBER_OF", Endpoint("Faction", {"name": "Istari"})),
        ],
        create=False,
        merge_endpoints=True,
    ),
    "typed_delete": lambda: cypher.typed_delete("Npc", {"name": "Gandalf"}),
    "count_matching": lambda: cypher.count_matching(ALICE),
    "batch_write_nodes": lambda: cypher.Statement(cypher.write_nodes_batch("Person", ["name"])),
    "batch_write_relationships_merge_endpoints": lambda: cypher.Statement(
        cypher.write_relationships_batch("WORKS_FOR", "Person", ["name"], "Organization", ["name"], True)
    ),
    "read_ids_by_name": lambda: read_cypher.ids_by_name(["Person", "Organization"]),
    "read_expand": lambda: read_cypher.EXPAND,
    "read_label_count": lambda: read_cypher.label_count("Person"),
    "read_relationship_count": lambda: read_cypher.relationship_count("KNOWS"),
    "record_migration": lambda: cypher.record_migration("0001", "2026-01-01T00:00:00.000Z"),
}

DIALECTS = {"memgraph": MemgraphDialect(), "falkordb": FalkorDBDialect()}


def shapes(dialect_name: str) -> dict[str, str]:
    dialect = DIALECTS[dialect_name]
    out = {name: build().text for name, build in PORTABLE.items()}
    out["read_page"] = read_cypher.page_of_ids(dialect, after=-1, limit=101, labels=None, query=None).text
    out["read_page_labels"] = read_cypher.page_of_ids(dialect, after=-1, limit=101, labels=["Person"], query=None).text
    out["read_page_search"] = read_cypher.page_of_ids(dialect, after=5, limit=51, labels=None, query="Tea").text
    out["create_index"] = dialect.create_index("Person", "name")
    if (unique := dialect.create_unique_constraint("Person", "name")) is not None:
        out["create_unique_constraint"] = unique
    return out


CASES = [(d, name) for d in DIALECTS for name in shapes(d)]


@pytest.mark.parametrize("dialect,name", CASES, ids=[f"{d}/{n}" for d, n in CASES])
def test_statement_matches_golden_file(dialect: str, name: str) -> None:
    text = shapes(dialect)[name].rstrip() + "\n"
    path = GOLDEN / dialect / f"{name}.cypher"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1 and review it"
    assert path.read_text() == text


def test_no_stale_golden_files() -> None:
    expected = {f"{d}/{n}.cypher" for d, n in CASES}
    present = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*.cypher")}
    assert present == expected


def test_values_are_parameters_not_text() -> None:
    for build in PORTABLE.values():
        statement = build()
        for value in ("Alice", "Acme", "NL", "test", "manual", ":person", ":EMPLOYED_BY"):
            assert value not in statement.text.replace("`", "").split()
