"""The official memory server's files in, and the graph out in five formats. Pure: no engine here.

In: `memory.jsonl` (one `{"type": "entity"|"relation", ...}` object per line) and its older
`memory.json` (the same lines under the old name, or one `{"entities": [...], "relations": [...]}`
document). Out: jsonl (round-trips with import), json, graphml, dot and mermaid.
"""

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from write_gate.core.model import describe_problems
from write_gate.services.memory import EntityIn, RelationIn
from write_gate.services.reads import Entity, Relation


@dataclass(frozen=True)
class Line:
    """One item of an input file, numbered from 1 as an editor shows it."""

    number: int
    kind: Literal["entity", "relation"]
    item: EntityIn | RelationIn


@dataclass(frozen=True)
class BadLine:
    number: int
    reason: str


def _item(number: int, data: Any, kind: str | None = None) -> Line | BadLine:
    if not isinstance(data, dict):
        return BadLine(number, "not a JSON object")
    kind = kind or data.get("type")
    try:
        if kind == "entity":
            return Line(number, "entity", EntityIn.model_validate(data))
        if kind == "relation":
            return Line(number, "relation", RelationIn.model_validate(data))
    except ValidationError as exc:
        return BadLine(number, describe_problems(exc))
    return BadLine(number, 'the "type" field is neither "entity" nor "relation"')


def parse_memory_file(text: str) -> Iterator[Line | BadLine]:
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n" in stripped.strip():
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None
        if isinstance(document, dict) and ("entities" in document or "relations" in document):
            # A whole-graph document: number its items in order, entities first.
            items = [("entity", e) for e in document.get("entities", [])]
            items += [("relation", r) for r in document.get("relations", [])]
            for number, (kind, data) in enumerate(items, start=1):
                yield _item(number, data, kind)
            return
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield BadLine(number, f"not valid JSON: {exc.msg}")
            continue
        yield _item(number, data)


# --- out -----------------------------------------------------------------------------------------


def jsonl(entities: Iterable[Entity], relations: Iterable[Relation]) -> Iterator[str]:
    """The official server's own format: entities, then relations, one object per line."""
    for e in entities:
        record = {"type": "entity", "name": e.name, "entityType": e.entityType, "observations": e.observations}
        yield json.dumps(record, ensure_ascii=False) + "\n"
    for r in relations:
        record = {"type": "relation", "from": r.from_, "to": r.to, "relationType": r.relationType}
        yield json.dumps(record, ensure_ascii=False) + "\n"


def json_document(entities: Iterable[Entity], relations: Iterable[Relation]) -> Iterator[str]:
    """One document, with labels and properties (provenance included); not combined_weight, which belongs to
    a read's answer, not to the graph."""
    document = {
        "entities": [e.model_dump(mode="json") for e in entities],
        "relations": [r.model_dump(mode="json", by_alias=True, exclude={"combined_weight"}) for r in relations],
    }
    yield json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def graphml(entities: Iterable[Entity], relations: Iterable[Relation]) -> Iterator[str]:
    root = ET.Element("graphml", xmlns="http://graphml.graphdrawing.org/xmlns")
    for key, owner in (
        ("entityType", "node"),
        ("observations", "node"),
        ("properties", "node"),
        ("relationType", "edge"),
        ("properties", "edge"),
    ):
        ET.SubElement(root, "key", {"id": f"{owner}_{key}", "for": owner, "attr.name": key, "attr.type": "string"})
    graph = ET.SubElement(root, "graph", id="write_gate", edgedefault="directed")
    for e in entities:
        node = ET.SubElement(graph, "node", id=str(e.name))
        for key, value in (
            ("entityType", e.entityType),
            ("observations", json.dumps(e.observations, ensure_ascii=False)),
            ("properties", json.dumps(e.properties, ensure_ascii=False)),
        ):
            ET.SubElement(node, "data", key=f"node_{key}").text = value
    for r in relations:
        edge = ET.SubElement(graph, "edge", source=r.from_, target=r.to)
        ET.SubElement(edge, "data", key="edge_relationType").text = r.relationType
        ET.SubElement(edge, "data", key="edge_properties").text = json.dumps(r.properties, ensure_ascii=False)
    ET.indent(root)
    yield '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dot(entities: Iterable[Entity], relations: Iterable[Relation]) -> Iterator[str]:
    yield "digraph write_gate {\n"
    for e in entities:
        yield f"  {_dot_quote(str(e.name))} [label={_dot_quote(f'{e.name}\n{e.entityType}')}];\n"
    for r in relations:
        yield f"  {_dot_quote(r.from_)} -> {_dot_quote(r.to)} [label={_dot_quote(r.relationType)}];\n"
    yield "}\n"


def _mermaid_text(text: str) -> str:
    # Mermaid labels are quoted strings; it spells quotes and angle brackets as entity codes.
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("\n", " ")


def mermaid(entities: Iterable[Entity], relations: Iterable[Relation]) -> Iterator[str]:
    yield "graph LR\n"
    ids: dict[str, str] = {}
    for i, e in enumerate(entities):
        ids[str(e.name)] = f"n{i}"
        yield f'  n{i}["{_mermaid_text(str(e.name))}<br/><i>{_mermaid_text(e.entityType)}</i>"]\n'
    for r in relations:
        if r.from_ in ids and r.to in ids:
            yield f'  {ids[r.from_]} -->|"{_mermaid_text(r.relationType)}"| {ids[r.to]}\n'


EXPORTERS = {"jsonl": jsonl, "json": json_document, "graphml": graphml, "dot": dot, "mermaid": mermaid}
