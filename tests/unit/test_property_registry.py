"""The registry's side of property names: `undeclared_properties` and per-property `absorbs` in schema files,
checked when loaded (clashing absorbs refused), and carried whole from a file to a `:Schema` node's properties
and back to a registry entry. (The e2e tests load them into each engine and read them back through get_schema.)"""

import json
from pathlib import Path
from typing import Any

import pytest

from write_gate.core.decisions import Policy
from write_gate.core.registry import PropertyType, UndeclaredPolicy, entry_from_row
from write_gate.core.schema_view import label_view
from write_gate.store.schema_files import SchemaFileError, read_sources


def load(tmp_path: Path, *entries: dict[str, Any]) -> list[Any]:
    (tmp_path / "x.json").write_text(json.dumps({"entries": list(entries)}))
    return read_sources([tmp_path / "x.json"])


def as_row(node_properties: dict[str, Any]) -> dict[str, Any]:
    """What READ_REGISTRY returns for a `:Schema` node with these properties (its column names)."""
    renamed = {"name": "label", "absorbs": "remaps_from"}
    return {renamed.get(k, k): v for k, v in node_properties.items()}


PERSON = {
    "name": "Person",
    "merge_keys": ["name"],
    "undeclared_properties": "reject",
    "property_types": {"name": "string", "age": "integer", "email": {"type": "string", "absorbs": ["e_mail", "mail"]}},
}


def test_policy_and_absorbs_round_trip_through_schema_node_properties(tmp_path: Path) -> None:
    [source] = load(tmp_path, PERSON)
    props = source.to_node_properties()
    assert props["undeclared_properties"] == "reject"
    assert json.loads(props["property_types"])["email"] == {"type": "string", "absorbs": ["e_mail", "mail"]}
    entry = entry_from_row(as_row(props))
    assert entry is not None and entry.undeclared_properties is UndeclaredPolicy.REJECT
    assert entry.property_types["email"] == PropertyType("string", absorbs=("e_mail", "mail"))
    assert entry.property_types["age"] == PropertyType("integer")  # the short form still works
    view = label_view(entry, 0, Policy(undeclared_properties=UndeclaredPolicy.ALLOW))
    assert view.undeclared_properties is UndeclaredPolicy.REJECT
    assert view.property_types["email"]["absorbs"] == ["e_mail", "mail"]


def test_an_entry_without_a_policy_follows_the_gates(tmp_path: Path) -> None:
    [source] = load(tmp_path, {"name": "Thing", "merge_keys": ["name"]})
    props = source.to_node_properties()
    assert props["undeclared_properties"] == ""  # written every time, so a reload clears an old policy
    entry = entry_from_row(as_row(props))
    assert entry is not None and entry.undeclared_properties is None
    assert (
        label_view(entry, 0, Policy(undeclared_properties=UndeclaredPolicy.REMAP)).undeclared_properties
        is UndeclaredPolicy.REMAP
    )
    assert entry_from_row({"label": "Old"}).undeclared_properties is None  # a node from before the policy


def test_property_definitions_take_absorbs_too(tmp_path: Path) -> None:
    npc = {
        "name": "Npc",
        "undeclared_properties": "remap",
        "properties": {
            "name": {"type": "string", "required": True},
            "role": {"type": "string", "absorbs": ["job", "class"]},
        },
    }
    [source] = load(tmp_path, npc)
    entry = entry_from_row(as_row(source.to_node_properties()))
    assert entry is not None and entry.property_types["role"].absorbs == ("job", "class")
    assert entry.undeclared_properties is UndeclaredPolicy.REMAP and entry.typed_tools


@pytest.mark.parametrize(
    "entry,reason",
    [
        (
            {"name": "P", "property_types": {"email": {"type": "string", "absorbs": ["mail"]},
                                             "post": {"type": "string", "absorbs": ["Mail"]}}},
            "Mail is absorbed by both email and post",
        ),
        (
            {"name": "P", "merge_keys": ["name"], "property_types": {"alias": {"type": "string", "absorbs": ["NAME"]}}},
            "NAME, absorbed by alias, reads as the declared name",
        ),
        (
            {"name": "P", "required_properties": ["e_mail"],
             "property_types": {"email": {"type": "string", "absorbs": ["e_mail"]}}},
            "e_mail, absorbed by email, reads as the declared e_mail",
        ),
        (
            {"name": "P", "property_types": {"note": {"type": "string", "absorbs": ["Written_By"]}}},
            "Written_By, absorbed by note, reads as a field the gate owns",
        ),
        ({"name": "P", "property_types": {"note": {"type": "string", "absorbs": ["not a name"]}}}, "absorbs must be"),
        ({"name": "P", "undeclared_properties": "sometimes"}, "undeclared_properties"),
        (
            {"name": "P", "undeclared_properties": "reject", "additional_properties": True,
             "properties": {"name": {"type": "string"}}},
            "additional_properties: true takes undeclared properties",
        ),
    ],
)  # fmt: skip
def test_clashing_or_bad_property_names_are_refused_at_load(tmp_path: Path, entry: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaFileError) as caught:
        load(tmp_path, entry)
    assert reason in caught.value.reason


def test_relationship_entries_take_the_policy_too(tmp_path: Path) -> None:
    [source] = load(
        tmp_path,
        {"name": "KNOWS", "kind": "relationship", "undeclared_properties": "reject",
         "property_types": {"since": {"type": "integer", "absorbs": ["from_year"]}}},
    )  # fmt: skip
    entry = entry_from_row(as_row(source.to_node_properties()))
    assert entry is not None and entry.kind == "relationship"
    assert entry.undeclared_properties is UndeclaredPolicy.REJECT
    assert entry.property_types["since"].absorbs == ("from_year",)
