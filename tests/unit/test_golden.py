"""Every statement shape each dialect can emit, written out to tests/golden/<dialect>/ for review.

A builder change that alters Cypher fails here until the golden file is regenerated with
`UPDATE_GOLDEN=1 uv run pytest tests/unit/test_golden.py` and the diff is read.
"""

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from write_gate.core.cypher import agent_tallies as tally_cypher
from write_gate.core.cypher import aliases as alias_cypher
from write_gate.core.cypher import archive, hierarchy, history_reads, substring_search, text_search
from write_gate.core.cypher import backup as backup_cypher
from write_gate.core.cypher import change_feed as change_feed_cypher
from write_gate.core.cypher import console as console_cypher
from write_gate.core.cypher import deciding_writes as deciding
from write_gate.core.cypher import embeddings as embedding_cypher
from write_gate.core.cypher import exports as export_cypher
from write_gate.core.cypher import idempotency as idempotency_cypher
from write_gate.core.cypher import quarantine as quarantine_cypher
from write_gate.core.cypher import rate_limits as rate_cypher
from write_gate.core.cypher import reads as read_cypher
from write_gate.core.cypher import records as record_cypher
from write_gate.core.cypher import resolution as resolution_cypher
from write_gate.core.cypher import saved_searches as saved_search_cypher
from write_gate.core.cypher import stat_counts as stat_cypher
from write_gate.core.cypher import statistics as statistics_cypher
from write_gate.core.cypher.dialect import Dialect, FalkorDBDialect, MemgraphDialect
from write_gate.core.cypher.entity_updates import update_node
from write_gate.core.cypher.history_retention import prune_changes, prune_conflicts
from write_gate.core.cypher.history_writes import ChangeStamp
from write_gate.core.cypher.memory_writes import (
    NameScope,
    add_observations,
    create_node_if_name_absent,
    create_relationship_if_absent,
    delete_nodes,
    delete_observations,
    delete_relationship,
)
from write_gate.core.cypher.memory_writes import create_node as memory_create_node
from write_gate.core.cypher.records import Guard
from write_gate.core.cypher.registry_nodes import (
    APPLIED_MIGRATIONS,
    COLLAPSE_REGISTRY_VERSIONS,
    READ_REGISTRY,
    REGISTRY_VERSION,
    defined_schema_entries,
    operator_schema_entries,
    record_migration,
    registering,
    upsert_schema_entries,
)
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.cypher.typed_writes import Link, count_matching, relationship_types_of, typed_delete, typed_write
from write_gate.core.cypher.writes import write_node, write_relationship
from write_gate.core.merging import Group
from write_gate.core.quarantine import entry_record
from write_gate.store import backfill, grams, history_order, text_indexes

GOLDEN = Path(__file__).parent.parent / "golden"


@pytest.fixture(autouse=True)
def _built_now() -> None:
    """The statements compared are built by the code as it is now: the core's cached builders and helpers
    (`functools.lru_cache`) are emptied first, so no statement an earlier test cached stands in for one."""
    for name, module in list(sys.modules.items()):
        if name.startswith("write_gate.core"):
            for value in list(vars(module).values()):
                if callable(clear := getattr(value, "cache_clear", None)):
                    clear()


@dataclass(frozen=True)
class Marker:
    """The values an agent could send, each carrying `core` (letters and digits: no quoting or escaping can change
    it), and numbers no statement text has: found anywhere in a statement's text, a value was inlined."""

    core: str = "SENTINEL"
    tail: str = ""  # any text after the core: quotes, backticks, newlines, whatever a value may hold
    number: int = 31415926

    def s(self, tag: str) -> str:
        return f"{tag}-{self.core}{self.tail}"

    def n(self, i: int) -> int:
        return self.number + i

    def f(self, i: int) -> float:
        # In (0, 1), a confidence or a weight, with an odd last of ten decimals: never short like 1.0 or 0.5,
        # which a statement's own text may hold.
        return (self.number * 10 + 2 * i + 1) / 10**10

    def numbers(self) -> list[str]:
        return [str(self.n(i)) for i in range(8)] + [repr(self.f(i)) for i in range(8)]


def by_id(statement: Statement | None) -> Statement:
    """A page in engine id order: its cursor's position is an id (-1 for the first page), not a `_key`."""
    assert statement is not None
    return Statement(statement.text, {"after": -1})


def stat_fold(m: Marker, start: str) -> dict[str, Any]:
    """A fold's parameters: one subject, one counter's change, one end's."""
    item = {"id": m.n(2), "sig": [m.s("sig")], "stat": m.s("stat")} | ({"start": m.n(3)} if start == "start" else {})
    delta = {
        "k": m.s("counter"),
        "kind": "n",
        "part": "Person",
        "dim": "agent",
        "value": m.s("agent"),
        "count": m.n(4),
        "total": m.f(1),
        "low": m.f(2),
        "low_n": m.n(5),
        "high": m.f(3),
        "high_n": m.n(6),
        "removed": [m.f(4)],
    }
    end = {
        "k": m.s("end"),
        "part": "Person",
        "end": "newest",
        "at": m.s("time"),
        "key": m.s("key"),
        "name": m.s("n"),
        "removed": [[m.s("time2"), m.s("key2")]],
    }
    return {"items": [item], "deltas": [delta], "ends": [end]}


