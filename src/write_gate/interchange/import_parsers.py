"""The import formats read into records (import_records.py): json, jsonl, csv and graphml, each in the gate's
form (docs/interchange/import.md) and in memory-mcp's and the official server's. Pure: text in, records out.

A whole-file problem (not JSON at all, no sections) is a ValueError; a bad item is a record with its problem,
so the rest still imports."""

import contextlib
import csv
import io
import json
from collections.abc import Callable
from typing import Any, Literal

from write_gate.interchange.import_records import Parsed, Where, entity, relation, split_id

ImportFormat = Literal["json", "jsonl", "csv", "graphml"]


def parse_json(text: str) -> list[Parsed]:
    """`write-gate/json` v1, the gate's older export and memory-mcp's: {"entities": [...], "relations": [...]}."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON document: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(document, dict) or not ({"entities", "relations"} & document.keys()):
        raise ValueError('a JSON import is one object with "entities" and "relations"')
    if document.get("format", "write-gate/json") != "write-gate/json" or document.get("version", 1) != 1:
        raise ValueError("not a write-gate/json document of version 1")
    entities, relations = document.get("entities") or [], document.get("relations") or []
    if not isinstance(entities, list) or not isinstance(relations, list):
        raise ValueError('"entities" and "relations" must be lists')
    return [entity(("index", i), e) for i, e in enumerate(entities)] + [
        relation(("index", i), r) for i, r in enumerate(relations)
    ]


def parse_jsonl(text: str) -> list[Parsed]:
    """The official server's lines ({"type": "entity"|"relation", ...}), with the gate's extra keys."""
    out = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            out.append(Parsed(("line", number), None, f"not valid JSON: {exc.msg}"))
            continue
        kind = data.get("type") if isinstance(data, dict) else None
        if kind not in ("entity", "relation"):
            out.append(Parsed(("line", number), None, 'the "type" field is neither "entity" nor "relation"'))
            continue
        out.append((entity if kind == "entity" else relation)(("line", number), data))
    return out


# --- csv -----------------------------------------------------------------------------------------

_JSON_COLUMNS = ("keys", "observations", "tags", "properties")


def _list_text(text: str) -> list[str]:
    """memory-mcp joins a list with "; " or "|"."""
    if not text.strip():
        return []
    separator = "|" if "|" in text and "; " not in text else ";"
    return [part.strip() for part in text.split(separator) if part.strip()]


def _gate_row(row: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in row.items() if v not in ("", None) and k not in _JSON_COLUMNS}
    for column in _JSON_COLUMNS:
        if row.get(column):
            data[column] = json.loads(row[column])
    for column in ("importance", "weight", "confidence"):
        if column in data:
            data[column] = float(data[column])
    provenance = {k: data.pop(k) for k in ("confidence", "written_by", "last_updated") if k in data}
    if provenance:
        data["provenance"] = provenance
    return data


def _memory_row(row: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in row.items() if v not in ("", None)}
    for column in ("observations", "tags"):
        if column in data:
            data[column] = _list_text(data[column])
    if "importance" in data:
        data["importance"] = float(data["importance"])
    return data


def _sections(text: str) -> dict[str, tuple[int, str]]:
    """`# ENTITIES` and `# RELATIONS`: each section's text and the line its header row is on."""
    sections: dict[str, tuple[int, list[str]]] = {}
    current = None
    # Cut at "\n" alone and joined by it again: str.splitlines() also ends a line at \x85, \u2028 and five more,
    # which a CSV writer leaves unquoted in a field, and at the \r of a quoted \r\n (the csv module reads both).
    # A file whose lines end in a lone \r (classic Mac OS) is cut at those.
    for number, raw in enumerate(text.split("\n") if "\n" in text else text.split("\r"), start=1):
        marker = raw.strip().upper()
        if marker in ("# ENTITIES", "# RELATIONS"):
            current = marker[2:].lower()
            sections[current] = (number + 1, [])
        elif current is not None:
            sections[current][1].append(raw)
    if not sections:
        raise ValueError('a CSV import has a "# ENTITIES" section, a "# RELATIONS" one, or both')
    return {name: (first, "\n".join(lines)) for name, (first, lines) in sections.items()}


