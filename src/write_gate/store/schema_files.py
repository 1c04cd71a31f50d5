"""Registry source files (JSON, human-edited, in `schemas/`) -> validated entries -> `:Schema` nodes."""

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from write_gate.core.clock import utc_now
from write_gate.core.cypher.registry_nodes import (
    BUNDLED,
    OPERATOR,
    defined_schema_entries,
    operator_schema_entries,
    upsert_schema_entries,
)
from write_gate.core.identifiers import RESERVED_LABELS, is_identifier, is_protected
from write_gate.core.identity import KEY_FIELD
from write_gate.core.model import describe_problems
from write_gate.core.properties import absorb_clashes
from write_gate.core.registry import ConflictPolicy, PropertyType, UndeclaredPolicy
from write_gate.core.stat_counts import DUE
from write_gate.engines import GraphBackend

# Stored for an entry without a half-life (a real one is > 0): like "" for no policy, a value written every
# time, so a load without a half-life clears an old one.
NO_HALF_LIFE = 0.0


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
    # Property definitions (type, required, enum, description, relationship): they become property_types
    # and required_properties, and make the gate generate add_/update_/delete_ tools for the label.
    properties: dict[str, dict[str, Any]] = Field(default_factory=dict)
    typed_tools: bool = False
    # Its typed tools take properties it does not define too (checked as write_node checks them).
    additional_properties: bool = False
    # What writes do with property names the entry does not declare; absent: WRITE_GATE_UNDECLARED_PROPERTY_POLICY.
    undeclared_properties: UndeclaredPolicy | None = None
    # What a write does to a value another writer claims; a property's own overrides it; absent:
    # WRITE_GATE_CONFLICT_POLICY.
    conflict_policy: ConflictPolicy | None = None
    # Claims on its values lose half their confidence every this many days; absent: the extraction method's
    # half-life (WRITE_GATE_DECAY_HALF_LIFE_DAYS), else none.
    half_life_days: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    # The fields whose text is embedded when embeddings are on (docs/search/semantic.md); empty: the name and the
    # observations.
    embed: list[str] = Field(default_factory=list)
    # Made by converting a seed-format file's relationship property; merged with its twins on load, and never
    # written over an entry a file defined outright (kept on the `:Schema` node, so later loads know).
    derived: bool = Field(default=False, exclude=True)

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
    def _definitions(self) -> "EntrySource":
        if not self.properties:
            return self
        for key, spec in self.properties.items():
            if not is_identifier(key) or is_protected(key):
                raise ValueError(f"property {key!r} must be a plain identifier and not a gate-computed field")
            self.property_types[key] = PropertyType.parse(spec).to_json()
            if spec.get("required") is True and key not in self.required_properties:
                self.required_properties.append(key)
        if not self.merge_keys:
            if "name" not in self.properties:
                raise ValueError("an entry with property definitions needs merge_keys (or a 'name' property)")
            self.merge_keys = ["name"]
        for key in self.merge_keys:
            if key not in self.required_properties:
                self.required_properties.insert(0, key)
        self.typed_tools = True
        return self

    @model_validator(mode="after")
    def _consistent(self) -> "EntrySource":
        protected = [k for k in self.merge_keys + self.required_properties if is_protected(k)]
        if protected:
            raise ValueError(f"{protected} are gate-computed fields and cannot be required or merge keys")
        if self.kind == "relationship" and (self.fallback or self.merge_keys):
            raise ValueError("a relationship entry has no fallback and no merge_keys")
        if self.kind == "node" and (self.from_labels or self.to_labels):
            raise ValueError("from_labels/to_labels belong to relationship entries")
        if self.additional_properties and not self.typed_tools:
            raise ValueError("additional_properties belongs to node entries with property definitions")
        if self.additional_properties and self.undeclared_properties is UndeclaredPolicy.REJECT:
            raise ValueError("additional_properties: true takes undeclared properties; undeclared_properties: reject")
        types = {key: PropertyType.parse(spec) for key, spec in self.property_types.items()}
        clashes = absorb_clashes(types, [*self.merge_keys, *self.required_properties, *types])
        if clashes:
            raise ValueError("property absorbs clash: " + "; ".join(clashes))
        return self

    def to_node_properties(self) -> dict[str, Any]:
        # Every field is written every time, so an update never leaves a stale value behind.
        props = self.model_dump(exclude={"properties"})
        # In the order the file gives them: MemoryMesh shows a node's fields in its schema's order (seed 000, 3.7).
        props["property_types"] = json.dumps(self.property_types)
        props["derived"] = self.derived
        # "" for none, so that, like every field, it is written every time: a load without it clears an old one.
        props["undeclared_properties"] = self.undeclared_properties.value if self.undeclared_properties else ""
        props["conflict_policy"] = self.conflict_policy.value if self.conflict_policy else ""
        props["half_life_days"] = self.half_life_days if self.half_life_days is not None else NO_HALF_LIFE
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
    if path.name.endswith(".schema.json"):
        return convert_seed_schema(path, data)
    try:
        if isinstance(data, dict) and "entries" in data:
            return SourceFile.model_validate(data).entries
        return [EntrySource.model_validate(data)]
    except ValidationError as exc:
        raise SchemaFileError(path, describe_problems(exc, "file")) from exc