def portable(m: Marker, dialect: Dialect) -> dict[str, Callable[[], Statement]]:
    """Every statement shape, built from `m`'s values (in `dialect`, where a shape differs between engines)."""
    s = m.s
    prov = Provenance(m.f(0), s("src"), "manual", "0.1.0", s("time"), s("agent"))
    alice = Endpoint("Person", {"name": s("Alice")})
    acme = Endpoint("Organization", {"name": s("Acme"), "country": s("NL")})
    change = ChangeStamp(s("change"), s("time"), s("agent"))
    records = [{"change_id": s("change"), "property": "age", "after": m.n(6)}]
    merging = {  # a merge of two Persons with nothing to re-point
        "survivor_key": s("key"),
        "merged_key": s("key2"),
        "seen": [],
        "alias_text": [s("alias")],
        "survivor_label": "Person",
        "last_updated": s("time"),
        "updated_by": s("agent"),
        "changes": records,
    }
    resolving = {
        "conflict_id": s("conflict"),
        "picked": "incoming",
        "resolved_by": s("agent"),
        "resolved_at": s("time"),
    }
    node_item = ({"name": s("Alice")}, {"age": m.n(1), "nick": s("Al"), "scores": [m.f(2)]}, prov)

    def rel_item(merge_endpoints: bool) -> tuple:
        return (alice, acme, merge_endpoints, {"since": m.n(2)}, prov, m.f(1))

    return {
        "write_node": lambda: write_node("Person", {"name": s("Alice")}, {"age": m.n(1)}, prov, None, dialect=dialect),
        "write_node_remapped": lambda: write_node(
            "Person", {"name": s("Alice")}, {}, prov, s(":person"), dialect=dialect
        ),
        "write_relationship_fail_if_missing": lambda: write_relationship(
            "WORKS_FOR", alice, acme, {"since": m.n(2)}, prov, None, merge_endpoints=False
        ),
        "write_relationship_merge_endpoints": lambda: write_relationship(
            "WORKS_FOR", alice, acme, {}, prov, None, merge_endpoints=True
        ),
        "write_relationship_remapped": lambda: write_relationship(
            "WORKS_FOR", alice, acme, {}, prov, s(":EMPLOYED_BY"), merge_endpoints=False
        ),
        "write_node_guarded": lambda: write_node(
            "Person",
            {"name": s("Alice")},
            {"age": m.n(1)},
            prov,
            None,
            (),
            Guard(m.n(6), False, [{"at": s("c")}]),
            dialect=dialect,
        ),
        "write_relationship_guarded": lambda: write_relationship(
            "WORKS_FOR", alice, acme, {"since": m.n(2)}, prov, None, False, m.f(1), (), Guard(m.n(6), True)
        ),
        "write_relationship_guarded_merge_endpoints_remapped": lambda: write_relationship(
            "WORKS_FOR", alice, acme, {}, prov, s(":EMPLOYED_BY"), True, None, (), Guard(m.n(6), False)
        ),
        "read_current_nodes": lambda: record_cypher.current_nodes("Person"),
        "read_relationship_properties": lambda: record_cypher.relationship_properties(
            "WORKS_FOR", "Person", "Organization"
        ),
        # resolve_conflict: the conflict read, then closed (the current value kept, or the held one written).
        "read_conflict_by_id": lambda: Statement(record_cypher.CONFLICT_BY_ID.text, {"conflict_id": s("conflict")}),
        "resolve_keep_current": lambda: Statement(record_cypher.KEEP_CURRENT.text, resolving),
        "resolve_take_incoming_on_node": lambda: Statement(
            record_cypher.take_incoming_on_node("Person", dialect).text,
            {"key": alice.key, "properties": {"age": m.n(1)}, "revision": m.n(6), "changes": records}
            | {"conflicts": [], **resolving},
        ),
        "resolve_take_incoming_on_relationship": lambda: Statement(
            record_cypher.take_incoming_on_relationship("WORKS_FOR", "Person", "Organization").text,
            {"from_key": alice.key, "to_key": acme.key, "properties": {"since": m.n(2)}, "revision": m.n(6)}
            | {"changes": records, "conflicts": [], **resolving},
        ),
        "read_current_relationship": lambda: Statement(
            record_cypher.current_relationship("WORKS_FOR", "Person", "Organization").text,
            {"from_key": alice.key, "to_key": acme.key},
        ),
        "read_registry": lambda: READ_REGISTRY,
        "registry_version": lambda: REGISTRY_VERSION,
        "defined_schema_entries": lambda: defined_schema_entries([s("LOCATED_IN")]),
        "registering": lambda: registering([s("event")]),
        "operator_schema_entries": lambda: operator_schema_entries([s("Location")]),
        "upsert_schema_entries": lambda: upsert_schema_entries([{"name": s("X")}], s("time")),
        "applied_migrations": lambda: APPLIED_MIGRATIONS,
        "memory_create_relationship_if_absent": lambda: create_relationship_if_absent(
            "KNOWS", alice, acme, {}, prov, s(":knows"), records
        ),
        "memory_create_hierarchy_link_if_absent": lambda: create_relationship_if_absent(
            "CHILD_OF", alice, acme, {}, prov, None, records, hierarchy=True
        ),
        "memory_create_node_if_name_absent": lambda: create_node_if_name_absent(
            NameScope(("Person", "Organization"), ("Npc",)),
            s("Alice"),
            Statement(
                memory_create_node("Person", False).text,
                {
                    **deciding.node_values(
                        "Person", {"name": s("Alice")}, {"observations": [s("o")]}, prov, None, (), s("c"), batch=False
                    ),
                    "changes": records,
                },
            ),
        ),
        "memory_create_node_if_name_absent_remapped": lambda: create_node_if_name_absent(
            NameScope(("Person",), ()),
            s("Alice"),
            Statement(
                memory_create_node("Person", True).text,
                {
                    **deciding.node_values(
                        "Person", {"name": s("Alice")}, {}, prov, s(":person"), (), s("c"), batch=False
                    ),
                    "changes": records,
                },
            ),
        ),
        "memory_add_observations": lambda: add_observations(
            m.n(3), s("Alice"), [s("x")], change, s("agent"), prov.claim(), dialect
        ),
        "memory_delete_observations": lambda: delete_observations(
            m.n(3), s("Alice"), [s("x")], change, s("agent"), prov.claim(), dialect
        ),
        "memory_delete_nodes": lambda: delete_nodes([(m.n(4), s("Alice")), (m.n(5), s("Alice"))], None, change),
        "memory_delete_nodes_granted_types": lambda: delete_nodes(
            [(m.n(4), s("Alice")), (m.n(5), s("Alice"))], ["KNOWS"], change
        ),
        "memory_delete_nodes_vectors": lambda: delete_nodes([(m.n(4), s("Alice"))], None, change, vectors=True),
        "memory_delete_relationship": lambda: delete_relationship(
            "KNOWS", m.n(4), s("Alice"), m.n(5), s("Acme"), change
        ),
        "typed_write_add": lambda: typed_write(
            "Npc",
            {"name": s("Gandalf")},
            {"role": s("Wizard")},
            prov,
            [Link("LOCATED_IN", (Endpoint("Location", {"name": s("Rivendell")}),))],
            create=True,
            merge_endpoints=False,
            change=change,
            dialect=dialect,
        ),
        "typed_write_guarded": lambda: typed_write(
            "Npc",
            {"name": s("Gandalf")},
            {"role": s("Wizard")},
            prov,
            [Link("LOCATED_IN", (Endpoint("Location", {"name": s("Rivendell")}),))],
            create=True,
            merge_endpoints=False,
            change=change,
            guard=Guard(m.n(6), False, [{"at": s("c")}], [], s("change")),
            dialect=dialect,
        ),
        "typed_write_update_merge_endpoints": lambda: typed_write(
            "Npc",
            {"name": s("Gandalf")},
            {},
            prov,
            [
                Link("LOCATED_IN", (Endpoint("Location", {"name": s("Mordor")}),)),
                Link("MEMBER_OF", (Endpoint("Faction", {"name": s("Istari")}),)),
            ],
            create=False,
            merge_endpoints=True,
            change=change,
            dialect=dialect,
        ),
        # An array relationship property (one relationship per item, the type's set replaced), a target that two
        # types share (matched once), a type cleared by an empty array, and a weight.
        "typed_write_array_links_weighted": lambda: typed_write(
            "Faction",
            {"name": s("Fellowship")},
            {},
            prov,
            [
                Link(
                    "ALLIED_WITH",
                    (Endpoint("Faction", {"name": s("Rohan")}), Endpoint("Entity", {"name": s("Ents")})),
                ),
                Link("BASED_IN", (Endpoint("Entity", {"name": s("Ents")}),)),
                Link("RIVAL_OF", ()),
            ],
            create=True,
            merge_endpoints=False,
            weight=m.f(1),
            change=change,
            dialect=dialect,
        ),
        "typed_delete": lambda: typed_delete("Npc", {"name": s("Gandalf")}, None, change),
        "typed_delete_granted_types": lambda: typed_delete("Npc", {"name": s("Gandalf")}, ["LOCATED_IN"], change),
        "typed_delete_vectors": lambda: typed_delete("Npc", {"name": s("Gandalf")}, None, change, vectors=True),
        "relationship_types_of": lambda: relationship_types_of(alice),
        "count_matching": lambda: count_matching(alice),
        # Writes that decide inside their statement (write_node, write_relationship and their batches).
        "decide_write_node": lambda: deciding.node_statement(
            "Person", deciding.node_values("Person", *node_item, None, (), s("change"), batch=False), dialect
        ),
        "decide_write_node_remapped": lambda: deciding.node_statement(
            "Person",
            deciding.node_values("Person", *node_item, s(":person"), (s("Age→age"),), s("change"), batch=False),
            dialect,
        ),
        "decide_write_relationship": lambda: deciding.relationship_statement(
            "WORKS_FOR",
            alice,
            acme,
            False,
            deciding.relationship_values(*rel_item(False), None, (), s("c"), batch=False),
        ),
        "decide_write_hierarchy_link": lambda: deciding.relationship_statement(
            "CHILD_OF",
            alice,
            acme,
            False,
            deciding.relationship_values(*rel_item(False), None, (), s("c"), batch=False),
            hierarchy=True,
        ),
        "decide_write_relationship_merge_endpoints_remapped": lambda: deciding.relationship_statement(
            "WORKS_FOR",
            alice,
            acme,
            True,
            deciding.relationship_values(*rel_item(True), s(":EMPLOYED_BY"), (), s("c"), batch=False),
        ),
        "batch_decide_write_nodes": lambda: Statement(
            deciding.node_write("Person", remapped=False, batch=True, dialect=dialect),
            {
                "rows": [
                    {**deciding.node_values("Person", *node_item, None, (), s("change"), batch=True), "i": 0, "p": 0}
                ],
                "provenances": [deciding.stamp_params(prov)],
                "label_fold": [s("person")],
            },
        ),
        "batch_decide_write_relationships": lambda: Statement(
            deciding.relationship_write("WORKS_FOR", "Person", "Organization", False, remapped=False, batch=True),
            {
                "rows": [
                    {**deciding.relationship_values(*rel_item(False), None, (), s("c"), batch=True), "i": 0, "p": 0}
                ],
                "provenances": [deciding.stamp_params(prov)],
            },
        ),
        "batch_decide_write_relationships_merge_endpoints": lambda: Statement(
            deciding.relationship_write("WORKS_FOR", "Person", "Organization", True, remapped=False, batch=True),
            {
                "rows": [
                    {**deciding.relationship_values(*rel_item(True), None, (), s("c"), batch=True), "i": 0, "p": 0}
                ],
                "provenances": [deciding.stamp_params(prov)],
            },
        ),
        "read_page": lambda: read_cypher.page_of_labels(("Organization", "Person"), searching=False),
        "read_page_search": lambda: read_cypher.page_of_labels(("Organization", "Person"), searching=True),
        "read_page_search_claims": lambda: read_cypher.page_of_labels(("Person",), searching=True, filtered=True),
        "read_page_search_knowledge": lambda: read_cypher.page_of_labels(("Person",), searching=True, knowledge=True),
        # FalkorDB's pages (engine id order); the cursor's position is an id.
        "read_page_by_id": lambda: by_id(
            read_cypher.page_of_labels(("Organization", "Person"), searching=False, by_id=True)
        ),
        "read_page_by_id_first": lambda: read_cypher.page_of_labels(
            ("Organization", "Person"), searching=False, by_id=True, resume=False
        ),
        # A page resumed in a sparse label: its own scan, filtered past the cursor (resume_by_own_scan).
        "read_page_by_own_scan": lambda: by_id(
            read_cypher.page_of_labels(("Organization", "Person"), searching=False, by_id=True, own_scan=True)
        ),
        "read_page_search_by_id_first": lambda: read_cypher.page_of_labels(
            ("Organization", "Person"), searching=True, by_id=True, resume=False
        ),
        "read_page_search_by_id": lambda: by_id(
            read_cypher.page_of_labels(("Organization", "Person"), searching=True, by_id=True)
        ),
        "read_page_search_claims_knowledge_by_id": lambda: by_id(
            read_cypher.page_of_labels(("Person",), searching=True, by_id=True, filtered=True, knowledge=True)
        ),
        "read_ids_with_matching_claims": lambda: read_cypher.IDS_WITH_MATCHING_CLAIMS,
        "read_ids_by_name": lambda: read_cypher.ids_by_name(["Person", "Organization"], ["Npc"]),
        "read_expand": lambda: read_cypher.expand(outgoing_only=False),
        "read_expand_outgoing": lambda: read_cypher.expand(outgoing_only=True),
        "read_expand_neighbours": lambda: read_cypher.expand(outgoing_only=False, neighbours=True),
        "read_relationship_types_of": lambda: read_cypher.RELATIONSHIP_TYPES_OF,
        "read_label_count": lambda: read_cypher.label_count("Person"),
        "read_node_count": lambda: read_cypher.NODE_COUNT,
        "read_relationship_count": lambda: read_cypher.relationship_count("KNOWS"),
        "read_export_page": lambda: export_cypher.export_page("Person"),
        "read_export_page_by_id": lambda: by_id(export_cypher.export_page("Person", by_id=True)),
        "read_export_page_by_id_first": lambda: export_cypher.export_page("Person", by_id=True, resume=False),
        "read_export_relationships": lambda: export_cypher.EXPORT_RELATIONSHIPS,
        "merge_entities": lambda: Statement(
            resolution_cypher.merge_into(
                "Person",
                "Entity",
                [Group("KNOWS", True, ("since", "weight")), Group("WORKS_FOR", False, ())],
                ["email", "_f_email"],
                dialect,
            ).text,
            {
                "survivor_key": s("key"),
                "merged_key": s("key2"),
                "seen": [s("seen")],
                "fill_0": s("email"),
                "fill_1": [s("email")],
                "alias_text": [s("alias")],
                "survivor_label": "Person",
                "last_updated": s("time"),
                "updated_by": s("agent"),
                "changes": records,
                "conflicts": [{"conflict_id": s("conflict"), "status": "open"}],
            },
        ),
        "merge_entities_no_relationships": lambda: Statement(
            resolution_cypher.merge_into("Person", "Person", [], [], dialect).text,
            {**merging, "conflicts": [{"conflict_id": s("conflict"), "status": "open"}]},
        ),
        "merge_entities_combined": lambda: Statement(
            resolution_cypher.merge_into(
                "Person", "Person", [], [], dialect, combined=["observations", "_f_observations"]
            ).text,
            {
                **merging,
                "combined_0": [s("a"), s("b")],
                "combined_1": [s("a"), s("b")],
                "was_0": [s("a")],
                "was_1": [s("a")],
                "conflicts": [],
            },
        ),
        "merge_entities_vectors": lambda: Statement(
            resolution_cypher.merge_into("Person", "Person", [], [], dialect, vectors=True).text,
            {**merging, "conflicts": []},
        ),
        "read_history_of_node": lambda: history_reads.changes_of(relationship=False),
        "read_history_of_relationship": lambda: history_reads.changes_of(relationship=True),
        "read_conflicts": lambda: history_reads.CONFLICTS,
        "read_conflict_probe": lambda: history_reads.CONFLICT_PROBE,
        "read_changes_after": lambda: change_feed_cypher.CHANGES_AFTER,
        "read_feed_window_probe": lambda: change_feed_cypher.WINDOW_PROBE,
        "read_changes_after_keyed": lambda: change_feed_cypher.KEYED_CHANGES_AFTER,
        "read_feed_keyed_probe": lambda: change_feed_cypher.KEYED_PROBE,
        "read_latest_changes": lambda: change_feed_cypher.LATEST_CHANGES,
        "read_changed_areas": lambda: change_feed_cypher.CHANGED_AREAS,
        "read_duplicate_candidates": lambda: resolution_cypher.candidates("Person", ["email", "url"]),
        "read_duplicate_candidates_by_id": lambda: by_id(
            resolution_cypher.candidates("Person", ["email", "url"], by_id=True)
        ),
        "read_duplicate_candidates_by_id_first": lambda: resolution_cypher.candidates(
            "Person", ["email", "url"], by_id=True, resume=False
        ),
        "read_duplicate_candidates_with_content": lambda: resolution_cypher.candidates("Person", [], content=True),
        "read_merge_node_state": lambda: resolution_cypher.node_state("Person"),
        "read_merge_links": lambda: resolution_cypher.LINKS,
        "read_alias_target": lambda: alias_cypher.alias_target("Person"),
        "read_alias_node_id": lambda: alias_cypher.node_id("Person"),
        "record_migration": lambda: record_migration(s("0001"), s("time")),
        "collapse_registry_versions": lambda: COLLAPSE_REGISTRY_VERSIONS,
        "backfill_without_key": lambda: backfill.without_key("Person"),
        "backfill_taken": lambda: backfill.taken_keys("Person", [s("key")]),
        "backfill_set": lambda: backfill.set_backfilled(dialect),
        "backfill_feed_windows": lambda: Statement(history_order.number_seq(False).text, {"after": -1}),
        "backfill_feed_windows_by_id": lambda: Statement(history_order.number_seq(True).text, {"after": -1}),
        "backfill_conflict_windows_by_id": lambda: Statement(
            history_order.number_seq(True, "WriteGateConflict", "at").text, {"after": -1}
        ),
        "backfill_idempotency_windows_by_id": lambda: Statement(
            history_order.number_seq(True, "WriteGateIdempotency", "at").text, {"after": -1}
        ),
        "backfill_without_grams": lambda: Statement(grams.without_grams("Person", False).text, {"after": s("key")}),
        "backfill_without_grams_by_id": lambda: by_id(grams.without_grams("Person", True)),
        "backfill_set_grams": lambda: Statement(
            grams.SET_GRAMS.text, {"rows": [{"id": m.n(1), "text": s("text"), "grams": s("grams")}]}
        ),
        "prune_history_changes": lambda: prune_changes(s("time")),
        "prune_history_conflicts": lambda: prune_conflicts(s("time")),
        "read_backup_count_nodes": lambda: backup_cypher.COUNT_NODES,
        "read_backup_node_page": lambda: backup_cypher.node_page(False),
        "read_backup_node_page_by_id": lambda: backup_cypher.node_page(True),
        "read_backup_relationship_page": lambda: backup_cypher.relationship_page(False),
        "read_backup_relationship_page_by_id": lambda: backup_cypher.relationship_page(True),
        "restore_nodes": lambda: backup_cypher.restore_nodes(["Person", "Employee"]),
        "restore_nodes_unlabelled": lambda: backup_cypher.restore_nodes([]),
        "restore_relationships": lambda: backup_cypher.restore_relationships("WORKS_FOR"),
        "read_text_search_scanned": lambda: text_search.scanned_candidates(
            ["Person", "Organization"], filtered=True, fields=True
        ),
        "read_text_search_scanned_knowledge": lambda: text_search.scanned_candidates(
            ["Person"], filtered=False, knowledge=True
        ),
        "read_text_search_scanned_archived": lambda: text_search.scanned_candidates(
            ["Person"], filtered=False, include_archived=True
        ),
        "hierarchy_set_parent": lambda: Statement(
            hierarchy.set_parent("CHILD_OF", "Person", "Organization").text,
            {
                "child_key": s("key"),
                "parent_key": s("key2"),
                "properties": {},
                "changes": records,
                **prov.params(),
                **change.params(),
            },
        ),
        "hierarchy_remove_parent": lambda: Statement(
            hierarchy.remove_parent("CHILD_OF", "Person").text, {"child_key": s("key"), **change.params()}
        ),
        "read_hierarchy_would_cycle": lambda: hierarchy.would_cycle("CHILD_OF"),
        "read_hierarchy_lineage": lambda: hierarchy.lineage("CHILD_OF"),
        "read_hierarchy_breach": lambda: Statement(
            hierarchy.breach("CHILD_OF", "Person", "Organization").text,
            {"child_key": s("key"), "parent_key": s("key2")},
        ),
        "read_hierarchy_parents": lambda: hierarchy.parents("CHILD_OF"),
        "read_hierarchy_parent_names": lambda: hierarchy.parent_names("CHILD_OF"),
        "read_hierarchy_children": lambda: hierarchy.children("CHILD_OF"),
        "read_hierarchy_ancestors": lambda: hierarchy.ancestors("CHILD_OF", 100),
        "read_hierarchy_descendants": lambda: hierarchy.descendants("CHILD_OF", 100),
        "read_archive_candidates": lambda: archive.candidates(("Person", "Organization")),
        "archive_entities": lambda: Statement(
            archive.ARCHIVE.text,
            {
                "ids": [m.n(8)],
                "older_than": s("time"),
                "importance_below": m.f(2),
                "k_tags": [s("tag")],
                **change.params(),
            },
        ),
        "restore_entities": lambda: Statement(archive.RESTORE.text, {"ids": [m.n(8)], **change.params()}),
        "read_page_archived_too": lambda: read_cypher.page_of_labels(
            ("Person",), searching=False, include_archived=True
        ),
        "update_node": lambda: update_node(
            "Person",
            s("key"),
            {"tags": [s("tag")]},
            prov,
            Guard(m.n(7), False, [{"at": s("c")}], [], s("change")),
            dialect,
        ),
        "read_stats_node_tallies": lambda: statistics_cypher.node_tallies(("Organization", "Person")),
        "read_stats_relationship_tallies": lambda: statistics_cypher.RELATIONSHIP_TALLIES,
        "read_stats_oldest_and_newest": lambda: statistics_cypher.oldest_and_newest(("Organization", "Person")),
        "read_stats_open_conflicts": lambda: statistics_cypher.OPEN_CONFLICTS,
        # The statistics the writes keep (core/stat_counts.py): the fold's reads and writes, the counters' reads.
        "read_stat_due_nodes": lambda: Statement(stat_cypher.due_nodes("Person").text, {"chunk": m.n(1)}),
        "read_stat_due_relationships": lambda: Statement(
            stat_cypher.due_relationships("KNOWS").text, {"chunk": m.n(1)}
        ),
        "read_stat_drops": lambda: Statement(stat_cypher.DROPS.text, {"chunk": m.n(1)}),
        "stat_fold_nodes": lambda: Statement(stat_cypher.FOLD_NODES.text, stat_fold(m, "id")),
        "stat_fold_relationships": lambda: Statement(stat_cypher.FOLD_RELATIONSHIPS.text, stat_fold(m, "start")),
        "stat_fold_drops": lambda: Statement(
            stat_cypher.FOLD_DROPS.text,
            {k: v for k, v in stat_fold(m, "id").items() if k != "items"} | {"ids": [m.n(2)]},
        ),
        "read_stat_counters": lambda: stat_cypher.COUNTERS,
        "read_stat_ends": lambda: stat_cypher.ENDS,
        "read_stat_bucket_extremes": lambda: Statement(
            stat_cypher.bucket_extremes("Person", relationship=False).text, {"bucket": m.n(3)}
        ),
        "read_stat_bucket_extremes_of_relationships": lambda: Statement(
            stat_cypher.bucket_extremes("KNOWS", relationship=True).text, {"bucket": m.n(3)}
        ),
        "stat_set_extremes": lambda: Statement(
            stat_cypher.SET_EXTREMES.text,
            {"k": s("counter"), "low": m.f(4), "at_low": m.n(4), "high": m.f(5), "at_high": m.n(5)},
        ),
        "read_stat_label_end": lambda: stat_cypher.label_end("Person", newest=True),
        "stat_set_end": lambda: Statement(
            stat_cypher.SET_END.text, {"k": s("end"), "at": s("time"), "key": s("key"), "name": s("Alice")}
        ),
        "read_stat_ready": lambda: stat_cypher.READY,
        "stat_walked": lambda: Statement(stat_cypher.WALKED.text, {"cursor": m.n(7), "ready": False}),
        "stat_forget": lambda: stat_cypher.forget("_StatCount"),
        "stat_mark_page": lambda: Statement(
            stat_cypher.MARK_DUE.text,
            {"cursor": m.n(5), "limit": m.n(6), "labels": [s("label")], "types": [s("type")]},
        ),
        # Each agent's write tallies (core/agent_tallies.py): the fold's reads and its one write, the tallies' read.
        "read_tally_changes": lambda: tally_cypher.CHANGES,
        "read_tally_first_seqs": lambda: Statement(
            tally_cypher.FIRST_SEQS.text, {"pairs": [{"at": s("time"), "id": s("change")}]}
        ),
        "read_tally_conflicts": lambda: tally_cypher.CONFLICTS,
        "read_tally_held_writes": lambda: Statement(
            tally_cypher.HELD_WRITES.text, {"writes": [{"at": s("time"), "n": m.n(1), "id": s("change")}]}
        ),
        "read_tally_cursors": lambda: tally_cypher.CURSORS,
        "tally_apply": lambda: Statement(
            tally_cypher.APPLY.text,
            {
                "read_from": {"seq": s("seq"), "change_id": s("change"), "at": s("time"), "conflict_id": s("id")},
                "moved_to": {"seq": s("seq2"), "change_id": s("change2"), "at": s("time2"), "conflict_id": s("id2")},
                "tallies": [{"agent": s("agent"), "writes": m.n(2), "held": m.n(3), "last_at": s("time3")}],
            },
        ),
        "read_agent_tallies": lambda: tally_cypher.TALLIES,
        "read_saved_search": lambda: Statement(saved_search_cypher.READ_ONE.text, {"name": s("name")}),
        "read_saved_searches": lambda: saved_search_cypher.READ_ALL,
        "saved_search_save": lambda: Statement(
            saved_search_cypher.SAVE.text,
            {
                "name": s("name"),
                "fields": {"query": s("query"), "limit": m.n(1), "tags": [s("tag")]},
                "agent": s("agent"),
                "at": s("time"),
                "save_id": s("id"),
            },
        ),
        "saved_search_update": lambda: Statement(
            saved_search_cypher.UPDATE.text,
            {
                **dict.fromkeys(saved_search_cypher.FIELDS),
                "query": s("query"),
                "searchType": "ranked",
                "minImportance": m.f(2),
                "name": s("name"),
                "rev": m.n(2),
                "agent": s("agent"),
                "at": s("time"),
            },
        ),
        "saved_search_count_run": lambda: Statement(
            saved_search_cypher.COUNT_RUN.text, {"name": s("name"), "at": s("time")}
        ),
        "saved_search_delete": lambda: Statement(saved_search_cypher.DELETE.text, {"name": s("name")}),
        "idempotency_claim": lambda: Statement(
            idempotency_cypher.CLAIM.text,
            {
                "id": s("id"),
                "args": s("digest"),
                "tool": s("tool"),
                "agent": s("agent"),
                "at": s("time"),
                "claim": s("claim"),
            },
        ),
        "idempotency_settle": lambda: Statement(
            idempotency_cypher.SETTLE.text,
            {"id": s("id"), "claim": s("claim"), "outcome": s("outcome"), "text": s("text"), "is_error": False},
        ),
        "idempotency_release": lambda: Statement(idempotency_cypher.RELEASE.text, {"id": s("id"), "claim": s("claim")}),
        "idempotency_forget_expired": lambda: Statement(
            idempotency_cypher.FORGET_EXPIRED.text, {"id": s("id"), "cutoff": s("time")}
        ),
        "read_idempotency_record": lambda: Statement(idempotency_cypher.READ.text, {"id": s("id")}),
        "prune_idempotency_records": lambda: idempotency_cypher.prune_records(s("time"), 10_000),
        "quarantine_keep": lambda: Statement(
            quarantine_cypher.KEEP.text,
            {
                "entries": [
                    entry_record(
                        entry_id=s("id"),
                        seq=m.n(1),
                        at=s("time"),
                        tool="write_node",
                        arguments=s("arguments"),
                        agent=s("agent"),
                        source=s("src"),
                        error_code="SCHEMA_UNKNOWN_LABEL",
                        message=s("message"),
                        labels=[s("label")],
                    )
                ]
            },
        ),
        "read_quarantine_count": lambda: quarantine_cypher.COUNT,
        "read_console_writes_per_minute": lambda: Statement(
            console_cypher.WRITES_PER_MINUTE.text, {"since": s("time")}
        ),
        "read_console_rejections_per_minute": lambda: Statement(
            console_cypher.REJECTIONS_PER_MINUTE.text, {"since": s("time")}
        ),
        "read_console_agent_writes": lambda: console_cypher.AGENT_WRITES,
        "read_console_agent_held_writes": lambda: console_cypher.AGENT_HELD_WRITES,
        "read_console_agent_rejections": lambda: console_cypher.AGENT_REJECTIONS,
        "read_console_fallback_drift": lambda: Statement(
            console_cypher.fallback_drift("Entity").text, {"limit": m.n(1)}
        ),
        "quarantine_drop_oldest": lambda: Statement(quarantine_cypher.DROP_OLDEST.text, {"excess": m.n(2)}),
        "read_quarantine_list": lambda: Statement(
            quarantine_cypher.LIST.text,
            {
                "error_code": s("code"),
                "label": s("label"),
                "agent": s("agent"),
                "tool": s("tool"),
                "ids": None,
                "after_seq": m.n(3),
                "after_id": s("id"),
                "limit": m.n(4),
            },
        ),
        "quarantine_remove": lambda: Statement(quarantine_cypher.REMOVE.text, {"ids": [s("id")]}),
        "quarantine_claim": lambda: Statement(
            quarantine_cypher.CLAIM.text,
            {"id": s("id"), "claims": m.n(6), "replay": s("replay"), "now": s("time"), "stale_before": s("time")},
        ),
        "rate_take": lambda: Statement(
            rate_cypher.TAKE.text, {"agent": s("agent"), "per_minute": m.n(7), "now": m.f(8)}
        ),
    }


