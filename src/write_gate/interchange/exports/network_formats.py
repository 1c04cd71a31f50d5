"""graphml and gexf, written by networkx with typed attributes, so Gephi, yEd and networkx read them as numbers
where they are numbers: `confidence`, `importance` and `weight` as doubles, each scalar property also as its own
attribute `p_<name>` (by the type all its values share; text where they differ), the lists and maps as JSON text.

GEXF gives each node a display label of its own, which Gephi shows: there it is the node's name, and the gate's
label is its `entityType` attribute (the same value, as in every format).

XML 1.0 cannot hold every character a name may (U+0001, U+FFFE): those are written as the text `\\uXXXX`, so the
file stays well-formed and says what stood there; json, jsonl and csv keep them as they are."""

import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from write_gate.core.export_records import ExportedGraph, ExportedNode, ExportedRelation

if TYPE_CHECKING:
    import networkx as nx

_NODE_TEXT = ("source", "extraction_method", "written_by", "last_updated")
# What XML 1.0 cannot hold, escaped or not: controls but tab, newline and return; surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _column_types(nodes: Iterable[ExportedNode]) -> dict[str, type]:
    """Each scalar property's one type across the nodes: bool, int, float (ints and floats mixed) or str."""
    seen: dict[str, set[type]] = {}
    for node in nodes:
        for name, value in node.properties.items():
            if _is_scalar(value):
                seen.setdefault(name, set()).add(type(value))
    types: dict[str, type] = {}
    for name, kinds in seen.items():
        if len(kinds) == 1:
            types[name] = kinds.pop()
        elif kinds <= {int, float}:
            types[name] = float
        else:
            types[name] = str
    return types


def _typed(value: Any, kind: type) -> Any:
    if kind is str and not isinstance(value, str):
        return _json(value)
    return kind(value)


def _node_data(node: ExportedNode, columns: dict[str, type]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "label": node.label,
        "name": node.name if node.name is not None else "",
        "entityType": node.label,
        "keys": _json(node.keys),
        "observations": _json(node.observations),
        "tags": _json(node.tags),
        "properties": _json(node.properties),
    }
    data |= {k: str(node.provenance[k]) for k in _NODE_TEXT if node.provenance.get(k) is not None}
    if isinstance(node.provenance.get("confidence"), int | float):
        data["confidence"] = float(node.provenance["confidence"])
    if node.importance is not None:
        data["importance"] = float(node.importance)
    for name, value in node.properties.items():
        if name in columns and _is_scalar(value):
            data[f"p_{name}"] = _typed(value, columns[name])
    return data


def _edge_data(relation: ExportedRelation) -> dict[str, Any]:
    data: dict[str, Any] = {"relationType": relation.type, "properties": _json(relation.properties)}
    if relation.weight is not None:
        data["weight"] = relation.weight
    if isinstance(relation.provenance.get("confidence"), int | float):
        data["confidence"] = float(relation.provenance["confidence"])
    return data


def network(graph: ExportedGraph) -> "nx.MultiDiGraph":
    """The export as a networkx graph: node ids `label:_key`, parallel relations kept apart."""
    import networkx as nx  # here, not at the top: every CLI command would pay for it

    columns = _column_types(graph.nodes)
    out = nx.MultiDiGraph()
    for node in graph.nodes:
        data = _node_data(node, columns)
        out.add_node(_xml_safe(node.id), **{key: _xml_safe(value) for key, value in data.items()})
    for number, relation in enumerate(graph.relations):
        data = _edge_data(relation)
        ends = _xml_safe(relation.from_id), _xml_safe(relation.to_id)
        # Its own key: graphml writes it as the edge's id, which was 0 for every edge between two different nodes.
        out.add_edge(*ends, key=f"e{number}", **{key: _xml_safe(value) for key, value in data.items()})
    return out


def graphml(graph: ExportedGraph) -> Iterator[str]:
    import networkx as nx

    buffer = io.BytesIO()
    nx.write_graphml(network(graph), buffer, encoding="utf-8")
    yield buffer.getvalue().decode("utf-8")


def gexf(graph: ExportedGraph) -> Iterator[str]:
    import networkx as nx

    net = network(graph)
    for _id, data in net.nodes(data=True):
        data["label"] = data["name"]  # GEXF's display label (networkx writes it as the node's `label`)
    buffer = io.BytesIO()
    nx.write_gexf(net, buffer, encoding="utf-8")
    yield buffer.getvalue().decode("utf-8")
