"""The gate's pure decisions: validate, resolve labels, check the schema, compile one statement.

No I/O here: each function takes a registry snapshot and the request and either returns
what to run or raises `GateRejection`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.cypher.writes import write_node, write_relationship
from write_gate.core.formula import FormulaProvider, compute_confidence
from write_gate.core.identifiers import (
    PROTECTED_FIELDS,
    PROTECTED_RELATIONSHIP_FIELDS,
    as_identifier,
    normalize_identifier,
    remap_breadcrumb,
)
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE, knowledge_values
from write_gate.core.model import (
    ErrorCode,
    GateRejection,
    NodeWritten,
    RelationshipWritten,
    WriteNodeRequest,
    WriteRelationshipRequest,
)
from write_gate.core.properties import Renamed, effective_policy, remap_texts, resolve_property_names
from write_gate.core.registry import ConflictPolicy, SchemaEntry, SchemaRegistry, UndeclaredPolicy
from write_gate.core.values import Limits, check_protected, check_source, clean_map


class UnknownLabelPolicy(StrEnum):
    REMAP = "remap"
    REJECT = "reject"


@dataclass(frozen=True)
class Policy:
    unknown_labels: UnknownLabelPolicy = UnknownLabelPolicy.REMAP
    fallback_override: str | None = None
    limits: Limits = Limits()
    # For entries that name no policy of their own (WRITE_GATE_UNDECLARED_PROPERTY_POLICY).
    undeclared_properties: UndeclaredPolicy = UndeclaredPolicy.ALLOW
    # For entries and properties that name no conflict policy of their own (WRITE_GATE_CONFLICT_POLICY).
    conflicts: ConflictPolicy = ConflictPolicy.LAST_WRITER_WINS
    # Half-lives in days by extraction method, for entries with none of their own (WRITE_GATE_DECAY_HALF_LIFE_DAYS).
    half_life_by_method: Mapping[str, float] = field(default_factory=dict)
    # Days the change history keeps a record (WRITE_GATE_HISTORY_RETENTION_DAYS); None keeps every record.
    history_retention_days: float | None = None
    # The hierarchy's child -> parent type (WRITE_GATE_HIERARCHY_TYPE): every write of it keeps one parent per
    # child and no cycle (core/cypher/hierarchy.py).
    hierarchy_type: str = DEFAULT_HIERARCHY_TYPE


def property_names(
    entry: SchemaEntry,
    cleaned: tuple[dict[str, Any], dict[str, str]],
    what: str,
    policy: Policy,
    *,
    protected: frozenset[str] = PROTECTED_FIELDS,
    also_declared: frozenset[str] = frozenset(),
) -> Renamed:
    """A map `clean_map` passed, with its names as the entry declares them, under the entry's policy (see
    core/properties.py)."""
    values, kinds = cleaned
    return resolve_property_names(
        entry,
        values,
        kinds,
        effective_policy(entry, policy.undeclared_properties),
        what=what,
        protected=protected,
        also_declared=also_declared,
    )


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Resolved:
    entry: SchemaEntry
    remapped_from: str | None  # the breadcrumb, ':' + the label as written


def _as_written(entry: SchemaEntry, raw: str, free_text: bool) -> Resolved:
    """A canonical name matched. Free text that only reads as it (" Person ", "KNOWS ") keeps its spelling in
    the breadcrumb, as any other remap does, so the type as written is never lost."""
    breadcrumb = remap_breadcrumb(raw)
    return Resolved(entry, breadcrumb if free_text and breadcrumb != ":" + entry.label else None)


def resolve_label(
    raw: str, registry: SchemaRegistry, policy: Policy, *, free_text: bool = False, field: str = "label"
) -> Resolved:
    """Canonical label -> itself; absorbed or case-drifted label -> its target; unknown -> policy.

    `free_text` (the memory profile's entityType): any text, read as an identifier where it can be; text
    with none in it is an unknown label. The breadcrumb keeps the text as written, so it stays searchable.
    `field`: the argument a label that is no identifier is refused as (`from_label`)."""
    label = as_identifier(raw) if free_text else normalize_identifier(raw, field)
    if label is not None and (entry := registry.get_entry(label)) is not None:
        return _as_written(entry, raw, free_text)
    target = registry.remap_target(label) if label is not None else None
    if target is None and policy.unknown_labels is UnknownLabelPolicy.REMAP:
        target = policy.fallback_override or registry.fallback_label()
    entry = registry.get_entry(target) if target else None
    if entry is None:
        if policy.unknown_labels is not UnknownLabelPolicy.REMAP:
            why = "unknown labels are rejected (WRITE_GATE_UNKNOWN_LABEL_POLICY=reject)"
        elif policy.fallback_override:
            why = f"the fallback label it would go to, {policy.fallback_override} (WRITE_GATE_FALLBACK_LABEL), is not"
        else:
            why = "the registry has no fallback label"
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"label {label or raw!r} is not registered and {why}",
            label=label or raw,
            known_labels=registry.all_canonical_labels(),
        )
    return Resolved(entry, remap_breadcrumb(raw))


def unregistered(
    raw: str, registry: SchemaRegistry, *, relationship: bool = False, free_text: bool = False
) -> str | None:
    """The name a call gives, as an identifier, where the registry neither holds it nor remaps it to one it
    holds (what would go to the fallback label, or be refused); None otherwise, and for text that is no
    identifier (planning refuses that, or files it under the fallback)."""
    try:
        name = normalize_identifier(raw, "label")
    except GateRejection:
        return None
    if relationship:
        known = registry.get_relationship(name) or registry.relationship_remap_target(name)
    else:
        known = registry.get_entry(name) or registry.remap_target(name)
    return None if known else name


def resolve_relationship_type(raw: str, registry: SchemaRegistry, *, free_text: bool = False) -> Resolved:
    """Types remap only through an explicit `absorbs` (or case drift); there is no fallback type."""
    type_ = as_identifier(raw) if free_text else normalize_identifier(raw, "type")
    if type_ is not None and (entry := registry.get_relationship(type_)) is not None:
        return _as_written(entry, raw, free_text)
    target = registry.relationship_remap_target(type_) if type_ is not None else None
    entry = registry.get_relationship(target) if target else None
    if entry is None:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"relationship type {type_ or raw!r} is not registered",
            type=type_ or raw,
            known_types=registry.all_relationship_types(),
        )
    return Resolved(entry, remap_breadcrumb(raw))


def check_required(entry: SchemaEntry, *present: Mapping[str, Any]) -> None:
    have = {key for m in present for key in m}
    missing = [p for p in entry.required_properties if p not in have]
    if missing:
        raise GateRejection(
            ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
            f"{entry.label} requires {', '.join(missing)}",
            label=entry.label,
            missing=missing,
        )


def check_merge_keys(
    entry: SchemaEntry, keys: Mapping[str, Any], what: str, properties: Mapping[str, Any] | None = None
) -> None:
    """Identity must be the entry's declared merge keys, or a MERGE would make a second node. A declared key given
    in `properties` instead is present, so not SCHEMA_MISSING_REQUIRED_PROPERTY: the call is told where it goes."""
    if not keys and not any(properties is not None and k in properties for k in entry.merge_keys):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{what} must name at least one identity property"
            + (f" ({', '.join(entry.merge_keys)} for {entry.label})" if entry.merge_keys else ""),
            field=what,
        )
    if not entry.merge_keys:
        return
    missing = [k for k in entry.merge_keys if k not in keys]
    misplaced = [k for k in missing if properties is not None and k in properties]
    if misplaced:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{', '.join(misplaced)} is the identity of {entry.label}: give it in {what}, not in properties",
            reason="identity_in_properties",
            label=entry.label,
            merge_keys=list(entry.merge_keys),
            misplaced=misplaced,
            field=what,
        )
    if missing:
        raise GateRejection(
            ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
            f"{what} for {entry.label} must include {', '.join(missing)}",
            label=entry.label,
            missing=missing,
            field=what,
        )
    extra = [k for k in keys if k not in entry.merge_keys]
    if extra:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{', '.join(extra)} is not an identity key of {entry.label}; put it in properties",
            label=entry.label,
            merge_keys=list(entry.merge_keys),
            field=what,
        )


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def without_identity(merge_keys: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """Merge keys are identity: a property may repeat one unchanged (it is then dropped), but not change its
    value or its type, under any spelling (`Name`, `::name`), or one write would turn Bob into a second Alice."""
    by_fold = {key.casefold(): key for key in merge_keys}
    kept: dict[str, Any] = {}
    clashes: list[str] = []
    for key, value in properties.items():
        identity = by_fold.get(key.casefold())
        if identity is None:
            kept[key] = value
        elif key != identity or not _same(value, merge_keys[identity]):
            clashes.append(key)
    if clashes:
        raise GateRejection(
            ErrorCode.SCHEMA_PROTECTED_FIELD,
            f"{', '.join(clashes)} would change the node's identity; only merge_keys set " + ", ".join(merge_keys),
            fields=clashes,
            reason="merge_key",
            merge_keys=list(merge_keys),
        )
    return kept


def check_types(entry: SchemaEntry, values: Mapping[str, Any], kinds: Mapping[str, str]) -> None:
    for key in values:
        kind = kinds[key]
        declared = entry.property_types.get(key)
        if declared is None:
            continue
        if not declared.accepts_kind(kind):
            raise GateRejection(
                ErrorCode.SCHEMA_TYPE_MISMATCH,
                f"{entry.label}.{key} must be {declared.describe()}, not {kind}",
                label=entry.label,
                property=key,
                expected=declared.describe(),
                got=kind,
            )
        if declared.enum is not None:
            items = values[key] if isinstance(values[key], list) else [values[key]]
            bad = [v for v in items if v not in declared.enum]
            if bad:
                raise GateRejection(
                    ErrorCode.SCHEMA_TYPE_MISMATCH,
                    f"{entry.label}.{key} must be one of the allowed values",
                    label=entry.label,
                    property=key,
                    allowed=list(declared.enum),
                )


@dataclass(frozen=True)
class Stamp:
    """What the gate adds to every write besides the confidence."""

    version: str
    now: str  # ISO-8601 UTC, millisecond precision
    written_by: str


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class NodePlan:
    statement: Statement
    result: NodeWritten
    properties: Mapping[str, Any]
    provenance: Provenance


def plan_node_write(
    req: WriteNodeRequest,
    registry: SchemaRegistry,
    policy: Policy,
    provider: FormulaProvider,
    stamp: Stamp,
    *,
    dialect: Dialect | None = None,
    free_text_label: bool = False,
    also_declared: frozenset[str] = frozenset(),
    partial: bool = False,
) -> NodePlan:
    """`dialect`: the engine's, to compile the plan's own statement; None for callers that write plans in a statement
    of their own (batches, the deciding writes);
    `free_text_label` for the memory profile, whose types are any text; `also_declared`, property names a
    profile writes on every node whatever the entry declares (its `observations`); `partial`, a change to some
    properties of a node that exists (its required ones were checked when it was written)."""
    check_protected(req.properties, req.merge_keys)
    raw_keys = clean_map(req.merge_keys, "merge_keys", policy.limits)
    raw_props = clean_map(req.properties, "properties", policy.limits)
    resolved = resolve_label(req.label, registry, policy, free_text=free_text_label)
    entry = resolved.entry
    keys = property_names(entry, raw_keys, "merge_keys", policy, also_declared=also_declared)
    props = property_names(entry, raw_props, "properties", policy, also_declared=also_declared)
    merge_keys, key_kinds, prop_kinds = keys.values, keys.kinds, props.kinds
    properties = knowledge_values(without_identity(merge_keys, props.values), "properties", entry.property_types)
    remaps = keys.remaps + props.remaps
    if not partial:
        check_required(entry, properties, merge_keys)
    check_merge_keys(entry, merge_keys, "merge_keys", props.values)
    check_types(entry, merge_keys, key_kinds)
    check_types(entry, properties, prop_kinds)
    confidence = compute_confidence(provider, req.reliability, req.extraction_method)
    check_source(req.source, policy.limits)
    provenance = Provenance(confidence, req.source, req.extraction_method, stamp.version, stamp.now, stamp.written_by)
    statement = (
        write_node(entry.label, merge_keys, properties, provenance, resolved.remapped_from, remaps, dialect=dialect)
        if dialect is not None
        else Statement("")
    )
    result = NodeWritten(
        label=entry.label,
        merge_keys=merge_keys,
        confidence=confidence,
        write_gate_version=stamp.version,
        remapped_from=resolved.remapped_from,
        property_remaps=list(remaps),
    )
    return NodePlan(statement, result, properties, provenance)


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class RelationshipPlan:
    statement: Statement
    start: Endpoint
    end: Endpoint
    merge_endpoints: bool
    result: RelationshipWritten
    properties: Mapping[str, Any]
    provenance: Provenance
    property_remaps: tuple[str, ...] = ()  # of its own properties: the relationship's breadcrumb


def _endpoint(
    raw_label: str,
    raw_keys: Mapping[str, Any],
    side: str,
    allowed: tuple[str, ...],
    registry: SchemaRegistry,
    policy: Policy,
) -> tuple[Endpoint, list[str]]:
    """The endpoint, and the remaps its keys needed (`from_keys.Name→name`)."""
    what = f"{side}_keys"
    cleaned = clean_map(raw_keys, what, policy.limits)
    resolved = resolve_label(raw_label, registry, policy, field=f"{side}_label")
    entry = resolved.entry
    if allowed and entry.label not in allowed:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_LABEL,
            f"this relationship type does not allow :{entry.label} as its {side} endpoint",
            reason="endpoint_label_not_allowed",
            endpoint=side,
            label=entry.label,
            allowed=list(allowed),
        )
    renamed = property_names(entry, cleaned, what, policy)
    check_merge_keys(entry, renamed.values, what)
    return Endpoint(entry.label, renamed.values, resolved.remapped_from), remap_texts(what, renamed.remaps)


def plan_relationship_write(
    req: WriteRelationshipRequest,
    registry: SchemaRegistry,
    policy: Policy,
    provider: FormulaProvider,
    stamp: Stamp,
    *,
    free_text_type: bool = False,
) -> RelationshipPlan:
    check_protected(req.from_keys, req.to_keys)
    check_protected(req.properties, protected_fields=PROTECTED_RELATIONSHIP_FIELDS)
    cleaned = clean_map(req.properties, "properties", policy.limits)
    resolved = resolve_relationship_type(req.type, registry, free_text=free_text_type)
    entry = resolved.entry
    renamed = property_names(entry, cleaned, "properties", policy, protected=PROTECTED_RELATIONSHIP_FIELDS)
    properties, prop_kinds = renamed.values, renamed.kinds
    start, from_remaps = _endpoint(req.from_label, req.from_keys, "from", entry.from_labels, registry, policy)
    end, to_remaps = _endpoint(req.to_label, req.to_keys, "to", entry.to_labels, registry, policy)
    check_required(entry, properties)
    check_types(entry, properties, prop_kinds)
    confidence = compute_confidence(provider, req.reliability, req.extraction_method)
    check_source(req.source, policy.limits)
    provenance = Provenance(confidence, req.source, req.extraction_method, stamp.version, stamp.now, stamp.written_by)
    merge_endpoints = req.endpoint_policy == "merge_endpoints"
    statement = write_relationship(
        entry.label,
        start,
        end,
        properties,
        provenance,
        resolved.remapped_from,
        merge_endpoints,
        req.weight,
        renamed.remaps,
    )
    result = RelationshipWritten(
        type=entry.label,
        from_label=start.label,
        from_keys=dict(start.keys),
        to_label=end.label,
        to_keys=dict(end.keys),
        confidence=confidence,
        write_gate_version=stamp.version,
        remapped_from=resolved.remapped_from,
        property_remaps=[*renamed.remaps, *from_remaps, *to_remaps],
    )
    return RelationshipPlan(statement, start, end, merge_endpoints, result, properties, provenance, renamed.remaps)