def dialectal(m: Marker, dialect: Dialect) -> dict[str, Callable[[], Statement]]:
    """The statements whose text holds a dialect's expression (its clock), with their parameters as in `portable`."""

    def s(tag: str) -> str:
        return m.s(tag)

    return {
        "read_quarantine_select": lambda: Statement(
            quarantine_cypher.select(dialect).text,
            {"error_code": None, "label": s("label"), "agent": None, "tool": None, "ids": [s("id")], "limit": m.n(5)},
        ),
        "quarantine_still_rejected": lambda: Statement(
            quarantine_cypher.still_rejected(dialect).text,
            {"id": s("id"), "error_code": s("code"), "message": s("message"), "at": s("time")},
        ),
        "quarantine_end": lambda: Statement(
            quarantine_cypher.end(dialect).text, {"ids": [s("id")], "replay": s("replay")}
        ),
    }


DIALECTS = {"memgraph": MemgraphDialect(), "falkordb": FalkorDBDialect()}


def every_built(m: Marker, dialect: Dialect) -> dict[str, Callable[[], Statement]]:
    """Every statement built in the dialect with the marker's values: the portable ones and its own."""
    return portable(m, dialect) | dialectal(m, dialect)


# The statements as the gate builds them in each engine's dialect; their values are sentinels (see the last tests).
PORTABLE = {name: every_built(Marker(), dialect) for name, dialect in DIALECTS.items()}

