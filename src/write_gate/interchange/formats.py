"""The official memory server's files in. Pure: no engine here. (The graph goes out through exports/.)

`memory.jsonl` (one `{"type": "entity"|"relation", ...}` object per line) and its older `memory.json` (the same
lines under the old name, or one `{"entities": [...], "relations": [...]}` document).
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from write_gate.core.model import describe_problems
from write_gate.services.memory import EntityIn, RelationIn


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
