"""Seed 004's hierarchy (memory-mcp's tools): `set_entity_parent` through the gate, and the reads `get_parent`,
`get_children`, `get_ancestors` (nearest first), `get_descendants` (depth first) and `get_subtree` (the entity
and its descendants, answered as open_nodes answers). Archived entities are left out unless asked for."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from write_gate.access.agents import Agent
from write_gate.core.cypher import hierarchy as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import plan_relationship_write, resolve_relationship_type
from write_gate.core.history import Subject
from write_gate.core.knowledge import depth_first
from write_gate.core.model import GateRejection, WriteRelationshipRequest
from write_gate.engines import Row
from write_gate.services.change_records import change_stamp, created_changes
from write_gate.services.entities import EntityType, Located, locate, not_found
from write_gate.services.gate import Gate, run_write
from write_gate.services.hierarchy_rule import hierarchy_cycle
from write_gate.services.memory import WriterContext
from write_gate.services.reads import (
    DEFAULT_RELATIONS_LIMIT,
    Entity,
    GraphResult,
    IncludeArchived,
    Text,
    first_parents,
    to_entity,
)


@dataclass(frozen=True)
class HierarchySettings:
    type_: str  # WRITE_GATE_HIERARCHY_TYPE
    max_depth: int  # WRITE_GATE_HIERARCHY_MAX_DEPTH


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


EntityName = Annotated[Text, Field(description="The entity's name.")]


class SetParentRequest(_Request):
    entityName: EntityName  # noqa: N815 - memory-mcp's argument names
    parentName: Annotated[  # noqa: N815
        Text | None, Field(description="The parent's name; null (or empty) removes the parent.")
    ]
    entityType: EntityType = None  # noqa: N815
    parentType: Annotated[Text | SkipJsonSchema[None], Field(description="The parent's label, if ambiguous.")] = None  # noqa: N815

    @field_validator("parentName")
    @classmethod
    def _empty_is_none(cls, name: str | None) -> str | None:
        """memory-mcp reads an empty name as none (`if (parentName && !parent)`, then `parentName || undefined`)."""
        return name or None


class HierarchyRequest(_Request):
    entityName: EntityName  # noqa: N815
    entityType: EntityType = None  # noqa: N815
    includeArchived: IncludeArchived = False  # noqa: N815


class ParentSet(BaseModel):
    entityName: str  # noqa: N815
    entityType: str  # noqa: N815
    parentName: str | None  # noqa: N815
    parentType: str | None  # noqa: N815


# Each listed entity's parent's name, for memory-mcp's `parentId` (its answer's text): not in the structured answer.
ParentNames = Annotated[list[str | None], Field(default_factory=list, exclude=True), SkipJsonSchema()]


class Parent(BaseModel):
    parent: Entity | None
    parent_names: ParentNames  # the parent's own parent's, where it has one


class Children(BaseModel):
    children: list[Entity]
    parent_names: ParentNames


class Ancestors(BaseModel):
    ancestors: list[Entity] = Field(description="Nearest first.")
    depth_truncated: bool = False
    parent_names: ParentNames


class Descendants(BaseModel):
    descendants: list[Entity] = Field(description="Depth first.")
    depth_truncated: bool = False
    parent_names: ParentNames


class Subtree(GraphResult):
    depth_truncated: bool = False


# --- set_entity_parent ------------------------------------------------------------------------------------


def _hierarchy_type(gate: Gate, hierarchy: HierarchySettings) -> str:
    """The registered hierarchy type; else the registry's refusal, saying how to register it."""
    try:
        return resolve_relationship_type(hierarchy.type_, gate.registry).entry.label
    except GateRejection as exc:
        rejected = exc.rejected
        how = (
            f'; register it ({{"name": "{hierarchy.type_}", "kind": "relationship"}} in a schema file, '
            "then `write-gate schema load`) or name a registered type in WRITE_GATE_HIERARCHY_TYPE"
        )
        raise GateRejection(rejected.error_code, rejected.message + how, **rejected.details) from exc


async def set_entity_parent(
    gate: Gate, hierarchy: HierarchySettings, request: SetParentRequest, ctx: WriterContext, agent: Agent
) -> ParentSet:
    child = await locate(gate, request.entityName, request.entityType)
    type_ = _hierarchy_type(gate, hierarchy)
    agent.grant.check_types([type_])
    change = change_stamp(agent.id)
    if request.parentName is None:
        statement = cypher.remove_parent(type_, child.label)
        await run_write(gate.backend, Statement(statement.text, {"child_key": child.key, **change.params()}))
        return ParentSet(entityName=child.name, entityType=child.label, parentName=None, parentType=None)
    parent = await locate(gate, request.parentName, request.parentType, field="parentName")
    if parent.id == child.id:
        raise hierarchy_cycle("parentName")
    if [row["id"] for row in await _related(gate, cypher.parents(type_), child.id)] == [parent.id]:
        return _answer(child, parent)  # already so: nothing changes, nothing is recorded
    plan = plan_relationship_write(
        WriteRelationshipRequest(
            type=type_,
            from_label=child.label,
            from_keys=child.keys,
            to_label=parent.label,
            to_keys=parent.keys,
            source=ctx.source,
            extraction_method=ctx.extraction_method,
            reliability=ctx.reliability,
        ),
        gate.registry,
        gate.policy,
        gate.provider,
        gate.stamp(agent),
    )
    subject = Subject.relationship(type_, child.label, child.key, parent.label, parent.key)
    changes = created_changes(subject, {**plan.properties, "weight": 1.0}, change, plan.provenance)
    params = {
        "child_key": child.key,
        "parent_key": parent.key,
        "properties": dict(plan.properties),
        "changes": changes,
        **plan.provenance.params(),
        **change.params(),
    }
    rows = await run_write(gate.backend, Statement(cypher.set_parent(type_, child.label, parent.label).text, params))
    if rows and rows[0]["written"]:
        return _answer(child, parent)
    cycle = await gate.reader.read(Statement(cypher.would_cycle(type_).text, {"child": child.id, "parent": parent.id}))
    if cycle and cycle[0]["cycle"]:
        raise hierarchy_cycle("parentName")
    raise not_found(request.entityName)  # one of them was deleted or merged away meanwhile