# The shapes the gate sends through `backend.read` (read-only at the engine); every other one is a write or DDL.
READS = frozenset(
    {
        "read_page_by_own_scan",
        "read_node_count",
        "read_registry",
        "registry_version",
        "defined_schema_entries",
        "registering",
        "operator_schema_entries",
        "applied_migrations",
        "relationship_types_of",
        "count_matching",
        "backfill_without_key",
        "backfill_taken",
        "backfill_without_grams",
        "backfill_without_grams_by_id",
        "read_text_search_indexed",
        "read_text_search_indexed_knowledge",
        "read_text_search_indexed_properties_archived",
        "read_page_substring",
        "read_page_substring_claims_knowledge",
        "read_page_substring_archived",
        "embedding_page",
        "embedding_nearest_texts",
        "embedding_entities_of_texts",
        *(name for name in PORTABLE["falkordb"] if name.startswith("read_")),
    }
)


# Clauses that lead a write's own statement (services/embeddings.py), pinned here as text: no statement alone,
# they run inside the writes of tests/e2e/test_semantic_search.py.
FRAGMENTS = frozenset({"embedding_vectors_replaced", "embedding_vectors_replaced_on_node"})


# What the reads and batches are given when they run (the golden builders leave these to run time).
RUN_TIME_PARAMETERS = {
    "rows": [],
    # Embeddings: no vectors to replace, no texts found; a query vector of the index's dimension, k nearest.
    "embeddings": [],
    "hits": [],
    "vector": [0.0] * 255 + [1.0],
    "k": 3,
    "embedder": {"provider": "local", "model": "wordllama", "dimension": 256, "at": "2026-11-29T00:00:00.000000Z"},
    "cursor": -1,
    "limit": 10,
    "after": "",
    "query": "ada",
    "grams": "ada",  # a trigram, in either engine's syntax
    "guarded": ["Person", "Organization"],  # the labels whose trigram indexes a substring page asks about
    "names": ["Ada"],
    "name_keys": ['{"name":"Ada"}'],
    "ids": [0, 1],
    "per_node": 10,
    # A claim filter: one condition given, the others null (any).
    "p_agent": "ada-bot",
    "p_source": None,
    "p_min_confidence": 0.5,
    "p_since": None,
    # Every read that shows entities: archived ones too, or not; the archive's criteria: one of three.
    "include_archived": False,
    "older_than": None,
    "importance_below": 2.5,
    # The hierarchy reads: a node's id; the cycle check: two.
    "id": 0,
    "child": 0,
    "parent": 1,
    # A knowledge filter: a tag and a lower bound on importance.
    "k_tags": ["math"],
    "k_min_importance": 2.5,
    "k_max_importance": None,
    "key": '{"name":"Ada"}',
    "keys": ['{"name":"Ada"}'],
    "pairs": [{"from_key": '{"name":"Ada"}', "to_key": '{"name":"Acme"}'}],
    "merged_id": 0,
    "survivor_id": 1,
    # The history reads: a subject, no filter but a property, the first page.
    "label": "Person",
    "from_label": "Person",
    "from_key": '{"name":"Ada"}',
    "to_label": "Organization",
    "to_key": '{"name":"Acme"}',
    "property": "age",
    "since": None,
    "status": "open",
    "after_at": None,
    "after_seq": None,
    "after_id": None,
    "after_key": 0,
    "after_property": None,
    # The change feed: nothing stamped after the end of 2026 answered yet.
    "horizon": "2026-12-31T23:59:59.999Z",
    # Its window (core/feed_windows.py): the year 2026, as `seq_n`s; a probe's cap; the watcher's `since`.
    "low": 260101000000000,
    "high": 261231235959999,
    "cap": 40,
    # A keyed window of one millisecond's records (core/feed_windows.py): its first item's on, the keys + 1 as the
    # index holds them.
    "key1_low": 1,
    "key1_high": 2**53 + 1,
    "since_n": 0,
    # The ranked search: candidates per label, words every match contains.
    "window": 10,
    "skip": 0,
    "required": ["ada"],
    "labels": ["Person"],
    # The statistics: the registered relationship types.
    "types": ["KNOWS", "WORKS_FOR"],
    # The export's filters (and include_archived above): a date range, a confidence floor, tags.
    "start": "2026-01-01T00:00:00.000Z",
    "end": "2026-12-31T23:59:59.999Z",
    "min_confidence": 0.5,
    "tags": ["astro"],
    "old": text_indexes.OLD_SEPARATOR,
    "new": text_indexes.SEPARATOR,
}


