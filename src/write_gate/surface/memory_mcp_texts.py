"""The memory profile's memory-mcp tools answer their text as memory-mcp does (seed 004's return types): an agent or
a client written for it parses `content[0].text` as the array or the entity it returns. The structured content
is the gate's answer, as in every profile (paging, scores, the pairs behind the groups)."""

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from write_gate.services.resolution import DuplicatesFound, EntitiesMerged
from write_gate.services.search import RankedResult
from write_gate.surface.gate_tools import FIND_DUPLICATES, MERGE_ENTITIES, SEARCH_NODES_RANKED
from write_gate.surface.knowledge_tools import GET_ANCESTORS, GET_CHILDREN, GET_DESCENDANTS
from write_gate.surface.tool_spec import ToolSpec


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _dumped(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True)


def _ranked(result: RankedResult) -> str:
    """SearchResult[] { entity, score, matchedFields }, best first."""
    hits = [{"entity": _dumped(h.entity), "score": h.score, "matchedFields": h.matched_fields} for h in result.results]
    return _json(hits)


def _groups(result: DuplicatesFound) -> str:
    """string[][]: the groups of duplicate names."""
    return _json(result.groups)


def _merged(result: EntitiesMerged) -> str:
    """Entity: the merged entity (a merge named by addresses, the gate's own form, answers the whole result)."""
    return _json(_dumped(result.entity) if result.entity is not None else _dumped(result))


def _entities(field: str) -> Callable[[BaseModel], str]:
    """Entity[]: the list the answer holds under `field`."""
    return lambda result: _json([_dumped(entity) for entity in getattr(result, field)])


def _as_memory_mcp(spec: ToolSpec, text: Callable[[Any], str]) -> ToolSpec:
    return replace(spec, text=text)


MEMORY_MCP_ANSWERS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        _as_memory_mcp(SEARCH_NODES_RANKED, _ranked),
        _as_memory_mcp(FIND_DUPLICATES, _groups),
        _as_memory_mcp(MERGE_ENTITIES, _merged),
        _as_memory_mcp(GET_CHILDREN, _entities("children")),
        _as_memory_mcp(GET_ANCESTORS, _entities("ancestors")),
        _as_memory_mcp(GET_DESCENDANTS, _entities("descendants")),
    )
}


def in_memory_mcp_form(specs: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """The specs, each of memory-mcp's tools above answering its text as memory-mcp does."""
    return tuple(MEMORY_MCP_ANSWERS.get(spec.name, spec) for spec in specs)
