"""Which import a file given to `write-gate import FILE` without `--format` is, told by its content. Pure: text in.

- The official memory server's file (`memory.jsonl` lines, or the older `memory.json` document) holds its own keys
  only (`type`, `name`, `entityType`, `observations`; `from`, `to`, `relationType`): the official path, which
  writes it as create_entities and create_relations would.
- The gate's own export (jsonl lines or the `write-gate/json` document, with `id`, `label`, `keys`, `from_id`,
  `to_id`, `properties`, `weight`, ...) and memory-mcp's (its lines or document, with `tags`, `importance`,
  `parentId`, `createdAt`, ...) carry more: the formats path (`--format jsonl` or `json`), which reads all of it,
  so an export round-trips losslessly.
- A GraphML document and a sectioned CSV are those formats.

One key beyond the official server's on any item is enough: a file is one export, never half of one.
"""

import json
from dataclasses import dataclass

from write_gate.interchange.import_parsers import ImportFormat

# The official server's own keys: an item holding no other is its.
OFFICIAL_KEYS = frozenset({"type", "name", "entityType", "observations", "from", "to", "relationType"})


@dataclass(frozen=True)
class Sniffed:
    format: ImportFormat  # the --format the file is read as on the formats path
    official: bool  # the official server's own file: the official path takes it (unless --strategy is given)
    whose: str  # for the command's message: whose file it looks like


def _beyond_official(items: list[object]) -> bool:
    return any(isinstance(item, dict) and not item.keys() <= OFFICIAL_KEYS for item in items)


def _whose(items: list[object]) -> str:
    gate = any(isinstance(item, dict) and ("id" in item or "from_id" in item) for item in items)
    return "the gate's export" if gate else "memory-mcp's file"


def _lines(text: str) -> list[object]:
    """Each line's JSON value; a line that is no JSON says nothing of whose the file is (either path reports it)."""
    items = []
    for raw in text.split("\n"):
        if raw.strip():
            try:
                items.append(json.loads(raw))
            except json.JSONDecodeError:
                continue
    return items


def _document(text: str) -> dict[str, object] | None:
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) and {"entities", "relations"} & document.keys() else None


def sniff(text: str) -> Sniffed:
    """What a file without `--format` is; what cannot be told otherwise is the official server's lines."""
    stripped = text.lstrip()
    if stripped.startswith("<"):
        return Sniffed("graphml", False, "a GraphML document")
    first = stripped.split("\n", 1)[0].strip().upper()
    if first in ("# ENTITIES", "# RELATIONS"):
        return Sniffed("csv", False, "a sectioned CSV")
    document = _document(text)
    if document is not None:
        entities, relations = document.get("entities"), document.get("relations")
        items = [*(entities if isinstance(entities, list) else []), *(relations if isinstance(relations, list) else [])]
        if "format" in document:
            return Sniffed("json", False, "the gate's export")
        if _beyond_official(items):
            return Sniffed("json", False, _whose(items))
        return Sniffed("json", True, "the official memory server's memory.json")
    items = _lines(text)
    if _beyond_official(items):
        return Sniffed("jsonl", False, _whose(items))
    return Sniffed("jsonl", True, "the official memory server's memory.jsonl")