def built(dialect_name: str, name: str) -> Statement:
    """A shape as the gate builds it for the dialect, with the golden values; DDL has no parameters."""
    if name in PORTABLE[dialect_name]:
        return PORTABLE[dialect_name][name]()
    return Statement(shapes(dialect_name)[name])


def shapes(dialect_name: str) -> dict[str, str]:
    dialect = DIALECTS[dialect_name]
    out = {name: build().text for name, build in PORTABLE[dialect_name].items()}
    out["create_index"] = dialect.create_index("Person", "_key")
    if (unique := dialect.create_unique_constraint("Person", "_key")) is not None:
        out["create_unique_constraint"] = unique
    if (drop := dialect.drop_index("Person", "name")) is not None:
        out["drop_index"] = drop
    out["create_text_index"] = dialect.create_text_index("Person")
    out["create_gram_index"] = dialect.create_gram_index("Person")
    out["read_page_substring"] = substring_search.gram_page(dialect, ("Organization", "Person")).text
    out["read_page_substring_claims_knowledge"] = substring_search.gram_page(
        dialect, ("Person",), filtered=True, knowledge=True
    ).text
    out["read_page_substring_archived"] = substring_search.gram_page(dialect, ("Person",), include_archived=True).text
    out["text_search_resplit"] = text_indexes.resplit_search_text("Person").text  # no agent value: its own params
    # Embeddings (issue 38): the vector index, the vectors a write replaces, the k-NN read and its entities.
    for i, index in enumerate(embedding_cypher.vector_indexes(dialect, 256)):
        out[f"embedding_index_{i}"] = index.text
    out["embedding_vectors_replaced"] = "\n".join(embedding_cypher.replace_vectors(dialect))
    out["embedding_vectors_replaced_on_node"] = "\n".join(
        embedding_cypher.replace_vectors(dialect, ("n",), key="n._key")
    )
    out["embedding_nearest_texts"] = embedding_cypher.nearest_texts(dialect).text
    out["embedding_page"] = embedding_cypher.embedded_page("Person").text
    out["embedding_vectors_alone"] = embedding_cypher.vectors_alone(dialect).text
    out["embedding_entities_of_texts"] = embedding_cypher.entities_of_texts(
        ["Person", "Organization"], filtered=True, knowledge=True, include_archived=False
    ).text
    out["read_text_search_indexed"] = text_search.indexed_candidates(
        dialect, ["Person", "Organization"], filtered=True
    ).text
    out["read_text_search_indexed_knowledge"] = text_search.indexed_candidates(
        dialect, ["Person"], filtered=False, knowledge=True
    ).text
    out["read_text_search_indexed_properties_archived"] = text_search.indexed_candidates(
        dialect, ["Person"], filtered=False, fields=True, include_archived=True
    ).text
    return out


