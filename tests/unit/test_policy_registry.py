"""Conflict policies and half-lives in the registry (issue 12, items 3 and 8): an entry's `conflict_policy` and
`half_life_days` and a property's `conflict_policy` in schema files, checked when loaded, and carried whole from a
file to a `:Schema` node's properties and back to a registry entry and get_schema's view. (The e2e tests load them
into each engine and read them back through get_schema.)"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_property_registry import as_row, load
from write_gate.core.decisions import Policy
from write_gate.core.registry import ConflictPolicy, PropertyType, entry_from_row
from write_gate.core.schema_view import label_view, relationship_view
from write_gate.store.schema_files import NO_HALF_LIFE, SchemaFileError

LEDGER = {
    "name": "Ledger",
    "merge_keys": ["name"],
    "conflict_policy": "keep_both",
    "half_life_days": 30,
    "property_types": {"name": "string", "balance": {"type": "number", "conflict_policy": "reject"}},
}


def test_entry_and_property_policies_and_the_half_life_round_trip(tmp_path: Path) -> None:
    [source] = load(tmp_path, LEDGER)
    props = source.to_node_properties()
    assert props["conflict_policy"] == "keep_both" and props["half_life_days"] == 30.0
    assert json.loads(props["property_types"])["balance"] == {"type": "number", "conflict_policy": "reject"}
    entry = entry_from_row(as_row(props))
    assert entry is not None
    assert entry.conflict_policy is ConflictPolicy.KEEP_BOTH and entry.half_life_days == 30.0
    assert entry.property_types["balance"] == PropertyType("number", conflict_policy=ConflictPolicy.REJECT)
    default = ConflictPolicy.LAST_WRITER_WINS
    assert entry.conflict_policy_of("balance", default) is ConflictPolicy.REJECT  # the property's own
    assert entry.conflict_policy_of("name", default) is ConflictPolicy.KEEP_BOTH  # else the entry's
    assert entry.conflict_policy_of("unlisted", default) is ConflictPolicy.KEEP_BOTH  # no spec: the entry's
    view = label_view(entry, 0, Policy(conflicts=ConflictPolicy.HIGHER_CONFIDENCE_WINS))
    assert view.conflict_policy is ConflictPolicy.KEEP_BOTH and view.half_life_days == 30.0
    assert view.property_types["balance"]["conflict_policy"] == "reject"


def test_property_definitions_take_a_conflict_policy_too(tmp_path: Path) -> None:
    npc = {
        "name": "Npc",
        "properties": {
            "name": {"type": "string", "required": True},
            "status": {"type": "string", "enum": ["Active", "Deceased"], "conflict_policy": "higher_confidence_wins"},
        },
    }
    [source] = load(tmp_path, npc)
    entry = entry_from_row(as_row(source.to_node_properties()))
    assert entry is not None and entry.typed_tools
    assert entry.property_types["status"].conflict_policy is ConflictPolicy.HIGHER_CONFIDENCE_WINS
    assert entry.conflict_policy_of("status", ConflictPolicy.REJECT) is ConflictPolicy.HIGHER_CONFIDENCE_WINS


def test_relationship_entries_take_them_too(tmp_path: Path) -> None:
    knows = {"name": "KNOWS", "kind": "relationship", "conflict_policy": "reject", "half_life_days": 0.5}
    [source] = load(tmp_path, knows)
    entry = entry_from_row(as_row(source.to_node_properties()))
    assert entry is not None and entry.conflict_policy is ConflictPolicy.REJECT and entry.half_life_days == 0.5
    assert relationship_view(entry, 0, Policy()).half_life_days == 0.5


def test_an_entry_naming_none_follows_the_gate_and_a_reload_clears_an_old_one(tmp_path: Path) -> None:
    [source] = load(tmp_path, {"name": "Thing", "merge_keys": ["name"]})
    props = source.to_node_properties()
    # Written every time, so a load without them clears what an earlier load set.
    assert props["conflict_policy"] == "" and props["half_life_days"] == NO_HALF_LIFE
    entry = entry_from_row(as_row(props))
    assert entry is not None and entry.conflict_policy is None and entry.half_life_days is None
    view = label_view(entry, 0, Policy(conflicts=ConflictPolicy.REJECT))
    assert view.conflict_policy is ConflictPolicy.REJECT and view.half_life_days is None
    old = entry_from_row({"label": "Old"})  # a node from before the fields
    assert old is not None and old.conflict_policy is None and old.half_life_days is None


@pytest.mark.parametrize("stored", ["sometimes", None, 3, ""])
def test_a_damaged_stored_policy_is_none(stored: Any) -> None:
    entry = entry_from_row({"label": "X", "conflict_policy": stored})
    assert entry is not None and entry.conflict_policy is None


@pytest.mark.parametrize("stored", [0, 0.0, -1, True, "30", float("nan"), float("inf"), None])
def test_a_stored_half_life_that_is_not_positive_is_none(stored: Any) -> None:
    entry = entry_from_row({"label": "X", "half_life_days": stored})
    assert entry is not None and entry.half_life_days is None


@pytest.mark.parametrize(
    "entry,reason",
    [
        ({"name": "P", "conflict_policy": "sometimes"}, "conflict_policy"),
        ({"name": "P", "property_types": {"a": {"type": "string", "conflict_policy": "first"}}},
         "conflict_policy must be"),
        ({"name": "P", "merge_keys": ["name"], "properties": {"name": {"type": "string", "conflict_policy": 1}}},
         "conflict_policy must be"),
        ({"name": "P", "half_life_days": 0}, "half_life_days"),
        ({"name": "P", "half_life_days": -3}, "half_life_days"),
        ({"name": "P", "half_life_days": "30"}, "half_life_days"),
        ({"name": "P", "half_life_days": True}, "half_life_days"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_at_load(tmp_path: Path, entry: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaFileError) as caught:
        load(tmp_path, entry)
    assert reason in caught.value.reason
