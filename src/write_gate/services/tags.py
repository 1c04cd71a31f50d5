"""Seed 004's tags and importance: `add_tags`, `remove_tags`, `set_importance`, `add_tags_to_multiple_entities`.
Each answers what the entity's tags (or importance) now are."""

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.knowledge import IMPORTANCE, TAGS, WrittenImportance, normalize_tags, stored_tags
from write_gate.core.knowledge import with_tags as tags_with
from write_gate.core.knowledge import without_tags as tags_without
from write_gate.services.entities import EntityType, Located, locate, locate_every
from write_gate.services.entity_updates import update_entity
from write_gate.services.gate import Gate
from write_gate.services.memory import WriterContext
from write_gate.services.reads import Text


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


EntityName = Annotated[Text, Field(description="The entity's name.")]
Tags = Annotated[list[Text], Field(min_length=1, description="Tags (trimmed, lowercased).")]
Importance = Annotated[WrittenImportance, Field(description="0 to 10.")]


class TagsRequest(_Request):
    entityName: EntityName  # noqa: N815 - memory-mcp's argument names
    tags: Tags
    entityType: EntityType = None  # noqa: N815


class MultipleTagsRequest(_Request):
    entityNames: Annotated[list[Text], Field(min_length=1, description="The entities' names.")]  # noqa: N815
    tags: Tags
    entityType: EntityType = None  # noqa: N815


class ImportanceRequest(_Request):
    entityName: EntityName  # noqa: N815
    importance: Importance
    entityType: EntityType = None  # noqa: N815


class EntityTags(BaseModel):
    entityName: str  # noqa: N815
    entityType: str  # noqa: N815
    tags: list[str]


class MultipleTags(BaseModel):
    results: list[EntityTags]


class EntityImportance(BaseModel):
    entityName: str  # noqa: N815
    entityType: str  # noqa: N815
    importance: float


async def _retag(
    gate: Gate, target: Located, tags: list[str], add: bool, ctx: WriterContext, agent: Agent
) -> EntityTags:
    def change(current: Mapping[str, Any]) -> dict[str, Any]:
        return {TAGS: tags_with(current, tags) if add else tags_without(current, tags)}

    after = await update_entity(gate, target, change, ctx, agent)
    return EntityTags(entityName=target.name, entityType=target.label, tags=stored_tags(after))


async def add_tags(gate: Gate, request: TagsRequest, ctx: WriterContext, agent: Agent) -> EntityTags:
    tags = normalize_tags(request.tags)
    target = await locate(gate, request.entityName, request.entityType)
    return await _retag(gate, target, tags, True, ctx, agent)


async def remove_tags(gate: Gate, request: TagsRequest, ctx: WriterContext, agent: Agent) -> EntityTags:
    tags = normalize_tags(request.tags)
    target = await locate(gate, request.entityName, request.entityType)
    return await _retag(gate, target, tags, False, ctx, agent)


async def add_tags_to_multiple(
    gate: Gate, request: MultipleTagsRequest, ctx: WriterContext, agent: Agent
) -> MultipleTags:
    """Every name is found (and the grant checked) before anything is written: a missing one writes nothing. A name
    held under several labels tags each of them, unless `entityType` names one (the names alone are the
    arguments memory-mcp gives)."""
    tags = normalize_tags(request.tags)
    targets = await locate_every(gate, list(dict.fromkeys(request.entityNames)), request.entityType)
    agent.grant.check_labels([t.label for t in targets])
    return MultipleTags(results=[await _retag(gate, t, tags, True, ctx, agent) for t in targets])


async def set_importance(gate: Gate, request: ImportanceRequest, ctx: WriterContext, agent: Agent) -> EntityImportance:
    target = await locate(gate, request.entityName, request.entityType)
    after = await update_entity(gate, target, lambda _current: {IMPORTANCE: request.importance}, ctx, agent)
    value = after.get(IMPORTANCE)
    importance = float(value) if isinstance(value, int | float) else request.importance
    return EntityImportance(entityName=target.name, entityType=target.label, importance=importance)
