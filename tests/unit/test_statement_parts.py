"""Clauses that statements built once at import are made of (core.cypher.history_writes, core.cypher.statistics):
their exact text, checked here as well as through the golden files, since a module's constants are built before
any test runs."""

import pytest

from write_gate.core.cypher.change_order import next_seq
from write_gate.core.cypher.dialect import FalkorDBDialect
from write_gate.core.cypher.entity_updates import update_node
from write_gate.core.cypher.history_writes import append_changes, bump_revision, property_change, with_seq
from write_gate.core.cypher.records import Guard
from write_gate.core.cypher.statement import Provenance
from write_gate.core.cypher.statistics import RELATIONSHIP_TALLIES, confidence_bucket
from write_gate.core.feed_windows import seq_number_cypher
from write_gate.core.identifiers import string_literal

ARCHIVED_RECORD = (
    "[{change_id: $change_id, at: $at, agent: $agent, op: 'set', subject: 'node', label: labels(n)[0], key: n._key, "
    "revision: coalesce(n._rev, 0) + 1, seq: SEQ, properties: ['_archived_at'], "
    "before_values: [CASE WHEN n._archived_at IS NULL THEN [] ELSE [n._archived_at] END], "
    "after_values: [CASE WHEN $at IS NULL THEN [] ELSE [$at] END], before_claims: [[]]}]"
)

FALKORDB = FalkorDBDialect()


def test_a_gate_owned_marks_change_is_recorded_before_and_after_with_the_statements_seq() -> None:
    assert property_change("n", "_archived_at", "$at") == ARCHIVED_RECORD.replace("SEQ", "seq")
    assert property_change("n", "_archived_at", "$at", "s2") == ARCHIVED_RECORD.replace("SEQ", "s2")


def test_the_seq_is_computed_from_the_subjects_last_change() -> None:
    assert with_seq("n", "n") == "WITH n, CASE WHEN coalesce(n._seq, '') >= $at THEN n._seq + '#' ELSE $at END AS seq"


def test_relationships_are_tallied_by_agent_source_bucket_and_day() -> None:
    bucket = confidence_bucket("r")
    assert bucket == (
        "CASE WHEN r.confidence IS NULL THEN null WHEN r.confidence >= 1 THEN 9 WHEN r.confidence <= 0 THEN 0"
        " ELSE toInteger(r.confidence * 10) END"
    )
    grouped = (
        f"WITH type(r) AS name, r.written_by AS agent, r.source AS source, {bucket} AS bucket, "
        "substring(coalesce(r.created_at, r.last_updated), 0, 10) AS day,\n"
        "     count(*) AS rows, min(r.confidence) AS low, max(r.confidence) AS high,"
        " sum(toInteger(floor(r.confidence * (1000 * 1000 * 1000) + 0.5))) AS total\n"
    )
    dimensions = "[['agent', agent], ['source', source], ['confidence', bucket], ['day', day]]"
    assert f"{grouped}UNWIND [['count', null]] + {dimensions} AS d\n" in RELATIONSHIP_TALLIES.text


def test_a_label_or_type_becomes_a_cypher_string_only_when_it_is_an_identifier() -> None:
    assert string_literal("WORKS_FOR") == "'WORKS_FOR'"
    assert string_literal("write_gate_text_" + "L" * 128) == f"'write_gate_text_{'L' * 128}'"  # an index name
    for bad in ("a'b", "Straße", "a b", "é", ""):
        with pytest.raises(ValueError, match="not an identifier"):
            string_literal(bad)


def test_an_update_carries_its_values_with_claims_and_folds_the_change_stamp_and_the_guard() -> None:
    provenance = Provenance(0.9, "api", "manual", "0.1.0", "2026-01-01T00:00:00.000Z", "ann-bot")
    statement = update_node(
        "Person", '{"name":"A"}', {"tags": ["Math"]}, provenance, Guard(3, False, [{"x": 1}], [], "c1"), FALKORDB
    )
    assert statement.params == {
        "key": '{"name":"A"}',
        "properties": {
            "tags": ["Math"],
            "_p_tags": ["ann-bot", "api", "manual", 0.9, "2026-01-01T00:00:00.000Z"],
            "_f_tags": ["math"],
        },
        "last_updated": "2026-01-01T00:00:00.000Z",
        "updated_by": "ann-bot",
        "revision": 3,
        "fresh": False,
        "changes": [{"x": 1}],
        "conflicts": [],
        "change_id": "c1",
    }


def test_records_take_the_statements_seq_and_the_subject_its_next_revision() -> None:
    assert (
        append_changes("$changes", "s2")
        == "FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq = s2, h.seq_n = "
        + seq_number_cypher("s2")
        + ", h.seq_k = (size(s2) - 24) * 1099511627776 + 0, h.seq_k1 = (size(s2) - 24) * 1099511627776 + 0 + 1)"
    )
    assert append_changes() == (
        "FOREACH (c IN $changes | CREATE (h:WriteGateChange) SET h += c, h.seq_n = "
        + seq_number_cypher("c.seq")
        + ", h.seq_k = (size(c.seq) - 24) * 1099511627776 + 0, h.seq_k1 = (size(c.seq) - 24) * 1099511627776 + 0 + 1)"
    )
    assert bump_revision("n", "s2") == "n._rev = coalesce(n._rev, 0) + 1, n._seq = s2"


def test_a_guard_sends_its_change_id_only_when_it_has_one() -> None:
    assert Guard(2, True).params() == {"revision": 2, "fresh": True, "changes": [], "conflicts": []}
    assert Guard(2, False, [], [], "c9").params()["change_id"] == "c9"


def test_a_change_to_several_subjects_comes_after_each_ones_last_change() -> None:
    """One subject: its own seq against `at`. Several, or one with the relationships a delete takes: the
    greatest of all, so the change is ordered after every one of them."""
    one = next_seq(["n"], "$at")
    several = next_seq(["a", "b"], "$at")
    with_list = next_seq(["n"], "$at", ["rels"])
    assert "reduce" not in one and "n._seq" in one
    assert "a._seq" in several and "b._seq" in several and "reduce(seq_max = $at" in several
    assert "n._seq" in with_list and "seq_of IN rels" in with_list
