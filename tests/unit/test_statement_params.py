"""The parameters each statement builder sends: every value an agent gave, the gate's computed ones (identity key,
folded search text, stubs, provenance), under the names the statement text uses. The text itself is pinned by
tests/golden (test_golden.py); these pin what travels beside it."""

import re

from write_gate.core.cypher.clauses import remapped_label_text
from write_gate.core.cypher.deciding_writes import (
    node_values,
    relationship_values,
    restamp_node_row,
    restamp_relationship_row,
    value_kinds,
)
from write_gate.core.cypher.dialect import FalkorDBDialect, MemgraphDialect
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
from write_gate.core.cypher.reads import ids_by_name
from write_gate.core.cypher.records import Guard
from write_gate.core.cypher.registry_nodes import defined_schema_entries, record_migration, upsert_schema_entries
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.cypher.typed_writes import Link, count_matching, relationship_types_of, typed_delete, typed_write
from write_gate.core.cypher.writes import write_node, write_relationship
from write_gate.core.identifiers import PROPERTY_REMAPS_FIELD

NOW = "2026-01-01T00:00:00.000Z"
PROV = Provenance(0.5, "src", "manual", "0.1.0", NOW, "agent")
DIALECT = FalkorDBDialect()
STAMPED = {
    "confidence": 0.5,
    "source": "src",
    "extraction_method": "manual",
    "write_gate_version": "0.1.0",
    "written_by": "agent",
    "last_updated": NOW,
    "updated_by": "agent",
}
# What a call's change records share (core.cypher.history_writes).
CHANGE = ChangeStamp("c1", NOW, "agent")
CHANGED = {"change_id": "c1", "at": NOW, "agent": "agent"}
RECORDS = [{"change_id": "c1", "property": "note"}]
# Each value a write sets travels with its claim (core.claims): who, from where, how, how sure, when.
CLAIM = ["agent", "src", "manual", 0.5, NOW]


def claimed(*names: str) -> dict[str, list]:
    return {f"_p_{name}": CLAIM for name in names}


ALICE = Endpoint("Person", {"name": "Alice"})
ACME = Endpoint("Organization", {"name": "Acme", "country": "NL"})
ALICE_KEY = '{"name":"Alice"}'
ACME_KEY = '{"country":"NL","name":"Acme"}'
# A stub is created with its keys, their folded text, its label's, and the search text of all of them (and its
# trigrams, core/grams.py).
# Created with its keys' claims, and when.
ALICE_STUB = {
    "name": "Alice",
    **claimed("name"),
    "_f_name": ["alice"],
    "_f__label": ["person"],
    "created_at": NOW,
    "_search": "\talice\tperson",
    "_grams": " \tal ali lic ice ce\t e\tp \tpe per ers rso son",
}
ACME_STUB = {
    "name": "Acme",
    "country": "NL",
    **claimed("name", "country"),
    "created_at": NOW,
    "_f_name": ["acme"],
    "_f_country": ["nl"],
    "_f__label": ["organization"],
    "_search": "\tacme\tnl\torganization",
    "_grams": " \tac acm cme me\t e\tn \tnl nl\t l\to \tor org rga gan ani niz iza zat ati tio ion",
}


def test_provenance_is_stamped_as_claim_and_change_by_the_writer() -> None:
    assert PROV.params() == STAMPED
    assert ALICE.key == ALICE_KEY and ACME.key == ACME_KEY


def test_write_node_parameters() -> None:
    statement = write_node("Person", {"name": "Alice"}, {"age": 3, "bio": "Hi"}, PROV, None, dialect=DIALECT)
    assert dict(statement.params) == {
        "key": ALICE_KEY,
        "identity": {
            "name": "Alice",
            **claimed("name"),
            "_f_name": ["alice"],
            "_f__label": ["person"],
            "created_at": NOW,
        },
        "properties": {"age": 3, "bio": "Hi", **claimed("age", "bio"), "_f_age": [], "_f_bio": ["hi"]},
        **STAMPED,
    }