def parse_csv(text: str) -> list[Parsed]:
    """Two sections in one text; the header row says whose: the gate's (JSON list and map columns) or memory-mcp's
    (lists joined by "; " or "|")."""
    try:
        return _csv_records(text)
    except csv.Error as exc:  # a field past the csv module's size limit, a quote it cannot close
        raise ValueError(f"the CSV does not parse: {exc}") from exc


def _csv_records(text: str) -> list[Parsed]:
    out: list[Parsed] = []
    for name, (first, body) in _sections(text).items():
        reader = csv.DictReader(io.StringIO(body.strip("\n")))
        gate = "id" in (reader.fieldnames or []) or "from_id" in (reader.fieldnames or [])
        make = entity if name == "entities" else relation
        for row in reader:
            where: Where = ("line", first + reader.line_num - 1)
            try:
                data = _gate_row(row) if gate else _memory_row(row)
            except ValueError as exc:  # a JSON column that is not JSON, a number that is not one
                out.append(Parsed(where, None, f"a column does not parse: {type(exc).__name__}"))
                continue
            out.append(make(where, data))
    return out


# --- graphml -------------------------------------------------------------------------------------


def _json_or_list(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return _list_text(value)


def parse_graphml(text: str) -> list[Parsed]:
    """The gate's (node id `label:_key`, typed attributes, lists and maps as JSON) and the plain kind whose node
    ids are names and whose only data is entityType and observations (memory-mcp's, the gate's older one)."""
    import networkx as nx

    try:
        graph = nx.read_graphml(io.BytesIO(text.encode("utf-8")))
    except Exception as exc:  # networkx raises several kinds (XML, its own, KeyError) for a file it cannot read
        raise ValueError(f"not a GraphML document: {type(exc).__name__}") from exc
    out: list[Parsed] = []
    ends: dict[str, dict[str, Any]] = {}
    for index, (node_id, attrs) in enumerate(graph.nodes(data=True)):
        data = {k: _json_or_list(v) if k in _JSON_COLUMNS else v for k, v in attrs.items() if not k.startswith("p_")}
        data.setdefault("name", str(node_id) if split_id(str(node_id)) is None else None)
        if isinstance(data.get("importance"), str):  # an attribute declared as text: a number in it, as a CSV's
            with contextlib.suppress(ValueError):  # not a number: the record says so
                data["importance"] = float(data["importance"])
        parsed = entity(("index", index), data)
        out.append(parsed)
        gate_id = str(node_id) if split_id(str(node_id)) else None
        ends[str(node_id)] = {"id": gate_id, "name": data.get("name") or str(node_id)}
    for index, (start, end, attrs) in enumerate(graph.edges(data=True)):
        data = {k: _json_or_list(v) if k == "properties" else v for k, v in attrs.items()}
        for side, node in (("from", ends[str(start)]), ("to", ends[str(end)])):
            data[side] = node["name"]
            if node["id"]:
                data[f"{side}_id"] = node["id"]
        out.append(relation(("index", index), data))
    return out


def _whole(parse: Callable[[str], list[Parsed]]) -> Callable[[str], list[Parsed]]:
    """`parse`, with a file nested past what Python's readers recurse through (JSON's recurses once a level) refused
    whole, as a file that is no import is, for the import_graph tool and the CLI alike."""

    def read(text: str) -> list[Parsed]:
        try:
            return parse(text)
        except RecursionError as exc:
            raise ValueError("its values nest too deeply to read") from exc

    return read


PARSERS: dict[str, Callable[[str], list[Parsed]]] = {
    "json": _whole(parse_json),
    "jsonl": _whole(parse_jsonl),
    "csv": _whole(parse_csv),
    "graphml": _whole(parse_graphml),
}