CASES = [(d, name) for d in DIALECTS for name in shapes(d)]


# A golden file may open with notes, `// ` lines a reviewer wrote (Memgraph's say which index each read uses:
# tests/unit/test_memgraph_index_notes.py); the statement is what follows them.
NOTE = "// "


def golden_notes(text: str) -> list[str]:
    """The note lines a golden file opens with, without their `// `."""
    notes = []
    for line in text.splitlines():
        if not line.startswith(NOTE):
            break
        notes.append(line.removeprefix(NOTE))
    return notes


def golden_statement(text: str) -> str:
    return "".join(text.splitlines(keepends=True)[len(golden_notes(text)) :])


@pytest.mark.parametrize("dialect,name", CASES, ids=[f"{d}/{n}" for d, n in CASES])
def test_statement_matches_golden_file(dialect: str, name: str) -> None:
    text = shapes(dialect)[name].rstrip() + "\n"
    path = GOLDEN / dialect / f"{name}.cypher"
    if os.environ.get("UPDATE_GOLDEN"):
        notes = golden_notes(path.read_text()) if path.exists() else []  # a regenerated statement keeps its notes
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{NOTE}{note}\n" for note in notes) + text)
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1 and review it"
    assert golden_statement(path.read_text()) == text


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


def inlined(m: Marker, statement: Statement) -> list[str]:
    """The marker's values that a statement's text holds, in any letter case (a folded value is one too)."""
    found = [m.core] if m.core.casefold() in statement.text.casefold() else []
    return found + [number for number in m.numbers() if number in statement.text]


