"""Registry source files that cannot be loaded (store/schema_files.py): each is refused by `read_sources` with the
file and the reason, before anything is written, whether an entry is malformed, two files disagree, or a seed-format
`<type>.schema.json` file is not one."""

import json
from pathlib import Path
from typing import Any

import pytest

from write_gate.store.schema_files import SchemaFileError, read_sources

PERSON = {"name": "Person", "merge_keys": ["name"]}


def entries(*listed: dict[str, Any]) -> str:
    return json.dumps({"entries": list(listed)})


def seed(**fields: Any) -> str:
    """A seed-format file (seed 000's `add_<type>` tool schema)."""
    return json.dumps({"name": "add_city", "description": "A city.", **fields})


NAME = {"type": "string", "description": "Its name."}


@pytest.mark.parametrize(
    "files,reason",
    [
        ({"a.json": entries({"name": "Person", "merge_keys": ["full name"]})}, "merge_keys must be plain identifiers"),
        ({"a.json": entries({"name": "WriteGateChange"})}, "reserved for the gate itself"),
        ({"a.json": entries({"name": "Person", "properties": {"_key": {"type": "string"}}})},
         "must be a plain identifier and not a gate-computed field"),
        ({"a.json": entries({"name": "Person", "properties": {"age": {"type": "integer"}}})},
         "an entry with property definitions needs merge_keys"),
        ({"a.json": entries({**PERSON, "from_labels": ["City"]})}, "from_labels/to_labels belong to relationship"),
        ({"a.json": "{not json"}, "not readable JSON"),
        ({"a.json": entries(PERSON), "b.json": entries(PERSON)}, "Person is also defined in"),
        ({"a.json": entries({**PERSON, "absorbs": ["human"]}, {"name": "Robot", "absorbs": ["human"]})},
         "human is absorbed by both Person and Robot"),
        ({"a.json": entries({"name": "Thing", "fallback": True}, {"name": "Other", "fallback": True})},
         "more than one fallback label"),
        ({"city.schema.json": json.dumps(["add_city"])}, "a schema file holds one JSON object"),
        ({"city.schema.json": seed(properties={})}, 'it needs a "properties" object'),
        ({"city.schema.json": seed(properties={"name": NAME, "region": {
            **NAME, "relationship": {"edgeType": "located in", "description": "Where it lies."}}})},
         "property 'region'"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_be_loaded_is_refused_with_its_reason(
    tmp_path: Path, files: dict[str, str], reason: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(SchemaFileError) as caught:
        read_sources([tmp_path])
    assert reason in caught.value.reason, caught.value.reason
    assert caught.value.path in {tmp_path, *(tmp_path / name for name in files)}  # the file (or folder) is named


def test_a_path_that_is_neither_file_nor_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SchemaFileError) as caught:
        read_sources([tmp_path / "missing"])
    assert (caught.value.path, caught.value.reason) == (tmp_path / "missing", "no such file or folder")


def test_property_types_keep_the_files_order(tmp_path: Path) -> None:
    """MemoryMesh shows a node's fields in its schema file's order (seed 000, 3.7): the stored text keeps it."""
    fields = {"name": NAME, "zone": NAME, "area": NAME, "mayor": NAME}
    (tmp_path / "city.schema.json").write_text(seed(properties=fields))
    [city] = [entry for entry in read_sources([tmp_path]) if entry.name == "City"]
    assert list(json.loads(city.to_node_properties()["property_types"])) == list(fields)
