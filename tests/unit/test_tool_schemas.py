"""The advertised schemas (pure): compact, yet accepting exactly what the models accept; and WRITE_GATE_TOOLS."""

import json

import jsonschema
import pytest
from pydantic import ValidationError

from tests.conftest import ADMIN_READS, DISCOVERY_TOOLS, KNOWLEDGE_ADMIN, QUARANTINE_TOOLS, READ_TOOLS
from write_gate.access.tool_selection import ToolSelection
from write_gate.core.model import (
    ErrorCode,
    NodeWritten,
    Rejected,
    WriteNodeRequest,
    WriteRelationshipRequest,
    validation_problems,
)
from write_gate.core.registry import PropertyType, RegistrySnapshot, RelationshipDef, SchemaEntry
from write_gate.services.batch import BatchWritten, ItemOutcome, WriteNodesRequest, checked
from write_gate.services.reads import GraphResult
from write_gate.surface.profiles import PROFILES
from write_gate.surface.tool_schemas import input_schema, output_schema
from write_gate.surface.tool_spec import with_idempotency_key
from write_gate.surface.typed_tool_specs import typed_specs

NPC_REGISTRY = RegistrySnapshot(
    [
        SchemaEntry(
            "Npc", ("name",), merge_keys=("name",), property_types={"name": PropertyType("string")}, typed_tools=True
        )
    ]
)


def valid(schema: dict, instance: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def test_output_schema_accepts_the_success_and_the_rejection_and_nothing_else() -> None:
    schema = output_schema(NodeWritten)
    written = NodeWritten(label="Person", merge_keys={"name": "Ada"}, confidence=0.5, write_gate_version="0.1.0")
    rejected = Rejected(error_code=ErrorCode.SCHEMA_UNKNOWN_LABEL, message="no", details={"label": "X"})
    assert schema == {
        "type": "object",
        "properties": {"status": {"enum": ["written", "rejected"]}},
        "required": ["status"],
    }
    assert valid(schema, written.model_dump(mode="json")) and valid(schema, rejected.model_dump(mode="json"))
    assert not valid(schema, {"status": "deleted"}) and not valid(schema, {"entities": []})


def test_batch_and_read_answers_match_their_output_schemas() -> None:
    item = ItemOutcome(index=0, status="rejected", error_code=ErrorCode.INVALID_INPUT, message="m", details={})
    batch = BatchWritten(written=0, rejected=1, write_gate_version="0.1.0", items=[item])
    assert valid(output_schema(BatchWritten), batch.model_dump(mode="json", by_alias=True))
    page = GraphResult.model_validate(
        {
            "entities": [{"name": None, "entityType": "Person", "labels": ["Person"]}],
            "relations": [{"from": "a", "to": "b", "relationType": "KNOWS"}],
        }
    )
    reads = output_schema(GraphResult)  # no status: a page has its two lists, a rejection its error_code
    rejected = Rejected(error_code=ErrorCode.BACKEND_UNAVAILABLE, message="down")
    assert valid(reads, page.model_dump(mode="json", by_alias=True)) and valid(reads, rejected.model_dump(mode="json"))
    assert not valid(reads, {"entities": []}) and not valid(reads, {"entities": {}, "relations": []})
    # Each branch declares the names it requires (Ajv's strict mode refuses the schema otherwise).
    assert [set(branch["properties"]) for branch in reads["anyOf"]] == [{"entities", "relations"}, {"error_code"}]


def test_input_schema_is_compact_and_as_strict_as_the_model() -> None:
    schema = input_schema(WriteRelationshipRequest)
    assert "$defs" not in schema and '"title"' not in json.dumps(schema)
    assert schema["properties"]["from_keys"]["additionalProperties"] == {
        "type": ["string", "integer", "number", "boolean"]
    }
    good = {
        "type": "T",
        "from_label": "A",
        "from_keys": {"k": 1},
        "to_label": "B",
        "to_keys": {"k": "x"},
        "source": "s",
        "extraction_method": "api",
        "weight": None,
    }
    assert valid(schema, good)
    assert not valid(schema, {**good, "weight": 2}) and not valid(schema, {**good, "from_keys": {"k": [1]}})
    assert not valid(schema, {**good, "extra": 1})
    batch = input_schema(WriteNodesRequest, description_depth=1)
    assert "description" in batch["properties"]["items"]
    assert "description" not in json.dumps(batch["properties"]["items"]["items"])


@pytest.mark.parametrize(
    ("text", "offered", "hidden"),
    [
        ("*", ["write_node", "add_npc"], []),
        ("read", ["get_schema", "search_nodes"], ["write_node", "add_npc", "refresh_schema_cache"]),
        ("read, typed:Npc", ["read_graph", "add_npc"], ["add_location", "write_node"]),
        ("*,-typed", ["write_node", "refresh_schema_cache"], ["add_npc"]),
        ("-typed:Location -admin", ["add_npc", "write_nodes"], ["add_location", "refresh_schema_cache"]),
        ("write_node typed", ["write_node", "delete_npc"], ["write_nodes", "get_schema"]),
    ],
)
def test_tool_selection(text: str, offered: list[str], hidden: list[str]) -> None:
    selection = ToolSelection.parse(text)
    label = {"add_npc": "Npc", "delete_npc": "Npc", "add_location": "Location"}
    group = {spec.name: spec.group for spec in PROFILES["gate"]} | dict.fromkeys(label, "write")
    assert all(selection.offers(name, group[name], label.get(name)) for name in offered)
    assert not any(selection.offers(name, group[name], label.get(name)) for name in hidden)


def test_tool_groups_come_from_the_annotations() -> None:
    """Read-only tools are the `read` group (list_toolsets and enable_toolset among them: they change only what a
    session lists); refresh_schema_cache (which changes the gate, not the graph), the
    archive's two tools, export_graph (read-only, but the whole graph at once) and import_graph (a whole file, or
    a restore) `admin`; every other tool, generated ones included, `write`."""
    specs = [*PROFILES["gate"], *PROFILES["memory"], *typed_specs(NPC_REGISTRY, {"enum": ["api"]})]
    groups = {spec.name: spec.group for spec in specs}
    assert {n for n, g in groups.items() if g == "read"} == READ_TOOLS | DISCOVERY_TOOLS
    admin = {"refresh_schema_cache", "import_graph", *KNOWLEDGE_ADMIN, *ADMIN_READS, *QUARANTINE_TOOLS}
    assert {n for n, g in groups.items() if g == "admin"} == admin
    writes = ("write_nodes", "create_entities", "delete_relations", "add_npc", "merge_entities")
    assert all(groups[n] == "write" for n in writes)
    assert all(bool(spec.annotations.read_only_hint) == (spec.group == "read") for spec in specs if spec.admin is False)
    assert all(bool(spec.annotations.read_only_hint) == (spec.name in ADMIN_READS) for spec in specs if spec.admin)


@pytest.mark.parametrize("text", ["read;write", "typed:", "-", "typed:Npc:x", "a b-c"])
def test_tool_selection_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError, match="WRITE_GATE_TOOLS"):
        ToolSelection.parse(text)


