"""Every statement shape each dialect can emit, written out to tests/golden/<dialect>/ for review.

A builder change that alters Cypher fails here until the golden file is regenerated with
`UPDATE_GOLDEN=1 uv run pytest tests/unit/test_golden.py` and the diff is read.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from write_gate import backfill, cypher, read_cypher
from write_gate.cypher import Endpoint, Provenance
from write_gate.dialect import FalkorDBDialect, MemgraphDialect

GOLDEN = Path(__file__).parent.parent / "golden"
# Every value below is a sentinel that must never appear in a statement's text (see the last test).
PROV = Provenance(0.675, "src-SENTINEL", "manual", "0.1.0", "2026-01-01T00:00:00.000Z", "agent-SENTINEL")
ALICE = Endpoint("Person", {"name": "Alice-SENTINEL"})
ACME = Endpoint("Organization", {"name": "Acme-SENTINEL", "country": "NL-SENTINEL"})

# Statements that are the same on every engine: portable Cypher by design.
PORTABLE: dict[str, Callable[[], cypher.Statement]] = {
    "write_node": lambda: cypher.write_node("Person", {"name": "Alice-SENTINEL"}, {"age": 30}, PROV, None),
    "write_node_remapped": lambda: cypher.write_node(
        "Person", {"name": "Alice-SENTINEL"}, {}, PROV, ":person-SENTINEL"
    ),
    "write_relationship_fail_if_missing": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {"since": 2020}, PROV, None, merge_endpoints=False
    ),
    "write_relationship_merge_endpoints": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {}, PROV, None, merge_endpoints=True
    ),
    "write_relationship_remapped": lambda: cypher.write_relationship(
        "WORKS_FOR", ALICE, ACME, {}, PROV, ":EMPLOYED_BY-SENTINEL", merge_endpoints=False
    ),
    "endpoint_presence": lambda: cypher.endpoint_presence(ALICE, ACME),
    "read_registry": lambda: cypher.READ_REGISTRY,
    "registry_version": lambda: cypher.REGISTRY_VERSION,
    "defined_schema_entries": lambda: cypher.defined_schema_entries(["LOCATED_IN-SENTINEL"]),
    "upsert_schema_entries": lambda: cypher.upsert_schema_entries([{"name": "X-SENTINEL"}], "time-SENTINEL"),
    "applied_migrations": lambda: cypher.APPLIED_MIGRATIONS,
    "memory_create_relationship_if_absent": lambda: cypher.create_relationship_if_absent(
        "KNOWS", ALICE, ACME, {}, PROV, ":knows-SENTINEL"
    ),
    "memory_create_node_if_name_absent": lambda: cypher.create_node_if_name_absent(
        cypher.NameScope(("Person", "Organization"), ("Npc",)),
        "Alice-SENTINEL",
        cypher.write_node("Person", {"name": "Alice-SENTINEL"}, {}, PROV, None),
    ),
    "memory_add_observations": lambda: cypher.add_observations(
        7, "Alice-SENTINEL", ["x-SENTINEL"], "time-SENTINEL", "agent-SENTINEL"
    ),
    "memory_delete_observations": lambda: cypher.delete_observations(
        7, "Alice-SENTINEL", ["x-SENTINEL"], "time-SENTINEL", "agent-SENTINEL"
    ),
    "memory_delete_nodes": lambda: cypher.delete_nodes([1, 2], ["Alice-SENTINEL"], None),
    "memory_delete_nodes_granted_types": lambda: cypher.delete_nodes([1, 2], ["Alice-SENTINEL"], ["KNOWS"]),
    "memory_delete_relationship": lambda: cypher.delete_relationship("KNOWS", 1, "Alice-SENTINEL", 2, "Acme-SENTINEL"),
    "typed_write_add": lambda: cypher.typed_write(
        "Npc",
        {"name": "Gandalf-SENTINEL"},
        {"role": "Wizard-SENTINEL"},
        PROV,
        [cypher.Link("LOCATED_IN", (Endpoint("Location", {"name": "Rivendell-SENTINEL"}),))],
        create=True,
        merge_endpoints=False,
    ),
    "typed_write_update_merge_endpoints": lambda: cypher.typed_write(
        "Npc",
        {"name": "Gandalf-SENTINEL"},
        {},
        PROV,
        [
            cypher.Link("LOCATED_IN", (Endpoint("Location", {"name": "Mordor-SENTINEL"}),)),
            cypher.Link("MEMBER_OF", (Endpoint("Faction", {"name": "Istari-SENTINEL"}),)),
        ],
        create=False,
        merge_endpoints=True,
    ),
    # An array relationship property (one relationship per item, the type's set replaced), a target that two
    # types share (matched once), a type cleared by an empty array, and a weight.
    "typed_write_array_links_weighted": lambda: cypher.typed_write(
        "Faction",
        {"name": "Fellowship-SENTINEL"},
        {},
        PROV,
        [
            cypher.Link(
                "ALLIED_WITH",
                (Endpoint("Faction", {"name": "Rohan-SENTINEL"}), Endpoint("Entity", {"name": "Ents-SENTINEL"})),
            ),
            cypher.Link("BASED_IN", (Endpoint("Entity", {"name": "Ents-SENTINEL"}),)),
            cypher.Link("RIVAL_OF", ()),
        ],
        create=True,
        merge_endpoints=False,
        weight=0.25,
    ),
    "typed_delete": lambda: cypher.typed_delete("Npc", {"name": "Gandalf-SENTINEL"}, None),
    "typed_delete_granted_types": lambda: cypher.typed_delete("Npc", {"name": "Gandalf-SENTINEL"}, ["LOCATED_IN"]),
    "relationship_types_of": lambda: cypher.relationship_types_of(ALICE),
    "count_matching": lambda: cypher.count_matching(ALICE),
    "batch_write_nodes": lambda: cypher.Statement(cypher.write_nodes_batch("Person")),
    "batch_write_relationships": lambda: cypher.Statement(
        cypher.write_relationships_batch("WORKS_FOR", "Person", "Organization", False)
    ),
    "batch_write_relationships_merge_endpoints": lambda: cypher.Statement(
        cypher.write_relationships_batch("WORKS_FOR", "Person", "Organization", True)
    ),
    "read_page": lambda: read_cypher.page_of_label("Person", searching=False),
    "read_page_search": lambda: read_cypher.page_of_label("Person", searching=True),
    "read_ids_by_name": lambda: read_cypher.ids_by_name(["Person", "Organization"], ["Npc"]),
    "read_expand": lambda: read_cypher.expand(outgoing_only=False),
    "read_expand_outgoing": lambda: read_cypher.expand(outgoing_only=True),
    "read_relationship_types_of": lambda: read_cypher.RELATIONSHIP_TYPES_OF,
    "read_label_count": lambda: read_cypher.label_count("Person"),
    "read_relationship_count": lambda: read_cypher.relationship_count("KNOWS"),
    "record_migration": lambda: cypher.record_migration("0001-SENTINEL", "time-SENTINEL"),
    "collapse_registry_versions": lambda: cypher.COLLAPSE_REGISTRY_VERSIONS,
    "backfill_without_key": lambda: backfill.without_key("Person"),
    "backfill_taken": lambda: backfill.taken_keys("Person", ["key-SENTINEL"]),
    "backfill_set": lambda: backfill.SET_BACKFILLED,
}

# The shapes the gate sends through `backend.read` (read-only at the engine); every other one is a write or DDL.
READS = frozenset(
    {
        "endpoint_presence",
        "read_registry",
        "registry_version",
        "defined_schema_entries",
        "applied_migrations",
        "relationship_types_of",
        "count_matching",
        "backfill_without_key",
        "backfill_taken",
        *(name for name in PORTABLE if name.startswith("read_")),
    }
)

DIALECTS = {"memgraph": MemgraphDialect(), "falkordb": FalkorDBDialect()}


def shapes(dialect_name: str) -> dict[str, str]:
    dialect = DIALECTS[dialect_name]
    out = {name: build().text for name, build in PORTABLE.items()}
    out["create_index"] = dialect.create_index("Person", "_key")
    if (unique := dialect.create_unique_constraint("Person", "_key")) is not None:
        out["create_unique_constraint"] = unique
    if (drop := dialect.drop_index("Person", "name")) is not None:
        out["drop_index"] = drop
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


def _values(value: object) -> list[str]:
    """Every string inside a parameter value, however deeply nested."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _values(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _values(item)]
    return []


def test_values_are_parameters_not_text() -> None:
    """No agent value reaches a statement's text: every sentinel travels in the parameters, and none of
    the text's characters spell it out, whatever the quoting."""
    for name, build in PORTABLE.items():
        statement = build()
        sentinels = [v for v in _values(dict(statement.params)) if "SENTINEL" in v or "sentinel" in v]
        for sentinel in sentinels:
            assert sentinel not in statement.text, name
        assert "SENTINEL" not in statement.text and "sentinel" not in statement.text, name
    # The check itself can fail: a statement with an inlined value is caught.
    inlined = cypher.Statement("MATCH (n {name: 'Alice-SENTINEL'}) RETURN n")
    assert "SENTINEL" in inlined.text
