"""The schema registry: entries, the protocol the gate reads through, and an immutable snapshot."""

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

from write_gate.core.identifiers import is_identifier

EntryKind = Literal["node", "relationship"]
SCALAR_TYPES = ("string", "integer", "number", "boolean")


class UndeclaredPolicy(StrEnum):
    """What a write may do with a property name its entry does not declare (core/properties.py decides)."""

    ALLOW = "allow"  # no checks, no remapping
    REMAP = "remap"  # drift of a declared name is remapped to it; other names are kept as written
    REJECT = "reject"  # drift is remapped; any other name is SCHEMA_UNKNOWN_PROPERTY


class ConflictPolicy(StrEnum):
    """What a write does to a value another writer claims (core/conflicts.py decides)."""

    LAST_WRITER_WINS = "last_writer_wins"  # the incoming value is written; the conflict is recorded
    HIGHER_CONFIDENCE_WINS = "higher_confidence_wins"  # written only at an equal or higher effective confidence
    REJECT = "reject"  # the write is refused with CONFLICT
    KEEP_BOTH = "keep_both"  # the current value stays; the incoming one is held beside it, an open conflict


@dataclass(frozen=True)
class RelationshipDef:
    """A property whose value names other nodes: writing it writes a relationship to each of them.
    Without `to_label` (seed 000's `nodeType` is informational and often left out) a target is found by
    its name in whichever label has it."""

    type: str
    to_label: str | None = None
    description: str = ""


@dataclass(frozen=True)
class PropertyType:
    """A declared property: a scalar or an array of one scalar type, optionally an enum; a description
    for the generated tools; and, for relationship properties, the relationship it writes."""

    type: str
    items: str | None = None
    enum: tuple[Any, ...] | None = None
    description: str = ""
    relationship: RelationshipDef | None = None
    # Other spellings of this property that writes remap to it (under the remap and reject policies).
    absorbs: tuple[str, ...] = ()
    # This property's own conflict policy; None: its entry's, else the gate's WRITE_GATE_CONFLICT_POLICY.
    conflict_policy: ConflictPolicy | None = None

    @property
    def many(self) -> bool:
        """An array relationship property: one relationship per item."""
        return self.relationship is not None and self.type == "array"

    def describe(self) -> str:
        return f"array<{self.items}>" if self.type == "array" else self.type

    def accepts_kind(self, kind: str) -> bool:
        """`kind` is what values.value_kind() named the value."""
        if self.type == "array":
            return kind in (f"array<{self.items}>", "array<any>") or (
                self.items == "number" and kind == "array<integer>"
            )
        return kind == self.type or (self.type == "number" and kind == "integer")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.items:
            out["items"] = self.items
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.description:
            out["description"] = self.description
        if self.relationship is not None:
            out["relationship"] = {"type": self.relationship.type}
            if self.relationship.to_label is not None:
                out["relationship"]["to_label"] = self.relationship.to_label
            if self.relationship.description:
                out["relationship"]["description"] = self.relationship.description
        if self.absorbs:
            out["absorbs"] = list(self.absorbs)
        if self.conflict_policy is not None:
            out["conflict_policy"] = self.conflict_policy.value
        return out

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any]) -> "PropertyType":
        """Accept 'integer', 'array<string>' or {'type': 'array', 'items': 'string', 'enum': [...], ...}."""
        if isinstance(spec, str):
            if spec.startswith("array<") and spec.endswith(">"):
                spec = {"type": "array", "items": spec[6:-1]}
            else:
                spec = {"type": spec}
        kind, items = spec.get("type"), spec.get("items")
        if isinstance(items, Mapping):  # JSON-Schema style {"items": {"type": "string"}}
            items = items.get("type")
        if kind == "array":
            if items not in SCALAR_TYPES:
                raise ValueError(f"array items must be one of {SCALAR_TYPES}, not {items!r}")
        elif kind not in SCALAR_TYPES:
            raise ValueError(f"type must be one of {SCALAR_TYPES} or 'array', not {kind!r}")
        enum = spec.get("enum")
        if enum is not None and (not isinstance(enum, list) or not enum):
            raise ValueError("enum must be a non-empty list")
        relationship = spec.get("relationship")
        if relationship is not None:
            if not (kind == "string" or (kind == "array" and items == "string")):
                raise ValueError("a relationship property names its targets: its type is string or array of string")
            if (
                not isinstance(relationship, Mapping)
                or not isinstance(relationship.get("type"), str)
                or not is_identifier(relationship["type"])
            ):
                raise ValueError("relationship needs 'type', a plain identifier")
            to_label = relationship.get("to_label")
            if to_label is not None and not (isinstance(to_label, str) and is_identifier(to_label)):
                raise ValueError("relationship 'to_label', when given, must be a plain identifier")
            relationship = RelationshipDef(relationship["type"], to_label, str(relationship.get("description", "")))
        absorbs = spec.get("absorbs", [])
        if not isinstance(absorbs, list) or not all(isinstance(a, str) and is_identifier(a) for a in absorbs):
            raise ValueError("absorbs must be a list of plain identifiers")
        conflict_policy = spec.get("conflict_policy")
        if conflict_policy is not None and conflict_policy not in set(ConflictPolicy):
            raise ValueError(f"conflict_policy must be one of {[p.value for p in ConflictPolicy]}")
        return cls(
            type=kind,
            items=items if kind == "array" else None,
            enum=tuple(enum) if enum else None,
            description=str(spec.get("description", "")),
            relationship=relationship,
            absorbs=tuple(dict.fromkeys(absorbs)),
            conflict_policy=ConflictPolicy(conflict_policy) if conflict_policy is not None else None,
        )


