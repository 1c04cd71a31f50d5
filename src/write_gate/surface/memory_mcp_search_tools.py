"""memory-mcp's `boolean_search` and `fuzzy_search` (seed 004) under its names and arguments, in the `search` toolset
of every profile, beside the ranked search they are built on (services.memory_mcp_search)."""

from write_gate.services.memory_mcp_search import BooleanSearchRequest, FuzzySearchRequest, boolean_search, fuzzy_search
from write_gate.services.reads import GraphResult
from write_gate.surface.tool_spec import READ, ToolSpec

BOOLEAN_SEARCH = ToolSpec(
    name="boolean_search",
    title="Boolean search",
    description="Entities matching a boolean query, e.g. 'name:ali AND (type:person OR observation:engineer)' "
    "(search_nodes_ranked's language; a word matches the words it starts), best first, with their relations; "
    "paged by next_cursor.",
    input_model=BooleanSearchRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda s, req, _call: boolean_search(s.gate.searcher, req),
)

FUZZY_SEARCH = ToolSpec(
    name="fuzzy_search",
    title="Fuzzy search",
    description="Entities whose name, type or an observation is at least threshold similar to the query (1 - edit "
    "distance / length), with their relations; paged by next_cursor (a page may hold fewer than its limit).",
    input_model=FuzzySearchRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda s, req, _call: fuzzy_search(s.gate.searcher, req),
)

MEMORY_MCP_SEARCHES = (BOOLEAN_SEARCH, FUZZY_SEARCH)
