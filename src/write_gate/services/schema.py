"""`get_schema` and the schema resources' entries: the registry snapshot in force, the gate's policies for
what entries name none of, and live counts (the view itself is pure: core/schema_view.py)."""

from write_gate.core.cypher.reads import label_count, relationship_count
from write_gate.core.cypher.statement import Statement
from write_gate.core.schema_view import (
    LabelView,
    RelationshipTypeView,
    SchemaView,
    gate_defaults,
    label_view,
    relationship_view,
)
from write_gate.services.gate import Gate


async def _count(gate: Gate, statement: Statement) -> int:
    rows = await gate.reader.read(statement)
    return rows[0]["count"] if rows else 0


async def get_schema(gate: Gate) -> SchemaView:
    registry = gate.registry  # one snapshot for the whole answer
    labels = [registry.get_entry(name) for name in registry.all_canonical_labels()]
    types = [registry.get_relationship(name) for name in registry.all_relationship_types()]
    policy = gate.policy
    return SchemaView(
        node_labels=[label_view(e, await _count(gate, label_count(e.label)), policy) for e in labels if e],
        relationship_types=[
            relationship_view(e, await _count(gate, relationship_count(e.label)), policy) for e in types if e
        ],
        fallback_label=policy.fallback_override or registry.fallback_label(),
        **gate_defaults(policy),
        extraction_methods=sorted(gate.provider.allowed_extraction_methods()),
        write_gate_version=gate.version,
    )


async def entry_view(gate: Gate, name: str) -> LabelView | RelationshipTypeView | None:
    """One node label's or relationship type's entry with its live count; None when neither is registered."""
    registry = gate.registry
    entry = registry.get_entry(name)
    if entry is not None:
        return label_view(entry, await _count(gate, label_count(entry.label)), gate.policy)
    entry = registry.get_relationship(name)
    if entry is not None:
        return relationship_view(entry, await _count(gate, relationship_count(entry.label)), gate.policy)
    return None
