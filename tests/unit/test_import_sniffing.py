"""What `write-gate import FILE` without `--format` takes a file for, by its content (interchange.import_sniffing)."""

import json

import pytest

from write_gate.interchange.import_sniffing import sniff

OFFICIAL_ENTITY = {"type": "entity", "name": "Ada", "entityType": "Person", "observations": ["a"]}
OFFICIAL_RELATION = {"type": "relation", "from": "Ada", "to": "Bob", "relationType": "KNOWS"}
GATE_ENTITY = {**OFFICIAL_ENTITY, "id": 'Person:{"name":"Ada"}', "label": "Person", "keys": {"name": "Ada"}}
GATE_RELATION = {**OFFICIAL_RELATION, "from_id": 'Person:{"name":"Ada"}', "to_id": 'Person:{"name":"Bob"}'}
OFFICIAL_JSON = "the official memory server's memory.json"
MEMORY_MCP_ENTITY = {**OFFICIAL_ENTITY, "tags": ["x"], "importance": 3, "createdAt": "2024-01-01"}


def lines(*records: dict) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@pytest.mark.parametrize(
    ("text", "fmt", "official", "whose"),
    [
        (lines(OFFICIAL_ENTITY, OFFICIAL_RELATION), "jsonl", True, "the official memory server's memory.jsonl"),
        (lines(GATE_ENTITY, GATE_RELATION), "jsonl", False, "the gate's export"),
        (lines(OFFICIAL_ENTITY, GATE_RELATION), "jsonl", False, "the gate's export"),  # one line says it
        (lines(MEMORY_MCP_ENTITY, OFFICIAL_RELATION), "jsonl", False, "memory-mcp's file"),
        (json.dumps({"entities": [OFFICIAL_ENTITY], "relations": []}, indent=1), "json", True, OFFICIAL_JSON),
        (json.dumps({"entities": [MEMORY_MCP_ENTITY], "relations": []}), "json", False, "memory-mcp's file"),
        (json.dumps({"format": "write-gate/json", "version": 1, "entities": []}), "json", False, "the gate's export"),
        ("# ENTITIES\nid,label\n", "csv", False, "a sectioned CSV"),
        ('  <?xml version="1.0"?><graphml/>', "graphml", False, "a GraphML document"),
        ("not json\n" + lines(GATE_ENTITY), "jsonl", False, "the gate's export"),  # the bad line is reported
        ("", "jsonl", True, "the official memory server's memory.jsonl"),
    ],
)  # fmt: skip
def test_a_file_is_told_by_its_content(text: str, fmt: str, official: bool, whose: str) -> None:
    sniffed = sniff(text)
    assert (sniffed.format, sniffed.official, sniffed.whose) == (fmt, official, whose)