def test_a_batch_validates_each_item_with_the_model_it_advertises() -> None:
    """One model gives write_nodes' schema and its validation; a bad item is kept as its own failure, with
    the problems write_node would give, so the others are still written."""
    good = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "t", "extraction_method": "api"}
    bad = {**good, "merge_keys": "not a map", "extra": 1}
    items = checked(WriteNodesRequest.model_validate({"items": [good, bad, 3]}).items)
    assert isinstance(items[0], WriteNodeRequest) and items[0] == WriteNodeRequest.model_validate(good)
    for item, raw in zip(items[1:], (bad, 3), strict=True):
        with pytest.raises(ValidationError) as single:
            WriteNodeRequest.model_validate(raw)
        assert isinstance(item, ValidationError) and validation_problems(item) == validation_problems(single.value)
    schema = input_schema(WriteNodesRequest, description_depth=1)
    assert valid(schema, {"items": [good]}) and not valid(schema, {"items": [bad]})
    with pytest.raises(ValidationError):  # the call's own shape is still checked whole
        WriteNodesRequest.model_validate({"items": good})


def test_a_typed_tool_advertises_the_schema_of_the_model_it_validates_with() -> None:
    """The call's own arguments come from the model; the type's object from the registry entry, which the
    gate checks itself (so its rejections carry the gate's codes)."""
    specs = {spec.name: spec for spec in typed_specs(NPC_REGISTRY, {"enum": ["api", "llm"]})}
    add = specs["add_npc"]
    # The model's schema, and the idempotency_key every write tool takes (surface/write_guard.py handles it).
    assert add.input_schema is None and add.to_mcp().input_schema == with_idempotency_key(input_schema(add.input_model))
    schema = add.to_mcp().input_schema
    assert schema["properties"]["extraction_method"] == {
        "type": "string",
        "enum": ["api", "llm"],
        "description": "Default: llm.",
    }
    assert schema["properties"]["npc"]["properties"] == {"name": {"type": "string"}}
    assert schema["required"] == ["npc"]  # MemoryMesh's calls declare no claim: the gate's defaults stamp them
    call = {"npc": {"name": "Gandalf"}, "source": "t", "extraction_method": "api"}
    for right in (call, {"npc": {"name": "G"}}):
        assert valid(schema, right) and add.input_model.model_validate(right)
    for wrong in ({**call, "source": ""}, {**call, "reliability": "x"}, {**call, "extraction_method": 3}, {}):
        assert not valid(schema, wrong)
        with pytest.raises(ValidationError):
            add.input_model.model_validate(wrong)


def test_a_relationship_field_is_described_as_its_schema_writes_it_or_else_by_what_it_links() -> None:
    fields = {
        "name": PropertyType("string"),
        "home": PropertyType("string", description="Where it lives", relationship=RelationshipDef("LIVES_IN", "Town")),
        "town": PropertyType("string", relationship=RelationshipDef("NEAR", "Town")),
        "allies": PropertyType("array", items="string", relationship=RelationshipDef("ALLIED_WITH")),
    }
    registry = RegistrySnapshot(
        [SchemaEntry("Hero", ("name",), merge_keys=("name",), property_types=fields, typed_tools=True)]
    )
    specs = {spec.name: spec for spec in typed_specs(registry, {"enum": ["api", "llm"]})}
    hero = specs["add_hero"].to_mcp().input_schema["properties"]["hero"]["properties"]
    assert hero["home"]["description"] == "Where it lives"  # as written (seed 000, 5.2)
    assert hero["town"]["description"] == "The name of the Town it is NEAR"
    assert (
        hero["allies"]["description"]
        == "The names of the nodes (any label) it is ALLIED_WITH; they replace the earlier ones"
    )
