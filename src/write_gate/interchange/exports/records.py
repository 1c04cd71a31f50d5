"""The contract's records of a node and a relation, as the json, jsonl and csv exports write them."""

from typing import Any

from write_gate.core.export_records import ExportedNode, ExportedRelation

JSON_FORMAT = "write-gate/json"
JSON_VERSION = 1


def entity_record(node: ExportedNode) -> dict[str, Any]:
    """Identity first, then memory-mcp's fields, then the gate's properties and provenance."""
    record: dict[str, Any] = {
        "id": node.id,
        "label": node.label,
        "keys": node.keys,
        "name": node.name,
        "entityType": node.label,
        "observations": node.observations,
        "tags": node.tags,
    }
    # memory-mcp's optional fields are left out where the entity has none, as its JSON export leaves them.
    if node.importance is not None:
        record["importance"] = node.importance
    if node.parent is not None:
        record["parentId"] = node.parent
    if node.created_at is not None:
        record["createdAt"] = node.created_at
    record["lastModified"] = node.last_modified
    record["properties"] = node.properties
    record["provenance"] = node.provenance
    return record


def relation_record(relation: ExportedRelation) -> dict[str, Any]:
    return {
        "from": relation.from_name,
        "to": relation.to_name,
        "from_id": relation.from_id,
        "to_id": relation.to_id,
        "relationType": relation.type,
        "weight": relation.weight,
        "properties": relation.properties,
        "provenance": relation.provenance,
    }