def test_values_are_parameters_not_text() -> None:
    """No agent value reaches a statement's text, whatever its quoting: every one travels in the parameters."""
    m = Marker()
    for name, build in [item for dialect in DIALECTS.values() for item in every_built(m, dialect).items()]:
        statement = build()
        assert inlined(m, statement) == [], name
        if texts := _values(dict(statement.params)):  # the values did go somewhere: into the parameters
            assert any(m.core in v for v in texts), name


@settings(max_examples=25, deadline=None)
@given(
    core=st.integers(0, 10**9).map(lambda i: f"zqx{i}"),
    tail=st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
    number=st.integers(10**7, 10**9 - 10),
)
def test_generated_values_are_parameters_not_text(core: str, tail: str, number: int) -> None:
    """Values that quoting would change (quotes, backticks, newlines, braces): none shows in any text."""
    m = Marker(core, tail, number)
    for name, build in [item for dialect in DIALECTS.values() for item in every_built(m, dialect).items()]:
        assert inlined(m, build()) == [], name


def test_an_inlined_value_is_found_however_it_was_quoted() -> None:
    """The check can fail: a value spliced in as a Cypher literal, escaped or not, is found by its core."""
    m = Marker(tail="'`\n}")
    value = m.s("Alice")
    for literal in (json.dumps(value), "'" + value.replace("'", "\\'") + "'", str(m.n(1)), repr(m.f(0))):
        assert inlined(m, Statement(f"MATCH (n {{name: {literal}}}) RETURN n", {})) != [], literal


