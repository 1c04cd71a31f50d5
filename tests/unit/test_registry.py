import pytest

from write_gate.core.registry import PropertyType, RegistrySnapshot, SchemaEntry, entry_from_row

SNAPSHOT = RegistrySnapshot(
    [
        SchemaEntry("Person", ("name",), ("person", "User"), merge_keys=("name",)),
        SchemaEntry("Entity", fallback=True),
        SchemaEntry("WORKS_FOR", kind="relationship", remaps_from=("EMPLOYED_BY",)),
    ]
)


def test_lookup_and_lists() -> None:
    assert SNAPSHOT.get_entry("Person").required_properties == ("name",)
    assert SNAPSHOT.get_entry("WORKS_FOR") is None  # relationship types are a separate namespace
    assert SNAPSHOT.all_canonical_labels() == ["Entity", "Person"]
    assert SNAPSHOT.all_relationship_types() == ["WORKS_FOR"]
    assert SNAPSHOT.fallback_label() == "Entity"
    assert len(SNAPSHOT) == 3


@pytest.mark.parametrize(
    "label,target",
    [("person", "Person"), (":User", "Person"), ("PERSON", "Person"), ("user", "Person"), ("Nobody", None)],
)
def test_remap_by_absorbs_then_case_drift(label: str, target: str | None) -> None:
    assert SNAPSHOT.remap_target(label) == target


def test_relationship_remap() -> None:
    assert SNAPSHOT.relationship_remap_target("EMPLOYED_BY") == "WORKS_FOR"
    assert SNAPSHOT.relationship_remap_target("works_for") == "WORKS_FOR"
    assert SNAPSHOT.relationship_remap_target("DIRECTED") is None


@pytest.mark.parametrize(
    "spec,accepts,refuses",
    [
        ("integer", ["integer"], ["number", "string"]),
        ("number", ["integer", "number"], ["string"]),
        ("array<string>", ["array<string>", "array<any>"], ["string", "array<integer>"]),
        ({"type": "array", "items": {"type": "number"}}, ["array<integer>", "array<number>"], ["number"]),
    ],
)
def test_property_types(spec: object, accepts: list[str], refuses: list[str]) -> None:
    declared = PropertyType.parse(spec)  # type: ignore[arg-type]
    assert all(declared.accepts_kind(k) for k in accepts)
    assert not any(declared.accepts_kind(k) for k in refuses)


@pytest.mark.parametrize("spec", ["date", {"type": "array", "items": "map"}, {"type": "string", "enum": []}])
def test_bad_property_types(spec: object) -> None:
    with pytest.raises(ValueError):
        PropertyType.parse(spec)  # type: ignore[arg-type]


def test_entry_from_row_tolerates_damage() -> None:
    assert entry_from_row({"label": "bad name"}) is None
    entry = entry_from_row({"label": "Doc", "property_types": "{not json", "fallback": "yes", "absorbs": None})
    assert entry is not None and entry.property_types == {} and entry.fallback is False
    row = {"label": "Doc", "remaps_from": ["File"], "property_types": '{"pages": "integer"}', "kind": "node"}
    entry = entry_from_row(row)
    assert entry.remaps_from == ("File",) and entry.property_types["pages"].type == "integer"