def read_sources(paths: list[Path]) -> list[EntrySource]:
    """Read and check every file before anything is written: one bad file loads nothing."""
    entries: list[EntrySource] = []
    seen: dict[str, Path] = {}
    aliases: dict[tuple[str, str], str] = {}
    fallbacks: list[str] = []
    derived: dict[str, EntrySource] = {}
    for path in _files(paths):
        for entry in read_file(path):
            if entry.derived:
                _merge_derived(derived, entry)
                continue
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
    # A relationship type a converted file implies is registered too, unless a file defines it outright.
    return entries + [entry for name, entry in derived.items() if name not in seen]


def _merge_derived(derived: dict[str, EntrySource], entry: EntrySource) -> None:
    twin = derived.get(entry.name)
    if twin is None:
        derived[entry.name] = entry
        return
    twin.from_labels = _union(twin.from_labels, entry.from_labels)
    twin.to_labels = _union(twin.to_labels, entry.to_labels)


def _union(a: list[str], b: list[str]) -> list[str]:
    """Allowed endpoint labels of two twins; empty means any, and any absorbs the rest."""
    return sorted(set(a) | set(b)) if a and b else []


# --- seed 000's format: <type>.schema.json with "name": "add_<type>" ---------------------------


def _pascal(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_") if part)


def convert_seed_schema(path: Path, data: Any) -> list[EntrySource]:
    """`{"name": "add_npc", "description", "properties": {prop: {type, description, required, enum,
    relationship: {edgeType, nodeType?, description}}}, "additionalProperties"?}` -> a node entry `Npc` with
    property definitions, plus one relationship entry per relationship property (`located_in` ->
    `LOCATED_IN`; from the labels that use it, to its `nodeType`s, or to any label when one leaves it out).
    A relationship property may be an array: one relationship per item."""
    if not isinstance(data, dict):
        raise SchemaFileError(path, "a schema file holds one JSON object")
    name, description, properties = data.get("name"), data.get("description"), data.get("properties")
    if not isinstance(name, str) or not name.startswith("add_"):
        raise SchemaFileError(path, 'its "name" must start with "add_" (e.g. "add_npc")')
    if not isinstance(description, str):
        raise SchemaFileError(path, 'it needs a "description" string')
    if not isinstance(properties, dict) or not properties:
        raise SchemaFileError(path, 'it needs a "properties" object')
    label = _pascal(name[4:])
    definitions: dict[str, dict[str, Any]] = {}
    relationships: list[EntrySource] = []
    for key, spec in properties.items():
        if (
            not isinstance(spec, dict)
            or not isinstance(spec.get("type"), str)
            or not isinstance(spec.get("description"), str)
        ):
            raise SchemaFileError(path, f'property {key!r} needs a "type" and a "description"')
        definition: dict[str, Any] = {"type": spec["type"], "description": spec["description"]}
        if spec["type"] == "array":
            definition["items"] = _items(spec.get("items"))
        for field in ("required", "enum"):
            if field in spec:
                definition[field] = spec[field]
        if "relationship" in spec:
            link = _relationship(path, key, spec["relationship"])
            definition["relationship"] = link
            try:
                relationships.append(
                    EntrySource(
                        name=link["type"],
                        kind="relationship",
                        from_labels=[label],
                        to_labels=[link["to_label"]] if "to_label" in link else [],
                        description=link["description"],
                        derived=True,
                    )
                )
            except ValidationError as exc:
                raise SchemaFileError(path, f"property {key!r}: {exc.errors()[0]['msg']}") from exc
        definitions[key] = definition
    try:
        node = EntrySource(
            name=label,
            description=description,
            properties=definitions,
            absorbs=[name[4:]] if name[4:] != label else [],
            additional_properties=data.get("additionalProperties") is True,
        )
    except ValidationError as exc:
        raise SchemaFileError(path, describe_problems(exc, "file")) from exc
    return [node, *relationships]


def _items(items: Any) -> str:
    """An array's item type: `{"type": "integer"}` or `"integer"`; seed 000's arrays of strings say none."""
    if isinstance(items, dict):
        items = items.get("type", "string")
    return items if isinstance(items, str) else "string"


def _relationship(path: Path, key: str, link: Any) -> dict[str, str]:
    """`{edgeType, nodeType?, description?}` -> `{type, to_label?, description}`. `nodeType` is informational in
    seed 000 and most of MemoryMesh's files leave it out: without it a target is found by its name."""
    if not isinstance(link, dict):
        raise SchemaFileError(path, f'property {key!r}: "relationship" must be an object with an "edgeType"')
    edge_type, node_type = link.get("edgeType"), link.get("nodeType")
    if not isinstance(edge_type, str) or (node_type is not None and not isinstance(node_type, str)):
        raise SchemaFileError(path, f'property {key!r}: a relationship needs an "edgeType" (and a string "nodeType")')
    out = {"type": edge_type.upper(), "description": str(link.get("description", ""))}
    if node_type is not None:
        out["to_label"] = _pascal(node_type)
    return out


@dataclass(frozen=True)
class Loaded:
    written: int
    # Relationship types the files only imply, left as an earlier load defined them outright.
    kept: list[str]
    # Entries an operator loaded, which a migration's load of the bundled schemas leaves as they are.
    operators: list[str] = dataclasses.field(default_factory=list)


async def load_into_graph(backend: GraphBackend, entries: list[EntrySource], *, bundled: bool = False) -> Loaded:
    """Back each allowed label's identity (`_key`, whatever its merge keys) with an index, and a unique
    constraint where the engine has a safe one, and its search text with a full-text index, first; then write
    the entries in one statement, so a gate that sees the new registry finds its indexes in place. A
    relationship type the files only imply (from a seed-format relationship property) does not replace one the
    graph's registry defines outright: its absorbs and endpoint labels stay, as they do when both come in one
    load."""
    implied = [e.name for e in entries if e.derived]
    kept: list[str] = []
    if implied:
        kept = [row["name"] for row in await backend.read(defined_schema_entries(implied))]
        entries = [e for e in entries if not (e.derived and e.name in kept)]
    operators: list[str] = []
    if bundled:  # a migration's load (an upgrade's, say) never replaces what an operator loaded
        operators = [row["name"] for row in await backend.read(operator_schema_entries([e.name for e in entries]))]
        entries = [e for e in entries if e.name not in operators]
    for entry in entries:
        if entry.kind == "node" and entry.allowed:
            await backend.ensure_unique(entry.name, KEY_FIELD)
            await backend.ensure_text_index(entry.name)
        if entry.allowed:  # the statistics' fold finds what a write changed by it (core/stat_counts.py)
            await backend.ensure_index(entry.name, DUE, relationship=entry.kind != "node")
    origin = BUNDLED if bundled else OPERATOR
    await backend.write(
        upsert_schema_entries([{**e.to_node_properties(), "origin": origin} for e in entries], utc_now())
    )
    return Loaded(len(entries), kept, operators)