_AGGREGATE = re.compile(r"\b(collect|count|sum|min|max|avg)\s*\(", re.IGNORECASE)
_COLLECTED = re.compile(r"collect\s*\((?:DISTINCT\s+)?[^()]*\)\s+AS\s+(\w+)", re.IGNORECASE)


def quadratic_clauses(text: str) -> list[str]:
    """Clauses whose cost grows with the square of what a statement handles: a `reduce` growing a list (each step
    copies it), an aggregation grouped by a collected list (each row hashes the whole list), and a list parameter
    unwound and a property tested `IN` another (each unwound row seeks or scans the whole list: the agent tallies'
    lookup by every stamp and every change id took FalkorDB 42 ms for a page of 500 changes, against 4 by pairs)."""
    found = re.findall(r"reduce\s*\(\s*\w+\s*=\s*\[\]", text)
    if re.search(r"^UNWIND \$\w+", text, re.MULTILINE):
        found += [f"each row tests {m}" for m in re.findall(r"\b\w+\.\w+ IN \$\w+", text)]
    collected: set[str] = set()
    for clause in re.split(r"\n(?=WITH |RETURN )", text):
        head = clause.split("\n")[0]
        if head.startswith(("WITH ", "RETURN ")) and _AGGREGATE.search(head):
            keys = [item.strip() for item in head.split(" ", 1)[1].split(",") if not _AGGREGATE.search(item)]
            found += [f"grouped by {key}" for key in keys if key in collected]
        collected |= set(_COLLECTED.findall(clause))
    return found


@pytest.mark.parametrize("dialect,name", CASES, ids=[f"{d}/{n}" for d, n in CASES])
def test_no_statement_grows_with_the_square_of_what_it_handles(dialect: str, name: str) -> None:
    """Found by a black-box audit: deleting 800 entities took 2.6 s (200: 0.2 s; 1,000 passed the 10 s answer
    deadline while the delete went on), from both shapes. bench/delete_entities.py measures it."""
    assert quadratic_clauses(shapes(dialect)[name]) == []


def test_the_quadratic_shapes_are_found() -> None:
    assert quadratic_clauses("WITH reduce(acc = [], d IN doomed | acc + [d]) AS x") != []
    grouped = "MATCH (n)\nWITH collect(n) AS doomed\nUNWIND doomed AS d\nWITH doomed, collect(DISTINCT d) AS gone"
    assert quadratic_clauses(grouped) == ["grouped by doomed"]
    assert quadratic_clauses("MATCH (n)\nWITH n, collect(DISTINCT type(r)) AS types\nRETURN types") == []
    unwound = "UNWIND $ats AS at\nMATCH (h:C) WHERE h.at = at AND h.change_id IN $ids\nRETURN h"
    assert quadratic_clauses(unwound) == ["each row tests h.change_id IN $ids"]
    assert quadratic_clauses("UNWIND $pairs AS p\nMATCH (h:C) WHERE h.at = p.at AND h.change_id = p.id\nRETURN h") == []
