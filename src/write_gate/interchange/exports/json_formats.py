"""json (`write-gate/json`, version 1: one document) and jsonl (the official memory server's lines, each with the
gate's identity and more beside what that server reads, which it ignores)."""

import json
from collections.abc import Iterator

from write_gate.core.export_records import ExportedGraph
from write_gate.interchange.exports.records import JSON_FORMAT, JSON_VERSION, entity_record, relation_record


def json_document(graph: ExportedGraph) -> Iterator[str]:
    document = {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "entities": [entity_record(node) for node in graph.nodes],
        "relations": [relation_record(relation) for relation in graph.relations],
    }
    yield json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def jsonl(graph: ExportedGraph) -> Iterator[str]:
    """Entities, then relations, as the official server writes its file: its keys first, the gate's after."""
    for node in graph.nodes:
        record = entity_record(node)
        official = {"type": "entity", "name": record.pop("name"), "entityType": record.pop("entityType")}
        official["observations"] = record.pop("observations")
        yield _line(official | record)
    for relation in graph.relations:
        record = relation_record(relation)
        official = {"type": "relation", "from": record.pop("from"), "to": record.pop("to")}
        official["relationType"] = record.pop("relationType")
        yield _line(official | record)
