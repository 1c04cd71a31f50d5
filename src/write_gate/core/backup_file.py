"""The lossless backup's file (`write-gate/backup`, version 1), written and checked. Pure: no engine here.

JSON lines: a header, every node (its position in the file is its id), every relationship with its endpoints
by position, and an end line with the counts, so a truncated file is refused rather than half restored.

    {"format": "write-gate/backup", "version": 1, "engine": "falkordb", "written_at": "..."}
    {"type": "node", "id": 0, "labels": ["Person"], "properties": {...}}
    {"type": "relationship", "start": 0, "end": 1, "relationshipType": "WORKS_FOR", "properties": {...}}
    {"type": "end", "nodes": 2, "relationships": 1}
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from write_gate.core.identifiers import is_identifier
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.tagged_values import tag_properties, untag_properties

BACKUP_FORMAT = "write-gate/backup"
BACKUP_VERSION = 1


@dataclass(frozen=True)
class NodeRecord:
    labels: tuple[str, ...]
    properties: dict[str, Any]


@dataclass(frozen=True)
class RelationshipRecord:
    start: int
    end: int
    type: str
    properties: dict[str, Any]


@dataclass
class BackupContents:
    header: dict[str, Any]
    nodes: list[NodeRecord] = field(default_factory=list)
    relationships: list[RelationshipRecord] = field(default_factory=list)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def header_line(engine: str, written_at: str) -> str:
    return _line({"format": BACKUP_FORMAT, "version": BACKUP_VERSION, "engine": engine, "written_at": written_at})


def node_line(position: int, labels: list[str], properties: dict[str, Any]) -> str:
    return _line({"type": "node", "id": position, "labels": labels, "properties": tag_properties(properties)})


def relationship_line(start: int, end: int, type_: str, properties: dict[str, Any]) -> str:
    record = {"type": "relationship", "start": start, "end": end, "relationshipType": type_}
    return _line({**record, "properties": tag_properties(properties)})


def end_line(nodes: int, relationships: int) -> str:
    return _line({"type": "end", "nodes": nodes, "relationships": relationships})


def _bad(number: int, reason: str) -> GateRejection:
    return GateRejection(
        ErrorCode.INVALID_INPUT, f"not a restorable backup: line {number}: {reason}; nothing was written", line=number
    )


def _properties(number: int, record: dict[str, Any]) -> dict[str, Any]:
    props = record.get("properties")
    if not isinstance(props, dict):
        raise _bad(number, '"properties" is not an object')
    try:
        return untag_properties(props)
    except ValueError as exc:
        raise _bad(number, str(exc)) from exc


def _position(number: int, record: dict[str, Any], name: str, nodes: int) -> int:
    value = record.get(name)
    if type(value) is not int or not 0 <= value < nodes:
        raise _bad(number, f'"{name}" is not the id of a node earlier in the file')
    return value


def check_backup(lines: Iterable[str]) -> BackupContents:
    """Every line parsed and checked before anything is written; a bad one is refused with its number."""
    contents: BackupContents | None = None
    ended = False
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if ended:
            raise _bad(number, "a line after the end line")
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _bad(number, f"not valid JSON: {exc.msg}") from exc
        except RecursionError as exc:  # Python's JSON reader recurses once a level; no backup nests so deep
            raise _bad(number, "nested deeper than any backup's values") from exc
        if not isinstance(record, dict):
            raise _bad(number, "not a JSON object")
        if contents is None:
            if record.get("format") != BACKUP_FORMAT:
                raise _bad(number, f'the header must say "format": "{BACKUP_FORMAT}"')
            if record.get("version") != BACKUP_VERSION:
                raise _bad(number, f"version {record.get('version')!r} is not one this gate reads ({BACKUP_VERSION})")
            contents = BackupContents(header=record)
            continue
        kind = record.get("type")
        if kind == "node":
            if record.get("id") != len(contents.nodes):
                raise _bad(number, f'"id" must be {len(contents.nodes)}, the node\'s position in the file')
            labels = record.get("labels")
            if not isinstance(labels, list) or not all(isinstance(x, str) and is_identifier(x) for x in labels):
                raise _bad(number, '"labels" must be a list of identifiers')
            contents.nodes.append(NodeRecord(tuple(labels), _properties(number, record)))
        elif kind == "relationship":
            type_ = record.get("relationshipType")
            if not isinstance(type_, str) or not is_identifier(type_):
                raise _bad(number, '"relationshipType" must be an identifier')
            start = _position(number, record, "start", len(contents.nodes))
            end = _position(number, record, "end", len(contents.nodes))
            contents.relationships.append(RelationshipRecord(start, end, type_, _properties(number, record)))
        elif kind == "end":
            if (record.get("nodes"), record.get("relationships")) != (
                len(contents.nodes),
                len(contents.relationships),
            ):
                raise _bad(number, "the end line's counts are not those of the lines before it")
            ended = True
        else:
            raise _bad(number, '"type" is none of node, relationship, end')
    if contents is None:
        raise _bad(1, "the file is empty")
    if not ended:  # the loop ran (a header was read), so `number` is the last line's
        raise _bad(number + 1, "no end line: the file is cut short")
    return contents
