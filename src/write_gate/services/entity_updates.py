"""Changing some properties of an entity that exists, through the gate: the registry's checks (types, names),
the agent's grant, computed provenance and value claims, the conflict policies, history records, and the
guarded-write retry. The new values are decided from the node as read (`change`), so two writers adding tags at
once both land: the one that lost the race reads again and decides on the other's result."""

from collections.abc import Callable, Mapping
from typing import Any

from write_gate.access.agents import Agent
from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.entity_updates import update_node
from write_gate.core.decisions import plan_node_write
from write_gate.core.history import Subject
from write_gate.core.knowledge import KNOWLEDGE_PROPERTIES
from write_gate.core.model import WriteNodeRequest
from write_gate.services.entities import Located, not_found
from write_gate.services.gate import MAX_ATTEMPTS, Gate, Planned, backoff, contention, run_write
from write_gate.services.memory import WriterContext

Change = Callable[[Mapping[str, Any]], dict[str, Any]]


async def update_entity(
    gate: Gate,
    target: Located,
    change: Change,
    ctx: WriterContext,
    agent: Agent,
    *,
    also_declared: frozenset[str] = KNOWLEDGE_PROPERTIES,
) -> dict[str, Any]:
    """The entity's properties after the change (unchanged, and nothing written, when `change` changes nothing);
    a null in the change removes that property (checked by the conflict policies and recorded as any change).
    `also_declared`: the properties the change may set whatever the label's entry declares."""
    agent.grant.check_labels([target.label])
    for attempt in range(MAX_ATTEMPTS):
        await backoff(attempt)
        current = await gate.current_node(target.label, target.key)
        if current is None or current.get(ALIAS_OF) is not None:
            raise not_found(target.name)  # deleted, or merged away, since it was found
        wanted = change(current)
        if all(current.get(name) == value for name, value in wanted.items()):
            return dict(current)
        keys = target.keys
        removed = {name: None for name, value in wanted.items() if value is None}  # a null removes the property
        request = WriteNodeRequest(
            label=target.label,
            merge_keys=keys,
            properties={name: value for name, value in wanted.items() if value is not None},
            source=ctx.source,
            extraction_method=ctx.extraction_method,
            reliability=ctx.reliability,
        )
        plan = plan_node_write(
            request,
            gate.registry,
            gate.policy,
            gate.provider,
            gate.stamp(agent),
            also_declared=also_declared,
            partial=True,
        )
        guarded = gate.guard(
            Subject.node(target.label, target.key),
            gate.registry.get_entry(target.label),
            current,
            Planned({**plan.properties, **removed}, keys, plan.provenance),
        )
        statement = update_node(
            target.label, target.key, guarded.write, plan.provenance, guarded.as_guard(False), gate.backend.dialect
        )
        rows = await run_write(gate.backend, statement)
        if rows and rows[0]["written"]:
            return {**current, **guarded.write}
    raise contention()
