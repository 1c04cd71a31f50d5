"""memory-mcp's `boolean_search` and `fuzzy_search` (seed 004, "Search Operations"), over the ranked search, answered
as memory-mcp answers them: a knowledge graph, `{entities, relations}` (the relations touching the entities found),
a page at a time.

`boolean_search` is the ranked search's own language, which holds memory-mcp's boolean syntax (`AND`, `OR`, `NOT`,
parentheses, `name:`, `type:`, `observation:`), in rank order. `fuzzy_search` is memory-mcp's whole-field
similarity (core.field_similarity), judged on the candidates the ranked search's index finds with typos allowed.
"""

from typing import Annotated

from pydantic import Field

from write_gate.core.field_similarity import candidate_query, close_enough
from write_gate.core.identifiers import REMAP_FIELD, written_label
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.reads import (
    Cursor,
    Entity,
    GraphResult,
    ImportanceBound,
    ReadRequest,
    TagsFilter,
    Text,
)
from write_gate.services.search import (
    DEFAULT_RANKED_LIMIT,
    MAX_RANKED_LIMIT,
    RankedHit,
    RankedResult,
    RankedSearchRequest,
    Searcher,
)

PageSize = Annotated[int, Field(ge=1, le=MAX_RANKED_LIMIT, description="Page size.")]


class _Filtered(ReadRequest):
    """memory-mcp's filters, and a page (every call's cost is bounded)."""

    limit: PageSize = DEFAULT_RANKED_LIMIT
    cursor: Cursor = None
    tags: TagsFilter = None
    minImportance: ImportanceBound = None  # noqa: N815 - memory-mcp's argument names
    maxImportance: ImportanceBound = None  # noqa: N815


class BooleanSearchRequest(_Filtered):
    query: Annotated[Text, Field(description="Words, AND, OR, NOT, ( ), name:, type:, observation:.")]


class FuzzySearchRequest(_Filtered):
    query: Annotated[Text, Field(description="A name, type or observation, perhaps misspelt.")]
    threshold: Annotated[
        float, Field(ge=0.0, le=1.0, allow_inf_nan=False, description="Least similarity of a field, 0..1.")
    ] = 0.7


def _ranked(request: _Filtered, query: str, fuzzy: bool) -> RankedSearchRequest:
    fields = request.model_dump(exclude={"query", "threshold"})
    return RankedSearchRequest(query=query, fuzzy=fuzzy, **fields)


def _graph(ranked: RankedResult, hits: list[RankedHit]) -> GraphResult:
    """The hits kept (of the ranked page's) as a knowledge graph, with the relations touching them."""
    names = {hit.entity.name for hit in hits}
    relations = [r for r in ranked.relations if r.from_ in names or r.to in names]
    return GraphResult(
        entities=[hit.entity for hit in hits],
        relations=relations,
        next_cursor=ranked.next_cursor,
        truncated=[name for name in ranked.truncated if name in names],
    )


async def boolean_search(
    searcher: Searcher, request: BooleanSearchRequest, parent_type: str | None = None
) -> GraphResult:
    """`parent_type`: as `Searcher.search`'s."""
    ranked = await searcher.search(
        _ranked(request, request.query, fuzzy=False), words="all", starts=True, parent_type=parent_type
    )
    return _graph(ranked, ranked.results)


async def fuzzy_search(searcher: Searcher, request: FuzzySearchRequest, parent_type: str | None = None) -> GraphResult:
    """A page of candidates, best first, and of them those with a field as similar as asked: a page may answer
    fewer entities than its limit (and none) while `next_cursor` says more candidates follow. `parent_type`: as
    `Searcher.search`'s."""
    query = candidate_query(request.query)
    if query is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "query: the query has no word to search for", field="query")
    ranked = await searcher.search(_ranked(request, query, fuzzy=True), parent_type=parent_type)
    similar = [hit for hit in ranked.results if close_enough(request.query, _fields(hit.entity), request.threshold)]
    return _graph(ranked, similar)


def _fields(entity: Entity) -> list[str]:
    """What memory-mcp compares: the name, the type, each observation. The type is both the label and the type as
    written, where a write remapped it (`company` kept under Organization): memory-mcp holds the one written."""
    written = written_label(entity.properties.get(REMAP_FIELD))
    types = [*entity.labels[:1], *([written] if written is not None else [])]
    return [*([entity.name] if entity.name is not None else []), *types, *entity.observations]