@dataclass(frozen=True)
class SchemaEntry:
    """One registered label or relationship type (one `:Schema` node)."""

    label: str
    required_properties: tuple[str, ...] = ()
    remaps_from: tuple[str, ...] = ()
    kind: EntryKind = "node"
    merge_keys: tuple[str, ...] = ()
    property_types: Mapping[str, PropertyType] = field(default_factory=dict)
    fallback: bool = False
    from_labels: tuple[str, ...] = ()
    to_labels: tuple[str, ...] = ()
    description: str = ""
    # The entry's properties are definitions: the gate generates add_/update_/delete_ tools for it.
    typed_tools: bool = False
    # Its typed tools also take properties it does not define (seed 000's `additionalProperties: true`).
    additional_properties: bool = False
    # Its own policy for undeclared property names; None: the gate's WRITE_GATE_UNDECLARED_PROPERTY_POLICY.
    undeclared_properties: UndeclaredPolicy | None = None
    # Its own conflict policy (a property's own overrides it); None: the gate's WRITE_GATE_CONFLICT_POLICY.
    conflict_policy: ConflictPolicy | None = None
    # Claims on its values lose half their confidence every this many days (core/decay.py); None: the
    # extraction method's half-life (WRITE_GATE_DECAY_HALF_LIFE_DAYS), else no decay.
    half_life_days: float | None = None
    # The fields whose text is embedded (issue 38); empty: the name and the observations.
    embed: tuple[str, ...] = ()

    def conflict_policy_of(self, prop: str, default: ConflictPolicy) -> ConflictPolicy:
        spec = self.property_types.get(prop)
        return (spec.conflict_policy if spec else None) or self.conflict_policy or default


class SchemaRegistry(Protocol):
    """Seed 003's registry protocol, extended with relationship types (DESIGN.md: they are registered too)."""

    def get_entry(self, label: str) -> SchemaEntry | None: ...

    def all_canonical_labels(self) -> list[str]: ...

    def remap_target(self, label: str) -> str | None: ...

    def fallback_label(self) -> str | None: ...

    def get_relationship(self, type_: str) -> SchemaEntry | None: ...

    def all_relationship_types(self) -> list[str]: ...

    def relationship_remap_target(self, type_: str) -> str | None: ...


class RegistrySource(Protocol):
    """Where snapshots come from; `refresh_schema_cache` calls `load()` and swaps the result in, and gates
    poll `version()` to notice a change made elsewhere."""

    async def load(self) -> "RegistrySnapshot": ...

    async def version(self) -> int | None: ...

    async def registers_any(self, names: list[str]) -> bool: ...


def _index(entries: Iterable[SchemaEntry]) -> tuple[dict[str, SchemaEntry], dict[str, str], dict[str, str]]:
    """Canonical names, exact absorbs, and a case-folded lookup that catches `PERSON` and `person` drift."""
    by_name = {e.label: e for e in entries}
    absorbs = {alias.lstrip(":"): e.label for e in by_name.values() for alias in e.remaps_from}
    folded: dict[str, str] = {}
    for alias, target in absorbs.items():
        folded.setdefault(alias.casefold(), target)
    for name in by_name:  # canonical names win over absorbed aliases on a case-folded clash
        folded[name.casefold()] = name
    return by_name, absorbs, folded


class RegistrySnapshot:
    """An immutable view of the registry, built once and swapped in whole by a refresh."""

    def __init__(self, entries: Iterable[SchemaEntry], version: int | None = None) -> None:
        self.version = version  # the registry's version on the graph when this snapshot was read
        entries = list(entries)
        self._nodes, self._node_absorbs, self._node_folded = _index(e for e in entries if e.kind == "node")
        self._rels, self._rel_absorbs, self._rel_folded = _index(e for e in entries if e.kind == "relationship")
        self._fallback = next((e.label for e in entries if e.kind == "node" and e.fallback), None)

    def get_entry(self, label: str) -> SchemaEntry | None:
        return self._nodes.get(label)

    def all_canonical_labels(self) -> list[str]:
        return sorted(self._nodes)

    def remap_target(self, label: str) -> str | None:
        label = label.lstrip(":")
        return self._node_absorbs.get(label) or self._node_folded.get(label.casefold())

    def fallback_label(self) -> str | None:
        return self._fallback

    def get_relationship(self, type_: str) -> SchemaEntry | None:
        return self._rels.get(type_)

    def all_relationship_types(self) -> list[str]:
        return sorted(self._rels)

    def relationship_remap_target(self, type_: str) -> str | None:
        type_ = type_.lstrip(":")
        return self._rel_absorbs.get(type_) or self._rel_folded.get(type_.casefold())

    def __len__(self) -> int:
        return len(self._nodes) + len(self._rels)