def test_a_remapped_write_node_keeps_the_label_as_written_searchable() -> None:
    statement = write_node("Person", {"name": "Alice"}, {}, PROV, ":Human", dialect=DIALECT)
    assert dict(statement.params) == {
        "key": ALICE_KEY,
        "identity": {
            "name": "Alice",
            **claimed("name"),
            "_f_name": ["alice"],
            "_f__label": ["person"],
            "created_at": NOW,
        },
        "properties": {"_f__label": ["person", "human"]},
        **STAMPED,
        "remapped_from": ":Human",
    }
    assert "$remapped_from" in statement.text
    assert "$remapped_from" not in write_node("Person", {"name": "Alice"}, {}, PROV, None, dialect=DIALECT).text


def test_write_relationship_parameters() -> None:
    statement = write_relationship("WORKS_FOR", ALICE, ACME, {"since": 2020}, PROV, None, False, 0.25)
    assert dict(statement.params) == {
        "from_key": ALICE_KEY,
        "to_key": ACME_KEY,
        "properties": {"since": 2020, **claimed("since")},
        "weight": 0.25,
        **STAMPED,
    }


def test_write_relationship_merging_endpoints_sends_their_stubs() -> None:
    statement = write_relationship("WORKS_FOR", ALICE, ACME, {}, PROV, ":EMPLOYED_BY", True)
    assert dict(statement.params) == {
        "from_key": ALICE_KEY,
        "to_key": ACME_KEY,
        "properties": {},
        "weight": None,
        **STAMPED,
        "from_stub": ALICE_STUB,
        "to_stub": ACME_STUB,
        "remapped_from": ":EMPLOYED_BY",
    }


def test_memory_create_relationship_parameters() -> None:
    plain = create_relationship_if_absent("KNOWS", ALICE, ACME, {"note": "x"}, PROV, None, RECORDS)
    expected = {
        "from_key": ALICE_KEY,
        "to_key": ACME_KEY,
        "properties": {"note": "x", **claimed("note")},
        "changes": RECORDS,
        "weight": 1.0,  # the official server's relations have none: created at full strength
        **STAMPED,
    }
    assert dict(plain.params) == expected
    remapped = create_relationship_if_absent("KNOWS", ALICE, ACME, {"note": "x"}, PROV, ":knows", RECORDS)
    assert dict(remapped.params) == {**expected, "remapped_from": ":knows"}
    assert "$remapped_from" in remapped.text and "$remapped_from" not in plain.text
    weighed = create_relationship_if_absent("KNOWS", ALICE, ACME, {"note": "x"}, PROV, None, RECORDS, 0.25)
    assert dict(weighed.params) == {**expected, "weight": 0.25} and "r.weight = $weight" in weighed.text


def test_memory_create_node_adds_the_name_and_its_key_to_the_write() -> None:
    write = write_node("Person", {"name": "Alice"}, {}, PROV, None, (), Guard(0, True, RECORDS), dialect=DIALECT)
    statement = create_node_if_name_absent(NameScope(("Person",), ("Npc", "Faction")), "Alice", write)
    assert dict(statement.params) == {**write.params, "name": "Alice", "name_key": ALICE_KEY}
    assert statement.params["changes"] == RECORDS  # the guarded write appends them
    # One variable per lookup, each its own, and all of them in the check.
    assert re.findall(r"OPTIONAL MATCH \((x\d+):", statement.text) == ["x0", "x1", "x2"]
    assert "WHERE x1.name = $name" in statement.text and "WHERE x2.name = $name" in statement.text
    assert "WITH coalesce(x0, x1, x2) AS existing" in statement.text
    # No label to look in: nothing can hold the name, so the write (and its records) go ahead.
    bare = create_node_if_name_absent(NameScope((), ()), "Alice", write)
    assert bare.text.startswith("WITH null AS existing\nWHERE existing IS NULL\nMERGE (n:`Person`")
    assert bare.text.endswith(write.text)


