"""The memory profile's memory-mcp tools answer their text as memory-mcp does (seed 004's return types): an agent or
a client written for it parses `content[0].text` as the array or the entity it returns. The structured content
is the gate's answer, as in every profile (paging, scores, the pairs behind the groups). find_duplicates also
scores pairs as memory-mcp does (`core.entity_similarity`), so the groups are the ones memory-mcp finds."""

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from write_gate.core.knowledge import memory_mcp_stamps
from write_gate.services.hierarchy import Ancestors, Children, Descendants, Parent, ParentSet
from write_gate.services.memory_mcp_search import boolean_search, fuzzy_search
from write_gate.services.reads import Entity, OpenNodesRequest
from write_gate.services.resolution import DuplicatesFound, EntitiesMerged, FindDuplicatesRequest, find_duplicates
from write_gate.services.search import RankedResult
from write_gate.surface.gate_tools import FIND_DUPLICATES, MERGE_ENTITIES, SEARCH_NODES_RANKED
from write_gate.surface.knowledge_tools import (
    GET_ANCESTORS,
    GET_CHILDREN,
    GET_DESCENDANTS,
    GET_PARENT,
    SET_ENTITY_PARENT,
)
from write_gate.surface.memory_mcp_search_tools import BOOLEAN_SEARCH, FUZZY_SEARCH
from write_gate.surface.tool_spec import Call, Services, ToolSpec


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _dumped(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True)


def _entity(entity: Entity) -> dict[str, Any]:
    """memory-mcp's Entity: the entity as read, with its `createdAt` and `lastModified` where it holds them."""
    return {**_dumped(entity), **memory_mcp_stamps(entity.properties)}


def _ranked(result: RankedResult) -> str:
    """SearchResult[] { entity, score, matchedFields }, best first."""
    hits = [{"entity": _entity(h.entity), "score": h.score, "matchedFields": h.matched_fields} for h in result.results]
    return _json(hits)


def _groups(result: DuplicatesFound) -> str:
    """string[][]: the groups of duplicate names."""
    return _json(result.groups)


def _merged(result: EntitiesMerged) -> str:
    """Entity: the merged entity (a merge named by addresses, the gate's own form, answers the whole result)."""
    return _json(_entity(result.entity) if result.entity is not None else _dumped(result))


def _parent(result: Parent) -> str:
    """Entity | null: the parent, with its own `parentId` where it has one, or null for a root."""
    if result.parent is None:
        return _json(None)
    return _json(_with_parent(_entity(result.parent), next(iter(result.parent_names), None)))


def _entities(field: str) -> Callable[[Children | Ancestors | Descendants], str]:
    """Entity[]: the list the answer holds under `field`, each with memory-mcp's `parentId` (its parent's name)."""

    def text(result: Children | Ancestors | Descendants) -> str:
        entities, parents = getattr(result, field), result.parent_names
        return _json([_with_parent(_entity(e), parent) for e, parent in zip(entities, parents, strict=True)])

    return text


async def _find_duplicates(services: Services, request: FindDuplicatesRequest, _call: Call) -> DuplicatesFound:
    return await find_duplicates(services.gate, request, memory_mcp=True)


class ParentSetEntity(ParentSet):
    """set_entity_parent's answer, and the entity it moved for the text (not in the structured answer)."""

    entity: Entity | None = Field(default=None, exclude=True)


async def _set_parent(services: Services, request: Any, call: Call) -> ParentSetEntity:
    """The parent set, then the entity read back (one name, one label: a bounded read) for memory-mcp's answer."""
    answer = await SET_ENTITY_PARENT.handler(services, request, call)
    assert isinstance(answer, ParentSet)
    # An engine that fails this read answers the failure, though the parent was set: setting it again is harmless.
    page = await services.gate.reader.open_nodes(OpenNodesRequest(names=[answer.entityName], relations_limit=1))
    entity = next((e for e in page.entities if e.entityType == answer.entityType), None)
    return ParentSetEntity(**answer.model_dump(), entity=entity)


def _entity_with_parent(result: ParentSetEntity) -> str:
    """Entity: the entity, with memory-mcp's `parentId` (none once its parent is removed)."""
    if result.entity is None:  # gone between the write and the read: the answer as the gate gives it
        return _json(_dumped(result))
    return _json(_with_parent(_entity(result.entity), result.parentName))


def _with_parent(entity: dict[str, Any], parent: str | None) -> dict[str, Any]:
    """memory-mcp's entity with its `parentId`, which it leaves out where there is none (`parentName ||
    undefined`, seed 004), rather than null."""
    return {**entity, "parentId": parent} if parent is not None else entity


def _as_memory_mcp(spec: ToolSpec, text: Callable[[Any], str]) -> ToolSpec:
    return replace(spec, text=text)


MEMORY_MCP_ANSWERS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        replace(
            SEARCH_NODES_RANKED,
            handler=lambda s, req, _call: s.gate.searcher.search(req, parent_type=s.hierarchy.type_),
            text=_ranked,
        ),
        # memory-mcp's searches answer each entity with its parent's name, as the memory profile's reads do.
        replace(BOOLEAN_SEARCH, handler=lambda s, req, _call: boolean_search(s.gate.searcher, req, s.hierarchy.type_)),
        replace(FUZZY_SEARCH, handler=lambda s, req, _call: fuzzy_search(s.gate.searcher, req, s.hierarchy.type_)),
        replace(
            FIND_DUPLICATES,
            description="Likely duplicate entities of one type, as groups of names, each pair scored 0-1 as "
            "memory-mcp scores it: name 0.4, type 0.3, observations 0.2, tags 0.1.",
            handler=_find_duplicates,
            text=_groups,
        ),
        _as_memory_mcp(MERGE_ENTITIES, _merged),
        replace(SET_ENTITY_PARENT, handler=_set_parent, text=_entity_with_parent),
        _as_memory_mcp(GET_PARENT, _parent),
        _as_memory_mcp(GET_CHILDREN, _entities("children")),
        _as_memory_mcp(GET_ANCESTORS, _entities("ancestors")),
        _as_memory_mcp(GET_DESCENDANTS, _entities("descendants")),
    )
}


def in_memory_mcp_form(specs: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """The specs, each of memory-mcp's tools above answering its text as memory-mcp does."""
    return tuple(MEMORY_MCP_ANSWERS.get(spec.name, spec) for spec in specs)