class MalformedEntry(ValueError):
    """A `:Schema` node whose constraints cannot be read as written: loading it with them dropped would let
    through the writes they exist to stop, so the entry is left out (its label is then unknown: the fallback
    or a refusal, as the policy says) and the loader says why."""


def _strings(row: Mapping[str, Any], field: str) -> tuple[str, ...]:
    """A list of text; absent or "" is none, and a single text is a list of one (`required_properties: 'serial'`)."""
    value = row.get(field)
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise MalformedEntry(f"{field} must be a list of text, not {value!r}")


def _labels(row: Mapping[str, Any], field: str) -> tuple[str, ...]:
    """Labels, each without the leading ':' a node written by hand may give it (`[':Person']`), as a call's are."""
    return tuple(label.lstrip(":") for label in _strings(row, field))


def _property_types(value: Any) -> dict[str, "PropertyType"]:
    """JSON text of an object (as `schema load` writes it), or a map (an engine that stores maps); absent or ""
    declares none."""
    if value is None or value == "":
        return {}
    try:
        spec = json.loads(value) if isinstance(value, str) else value
        if not isinstance(spec, Mapping):
            raise ValueError("not an object")
        return {k: PropertyType.parse(v) for k, v in spec.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise MalformedEntry(f"property_types cannot be read ({exc})") from exc


def _kind(value: Any) -> EntryKind:
    if value is None or value == "" or value == "node":
        return "node"
    if value == "relationship":
        return "relationship"
    raise MalformedEntry(f"kind must be node or relationship, not {value!r}")


def entry_from_row(row: Mapping[str, Any]) -> SchemaEntry | None:
    """Build an entry from a `:Schema` node's properties. A name that is no identifier is no entry (None);
    constraints that cannot be read raise MalformedEntry; what only describes or tunes an entry (a
    description, flags, policies) falls back to its default when damaged."""
    name = row.get("label")
    if not isinstance(name, str) or not is_identifier(name := name.lstrip(":")):
        return None
    return SchemaEntry(
        label=name,
        required_properties=_strings(row, "required_properties"),
        remaps_from=_strings(row, "remaps_from"),
        kind=_kind(row.get("kind")),
        merge_keys=_strings(row, "merge_keys"),
        property_types=_property_types(row.get("property_types")),
        fallback=row.get("fallback") is True,
        from_labels=_labels(row, "from_labels"),
        to_labels=_labels(row, "to_labels"),
        description=description if isinstance(description := row.get("description"), str) else "",
        typed_tools=row.get("typed_tools") is True,
        additional_properties=row.get("additional_properties") is True,
        undeclared_properties=_policy(row.get("undeclared_properties")),
        conflict_policy=_conflict_policy(row.get("conflict_policy")),
        half_life_days=_half_life(row.get("half_life_days")),
        embed=_strings(row, "embed"),
    )


def entries_from_rows(rows: Iterable[Mapping[str, Any]]) -> tuple[list[SchemaEntry], list[str]]:
    """The entries of these `:Schema` rows, and a line for each row left out (no identifier, or malformed)."""
    entries: list[SchemaEntry] = []
    left_out: list[str] = []
    for row in rows:
        try:
            entry = entry_from_row(row)
        except MalformedEntry as exc:
            left_out.append(f"{row.get('label')}: {exc}")
            continue
        if entry is None:
            left_out.append(f"{row.get('label')!r}: a name that is no plain identifier")
        else:
            entries.append(entry)
    return entries, left_out


def _policy(value: Any) -> UndeclaredPolicy | None:
    """An entry loaded before the policy existed (or one naming none) follows the gate's setting."""
    try:
        return UndeclaredPolicy(value)
    except ValueError:
        return None


def _conflict_policy(value: Any) -> ConflictPolicy | None:
    """ "" (none named) or an entry from before conflict policies: the gate's WRITE_GATE_CONFLICT_POLICY."""
    try:
        return ConflictPolicy(value)
    except ValueError:
        return None


def _half_life(value: Any) -> float | None:
    """A positive number of days; the stored 0 (none named), a node from before half-lives, or anything
    damaged: no half-life of its own."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)