def test_memory_observation_parameters() -> None:
    added = add_observations(7, "Alice", ["Likes TEA", "x"], CHANGE, "agent", CLAIM, DIALECT)
    assert dict(added.params) == {
        "id": 7,
        "name": "Alice",
        "contents": ["Likes TEA", "x"],
        "folded": ["likes tea", "x"],
        "last_updated": NOW,
        "updated_by": "agent",
        "claim": CLAIM,  # the observations list's claim: whoever last changed it
        **CHANGED,
    }
    deleted = delete_observations(7, "Alice", ["x"], CHANGE, "agent", CLAIM, DIALECT)
    assert dict(deleted.params) == {
        "id": 7,
        "name": "Alice",
        "observations": ["x"],
        "last_updated": NOW,
        "updated_by": "agent",
        "claim": CLAIM,
        **CHANGED,
    }


def test_memory_delete_parameters() -> None:
    found = [[1, "A"], [2, "A"]]
    assert dict(delete_nodes([(1, "A"), (2, "A")], None, CHANGE).params) == {"found": found, **CHANGED}
    granted = delete_nodes([(1, "A"), (2, "A")], ["KNOWS"], CHANGE)
    assert dict(granted.params) == {"found": found, "allowed_types": ["KNOWS"], **CHANGED}
    assert dict(delete_relationship("KNOWS", 1, "A", 2, "B", CHANGE).params) == {
        "from_id": 1,
        "from_name": "A",
        "to_id": 2,
        "to_name": "B",
        **CHANGED,
    }


def test_typed_write_add_parameters() -> None:
    rivendell = Endpoint("Location", {"name": "Rivendell"})
    statement = typed_write(
        "Npc",
        {"name": "Gandalf"},
        {"role": "Wizard"},
        PROV,
        [Link("LOCATED_IN", (rivendell,))],
        create=True,
        merge_endpoints=False,
        weight=0.75,
        change=CHANGE,
        dialect=DIALECT,
    )
    assert dict(statement.params) == {
        "key": '{"name":"Gandalf"}',
        "weight": 0.75,
        "to0_key": '{"name":"Rivendell"}',
        "identity": {
            "name": "Gandalf",
            **claimed("name"),
            "_f_name": ["gandalf"],
            "_f__label": ["npc"],
            "created_at": NOW,
        },
        "properties": {"role": "Wizard", **claimed("role"), "_f_role": ["wizard"]},
        **STAMPED,
        **CHANGED,  # a replaced relationship is recorded as deleted
    }


def test_typed_write_update_merging_targets_names_each_target_once() -> None:
    ents = Endpoint("Entity", {"name": "Ents"})
    rohan = Endpoint("Faction", {"name": "Rohan"})
    statement = typed_write(
        "Faction",
        {"name": "Fellowship"},
        {},
        PROV,
        [Link("ALLIED_WITH", (rohan, ents)), Link("BASED_IN", (ents,)), Link("RIVAL_OF", ())],
        create=False,
        merge_endpoints=True,
        change=CHANGE,
        dialect=DIALECT,
    )
    assert dict(statement.params) == {
        **CHANGED,
        "key": '{"name":"Fellowship"}',
        "weight": None,
        "to0_key": '{"name":"Rohan"}',
        "to0_stub": {
            "name": "Rohan",
            **claimed("name"),
            "_f_name": ["rohan"],
            "_f__label": ["faction"],
            "created_at": NOW,
            "_search": "\trohan\tfaction",
            "_grams": " \tro roh oha han an\t n\tf \tfa fac act cti tio ion",
        },
        "to1_key": '{"name":"Ents"}',
        "to1_stub": {
            "name": "Ents",
            **claimed("name"),
            "_f_name": ["ents"],
            "_f__label": ["entity"],
            "created_at": NOW,
            "_search": "\tents\tentity",
            "_grams": " \ten ent nts ts\t s\te \ten ent nti tit ity",
        },
        "properties": {},
        **STAMPED,
    }