def _answer(child: Located, parent: Located) -> ParentSet:
    return ParentSet(entityName=child.name, entityType=child.label, parentName=parent.name, parentType=parent.label)


# --- reads ------------------------------------------------------------------------------------------------


async def _related(gate: Gate, statement: Statement, node_id: int) -> list[Row]:
    return await gate.reader.read(Statement(statement.text, {"id": node_id}))


def _shown(rows: Sequence[Row], include_archived: bool) -> list[Row]:
    """Each node once (the first row for it), archived ones only when asked."""
    seen: dict[int, Row] = {}
    for row in rows:
        if include_archived or not row["archived"]:
            seen.setdefault(row["id"], row)
    return list(seen.values())


def _entities(rows: Sequence[Row]) -> list[Entity]:
    return [to_entity(row["labels"], row["props"]) for row in rows]


async def get_parent(gate: Gate, hierarchy: HierarchySettings, request: HierarchyRequest) -> Parent:
    node = await locate(gate, request.entityName, request.entityType)
    rows = _shown(await _related(gate, cypher.parents(hierarchy.type_), node.id), request.includeArchived)
    if not rows:
        return Parent(parent=None, parent_names=[])
    parent = rows[0]
    # Its own parent's name, as the reads give an entity's (memory-mcp's `parentId`): one more read, by id.
    asked = {"ids": [parent["id"]], "include_archived": request.includeArchived}
    links = await gate.reader.read(Statement(cypher.parent_names(hierarchy.type_).text, asked))
    up = first_parents((row["id"], row["parent"], row["name"]) for row in links).get(parent["id"])
    return Parent(parent=_entities([parent])[0], parent_names=[up])


async def get_children(gate: Gate, hierarchy: HierarchySettings, request: HierarchyRequest) -> Children:
    node = await locate(gate, request.entityName, request.entityType)
    rows = _shown(await _related(gate, cypher.children(hierarchy.type_), node.id), request.includeArchived)
    children = _entities(rows)  # in creation order (the statement's, by id), as memory-mcp filters its list
    return Children(children=children, parent_names=[node.name] * len(children))


async def get_ancestors(gate: Gate, hierarchy: HierarchySettings, request: HierarchyRequest) -> Ancestors:
    node = await locate(gate, request.entityName, request.entityType)
    rows = await _related(gate, cypher.ancestors(hierarchy.type_, hierarchy.max_depth), node.id)
    kept = [row for row in rows if row["depth"] <= hierarchy.max_depth]
    shown = _shown(kept, request.includeArchived)
    by_depth = {row["depth"]: row["props"].get("name") for row in rows}  # one parent each: a chain
    return Ancestors(
        ancestors=_entities(shown),
        depth_truncated=len(kept) < len(rows),
        parent_names=[by_depth.get(row["depth"] + 1) for row in shown],
    )


async def _descendant_rows(
    gate: Gate, hierarchy: HierarchySettings, node: Located, include_archived: bool
) -> tuple[list[Row], bool]:
    rows = await _related(gate, cypher.descendants(hierarchy.type_, hierarchy.max_depth), node.id)
    kept = [row for row in rows if row["depth"] <= hierarchy.max_depth]
    return _shown(depth_first(kept), include_archived), len(kept) < len(rows)


async def get_descendants(gate: Gate, hierarchy: HierarchySettings, request: HierarchyRequest) -> Descendants:
    node = await locate(gate, request.entityName, request.entityType)
    rows, truncated = await _descendant_rows(gate, hierarchy, node, request.includeArchived)
    parents = [row["path_names"][1] if isinstance(row["path_names"][1], str) else None for row in rows]
    return Descendants(descendants=_entities(rows), depth_truncated=truncated, parent_names=parents)


async def get_subtree(gate: Gate, hierarchy: HierarchySettings, request: HierarchyRequest) -> Subtree:
    node = await locate(gate, request.entityName, request.entityType)
    rows, truncated = await _descendant_rows(gate, hierarchy, node, request.includeArchived)
    ids = [node.id, *(row["id"] for row in rows)]
    expanded = await gate.reader.expand(
        ids, DEFAULT_RELATIONS_LIMIT, outgoing_only=False, include_archived=request.includeArchived
    )
    result = expanded.result
    return Subtree(
        entities=result.entities, relations=result.relations, truncated=result.truncated, depth_truncated=truncated
    )
