"""csv: entities and relations as two sections of one text (`# ENTITIES`, a blank line, `# RELATIONS`), each with
its header row, so the whole export fits one MCP string; the CLI writes the two as nodes.csv and edges.csv. List
and map columns hold JSON text; Python's csv module quotes."""

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from write_gate.core.export_records import ExportedGraph, ExportedNode, ExportedRelation

ENTITY_COLUMNS = [
    "id",
    "label",
    "keys",
    "name",
    "entityType",
    "observations",
    "tags",
    "importance",
    "properties",
    "source",
    "extraction_method",
    "confidence",
    "written_by",
    "last_updated",
]
RELATION_COLUMNS = [
    "from_id",
    "to_id",
    "from",
    "to",
    "relationType",
    "weight",
    "properties",
    "source",
    "extraction_method",
    "confidence",
    "written_by",
    "last_updated",
]
_STAMPS = ("source", "extraction_method", "confidence", "written_by", "last_updated")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _plain(value: Any) -> Any:
    return "" if value is None else value


def entity_row(node: ExportedNode) -> list[Any]:
    head = [node.id, node.label, _json(node.keys), _plain(node.name), node.label]
    lists = [_json(node.observations), _json(node.tags), _plain(node.importance), _json(node.properties)]
    return head + lists + [_plain(node.provenance.get(stamp)) for stamp in _STAMPS]


def relation_row(relation: ExportedRelation) -> list[Any]:
    ends = [relation.from_id, relation.to_id, _plain(relation.from_name), _plain(relation.to_name)]
    values = [relation.type, _plain(relation.weight), _json(relation.properties)]
    return ends + values + [_plain(relation.provenance.get(stamp)) for stamp in _STAMPS]


def _table(columns: list[str], rows: Iterator[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # csv quotes a field that holds a character of its line end, and only those: written with "\n", a name holding
    # a lone \r went out bare, and every reader ends a row there. Such a row is written with "\r\n", which quotes
    # it, and its end made "\n" again.
    carriage = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        if any(isinstance(value, str) and "\r" in value for value in row):
            carriage.writerow(row)
            out.seek(out.tell() - 2)
            out.write("\n")
            out.truncate()
        else:
            writer.writerow(row)
    return out.getvalue()


def nodes_table(graph: ExportedGraph) -> str:
    return _table(ENTITY_COLUMNS, (entity_row(node) for node in graph.nodes))


def edges_table(graph: ExportedGraph) -> str:
    return _table(RELATION_COLUMNS, (relation_row(relation) for relation in graph.relations))


def csv_sections(graph: ExportedGraph) -> Iterator[str]:
    yield "# ENTITIES\n" + nodes_table(graph)
    yield "\n# RELATIONS\n" + edges_table(graph)


def write_directory(graph: ExportedGraph, directory: Path) -> tuple[Path, Path]:
    """nodes.csv and edges.csv in `directory` (made if missing): the two sections without their `#` lines."""
    directory.mkdir(parents=True, exist_ok=True)
    nodes, edges = directory / "nodes.csv", directory / "edges.csv"
    nodes.write_text(nodes_table(graph), encoding="utf-8", newline="")
    edges.write_text(edges_table(graph), encoding="utf-8", newline="")
    return nodes, edges