def test_typed_delete_and_its_reads_parameters() -> None:
    assert dict(typed_delete("Npc", {"name": "Gandalf"}, None, CHANGE).params) == {
        "key": '{"name":"Gandalf"}',
        **CHANGED,
    }
    granted = typed_delete("Npc", {"name": "Gandalf"}, ["LOCATED_IN"], CHANGE)
    assert dict(granted.params) == {"key": '{"name":"Gandalf"}', "allowed_types": ["LOCATED_IN"], **CHANGED}
    assert dict(relationship_types_of(ALICE).params) == {"key": ALICE_KEY}
    assert dict(count_matching(ACME).params) == {"key": ACME_KEY}


def test_registry_statement_parameters() -> None:
    entries = [{"name": "Person", "allowed": True}]
    assert dict(upsert_schema_entries(entries, NOW).params) == {"entries": entries, "changed_at": NOW}
    assert dict(defined_schema_entries(["Person"]).params) == {"names": ["Person"]}
    assert dict(record_migration("0001", NOW).params) == {"name": "0001", "applied_at": NOW}


def test_ids_by_name_looks_in_every_label_or_nowhere() -> None:
    assert ids_by_name([], []) is None
    statement = ids_by_name(["Person"], ["Npc"])
    assert isinstance(statement, Statement) and statement.text.count("UNION ALL") == 1


def test_a_composite_unique_constraint_names_every_key() -> None:
    assert MemgraphDialect().create_unique_constraint("City", "name", "country") == (
        "CREATE CONSTRAINT ON (n:`City`) ASSERT n.`name`, n.`country` IS UNIQUE"
    )


def test_a_typed_write_records_the_property_names_it_remapped() -> None:
    statement = typed_write(
        "Npc",
        {"name": "Gandalf"},
        {"role": "Wizard"},
        PROV,
        [],
        create=True,
        merge_endpoints=False,
        property_remaps=("Role→role",),
        change=CHANGE,
        dialect=DIALECT,
    )
    assert statement.params["properties"][PROPERTY_REMAPS_FIELD] == ["Role→role"]


HUMAN_FOLDS = {"_f__label": ["person", "human"], "_f_age": [], "_f_nick": ["al"]}  # a number has no folded text


def test_a_deciding_node_writes_parameters_single_and_as_a_batch_row() -> None:
    """The written label `:Human` remapped to Person: its folded text joins the extra values and the search
    text; the numbers are named; a single write carries the stamp and its identity's label text, a batch row
    carries `label_fold` and `remapped_from` for the statement to set."""
    args = ("Person", {"name": "Alice"}, {"age": 36, "nick": "Al"}, PROV, ":Human", ("Nick→nick",), "c1")
    common = {
        "key": ALICE_KEY,
        "key_names": ["name"],
        "values": {"age": 36, "nick": "Al"},
        "extra": {**claimed("age", "nick"), **HUMAN_FOLDS, PROPERTY_REMAPS_FIELD: ["Nick→nick"]},
        "search": "\talice\tperson\thuman\tal",
        "grams": " \tal ali lic ice ce\t e\tp \tpe per ers rso son on\t n\th \thu hum uma man an\t n\ta \tal",
        "change_id": "c1",
        "numbers": ["age"],
        "remapped_from": ":Human",
    }
    identity = {"name": "Alice", **claimed("name"), "_f_name": ["alice"]}
    assert node_values(*args, batch=False) == common | {
        "identity": identity | {"_f__label": ["person"], "created_at": NOW},
        **STAMPED,
        "claim": CLAIM,
    }
    assert node_values(*args, batch=True) == common | {"identity": identity, "label_fold": ["person", "human"]}
    plain = node_values("Person", {"name": "Alice"}, {"nick": "Al"}, PROV, None, (), "c1", batch=True)
    assert plain["remapped_from"] is None and "label_fold" not in plain and "numbers" not in plain
    assert plain["extra"] == {**claimed("nick"), "_f_nick": ["al"]} and plain["search"] == "\talice\tperson\tal"


