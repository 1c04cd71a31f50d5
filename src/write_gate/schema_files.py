"""Registry source files (JSON, human-edited, in `schemas/`) -> validated entries -> `:Schema` nodes."""

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from write_gate import cypher
from write_gate.backends import GraphBackend
from write_gate.identifiers import RESERVED_LABELS, is_identifier, is_protected
from write_gate.registry import PropertyType


class SchemaFileError(ValueError):
    """A source file that cannot be loaded; names the file and the reason."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _identifiers(values: list[str], what: str) -> list[str]:
    names = [v.lstrip(":") for v in values]
    bad = [v for v in names if not is_identifier(v)]
    if bad:
        raise ValueError(f"{what} must be plain identifiers, not {bad}")
    return names


class EntrySource(BaseModel):
    """One entry as a person writes it; becomes one `:Schema` node."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["node", "relationship"] = "node"
    description: str = ""
    required_properties: list[str] = Field(default_factory=list)
    merge_keys: list[str] = Field(default_factory=list)
    absorbs: list[str] = Field(default_factory=list)
    property_types: dict[str, str | dict[str, Any]] = Field(default_factory=dict)
    fallback: bool = False
    from_labels: list[str] = Field(default_factory=list)
    to_labels: list[str] = Field(default_factory=list)
    allowed: bool = True

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = v.lstrip(":")
        if not is_identifier(v):
            raise ValueError(f"name {v!r} is not a plain identifier")
        if v in RESERVED_LABELS:
            raise ValueError(f"{v} is reserved for the gate itself")
        return v

    @field_validator("required_properties", "merge_keys", "absorbs", "from_labels", "to_labels")
    @classmethod
    def _names(cls, v: list[str], info: Any) -> list[str]:
        return _identifiers(v, info.field_name)

    @field_validator("property_types")
    @classmethod
    def _types(cls, v: dict[str, Any]) -> dict[str, Any]:
        return {key: PropertyType.parse(spec).to_json() for key, spec in v.items()}

    @model_validator(mode="after")
    def _consistent(self) -> "EntrySource":
        protected = [k for k in self.merge_keys + self.required_properties if is_protected(k)]
        if protected:
            raise ValueError(f"{protected} are gate-computed fields and cannot be required or merge keys")
        if self.kind == "relationship" and (self.fallback or self.merge_keys):
            raise ValueError("a relationship entry has no fallback and no merge_keys")
        if self.kind == "node" and (self.from_labels or self.to_labels):
            raise ValueError("from_labels/to_labels belong to relationship entries")
        return self

    def to_node_properties(self) -> dict[str, Any]:
        # Every field is written every time, so an update never leaves a stale value behind.
        props = self.model_dump()
        props["property_types"] = json.dumps(self.property_types, sort_keys=True)
        return props


class SourceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[EntrySource]


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            out.append(path)
        else:
            raise SchemaFileError(path, "no such file or folder")
    return out


def read_file(path: Path) -> list[EntrySource]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaFileError(path, f"not readable JSON: {exc}") from exc
    try:
        if isinstance(data, dict) and "entries" in data:
            return SourceFile.model_validate(data).entries
        return [EntrySource.model_validate(data)]
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors())
        raise SchemaFileError(path, reasons) from exc


def read_sources(paths: list[Path]) -> list[EntrySource]:
    """Read and check every file before anything is written: one bad file loads nothing."""
    entries: list[EntrySource] = []
    seen: dict[str, Path] = {}
    aliases: dict[tuple[str, str], str] = {}
    fallbacks: list[str] = []
    for path in _files(paths):
        for entry in read_file(path):
            if entry.name in seen:
                raise SchemaFileError(path, f"{entry.name} is also defined in {seen[entry.name]}")
            seen[entry.name] = path
            for alias in entry.absorbs:
                other = aliases.setdefault((entry.kind, alias), entry.name)
                if other != entry.name:
                    raise SchemaFileError(path, f"{alias} is absorbed by both {other} and {entry.name}")
            if entry.fallback:
                fallbacks.append(entry.name)
            entries.append(entry)
    if len(fallbacks) > 1:
        raise SchemaFileError(paths[0], f"more than one fallback label: {fallbacks}")
    return entries


async def load_into_graph(backend: GraphBackend, entries: list[EntrySource]) -> int:
    """Write the entries in one statement, then back each single merge key with a unique constraint."""
    await backend.write(cypher.upsert_schema_entries([e.to_node_properties() for e in entries]))
    for entry in entries:
        if entry.kind != "node" or not entry.allowed:
            continue
        if len(entry.merge_keys) == 1:
            await backend.ensure_unique(entry.name, entry.merge_keys[0])
        else:
            for key in entry.merge_keys:
                await backend.ensure_index(entry.name, key)
    return len(entries)