def test_a_deciding_relationship_writes_parameters_single_and_as_a_batch_row() -> None:
    args = (ALICE, ACME, True, {"since": 2020}, PROV, 0.5, ":works_for", ("Since→since",), "c1")
    common = {
        "from_key": ALICE_KEY,
        "to_key": ACME_KEY,
        "values": {"since": 2020},
        "extra": {**claimed("since"), PROPERTY_REMAPS_FIELD: ["Since→since"]},
        "weight": 0.5,
        "change_id": "c1",
        "numbers": ["since"],
        "from_stub": ALICE_STUB,
        "to_stub": ACME_STUB,
        "remapped_from": ":works_for",
    }
    assert relationship_values(*args, batch=False) == common | {**STAMPED, "claim": CLAIM}
    assert relationship_values(*args, batch=True) == common
    unmerged = relationship_values(ALICE, ACME, False, {}, PROV, None, None, (), "c1", batch=False)
    assert "from_stub" not in unmerged and "remapped_from" not in unmerged and unmerged["numbers"] == []
    row = relationship_values(ALICE, ACME, False, {"note": "x"}, PROV, None, None, (), "c1", batch=True)
    assert "numbers" not in row and row["remapped_from"] is None  # a batch row leaves out an empty list


LATER = "2026-01-01T00:00:01.500Z"


def test_a_batch_row_stamped_again_is_the_row_built_at_the_later_stamp() -> None:
    """A chunk sent later than it was built is stamped again in place (services/call_stamps.py): its rows must
    then be what building them at the later stamp makes, or a value's claim would say another time than its
    change record (the chunk's provenance table holds the rest of the stamp)."""
    later = PROV.restamped(LATER)
    assert later.last_updated == LATER and PROV.restamped(NOW) is PROV
    keys, props = {"name": "Alice"}, {"nick": "Al", "age": 3}
    row = node_values("Person", keys, props, PROV, ":person", ("AGE→age",), "c1", batch=True)
    restamp_node_row(row, keys, props, later)
    assert row == node_values("Person", keys, props, later, ":person", ("AGE→age",), "c1", batch=True)
    assert row["extra"]["_p_nick"][-1] == row["identity"]["_p_name"][-1] == LATER
    for merged in (True, False):
        args = (ALICE, ACME, merged, {"since": 2020})
        rel = relationship_values(*args, PROV, 0.5, None, (), "c1", batch=True)
        restamp_relationship_row(rel, *args, later)
        assert rel == relationship_values(*args, later, 0.5, None, (), "c1", batch=True)
    assert rel["extra"]["_p_since"][-1] == LATER and "from_stub" not in rel
    assert CHANGE.restamped(LATER) == ChangeStamp("c1", LATER, "agent") and CHANGE.restamped(NOW) is CHANGE


def test_which_values_are_numbers_is_named_and_a_batch_row_leaves_none_out() -> None:
    values = {"a": 1, "b": 1.5, "c": True, "d": "x"}  # a bool is no number
    assert value_kinds(values, batch=True) == value_kinds(values, batch=False) == {"numbers": ["a", "b"]}
    assert value_kinds({"d": "x"}, batch=True) == {} and value_kinds({"d": "x"}, batch=False) == {"numbers": []}


def test_a_remapped_writes_label_text_holds_the_label_and_the_one_written() -> None:
    assert remapped_label_text("Person", ":Human") == {"_f__label": ["person", "human"]}
    assert remapped_label_text("Person", None) == {}
