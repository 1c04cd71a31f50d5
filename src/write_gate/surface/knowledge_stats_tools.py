"""Seed 004's statistics and saved searches, under memory-mcp's names: offered in both profiles."""

from write_gate.services.reads import SearchNodesRequest
from write_gate.services.saved_searches import (
    SavedSearch,
    SavedSearchDeleted,
    SavedSearches,
    SavedSearchName,
    SaveSearchRequest,
    SearchRun,
    UpdateSavedSearchRequest,
    delete_saved_search,
    execute_saved_search,
    list_saved_searches,
    save_search,
    update_saved_search,
)
from write_gate.services.statistics import GraphStats, get_graph_stats
from write_gate.surface.tool_spec import READ, NoArguments, ToolSpec, lean_hints

GET_GRAPH_STATS = ToolSpec(
    name="get_graph_stats",
    title="Graph statistics",
    description="Counts of entities and relations by type, agent and source; confidence distribution; growth "
    "per day; oldest and newest entity; archived entities; open conflicts.",
    input_model=NoArguments,
    output_model=GraphStats,
    annotations=READ,
    handler=lambda s, _req, _call: get_graph_stats(s.gate),
)


SAVE_SEARCH = ToolSpec(
    name="save_search",
    title="Save a search",
    description="Save a search under a name, for every agent: execute_saved_search runs it.",
    input_model=SaveSearchRequest,
    output_model=SavedSearch,
    annotations=lean_hints(idempotent=False),  # a repeat is refused: SAVED_SEARCH_EXISTS
    handler=lambda s, req, call: save_search(s.gate, req, call.agent),
)


UPDATE_SAVED_SEARCH = ToolSpec(
    name="update_saved_search",
    title="Update a saved search",
    description="Change a saved search's fields (a null removes one).",
    input_model=UpdateSavedSearchRequest,
    output_model=SavedSearch,
    annotations=lean_hints(),
    handler=lambda s, req, call: update_saved_search(s.gate, req, call.agent),
)


LIST_SAVED_SEARCHES = ToolSpec(
    name="list_saved_searches",
    title="List saved searches",
    description="Every saved search, by name, with who saved it and how often it ran.",
    input_model=NoArguments,
    output_model=SavedSearches,
    annotations=READ,
    handler=lambda s, _req, _call: list_saved_searches(s.gate),
)


DELETE_SAVED_SEARCH = ToolSpec(
    name="delete_saved_search",
    title="Delete a saved search",
    description="Delete a saved search.",
    input_model=SavedSearchName,
    output_model=SavedSearchDeleted,
    annotations=lean_hints(destructive=True, idempotent=False),  # a repeat is refused: not saved
    handler=lambda s, req, _call: delete_saved_search(s.gate, req),
)


def execute_saved_search_tool(search_nodes: ToolSpec) -> ToolSpec:
    """execute_saved_search for a profile: a basic search runs as that profile's `search_nodes` takes it (its
    model's defaults: the gate's neighbours), so a saved search answers what search_nodes answers."""
    basic = search_nodes.input_model
    if not issubclass(basic, SearchNodesRequest):
        raise TypeError(f"{search_nodes.name} takes no search_nodes arguments")
    return ToolSpec(
        name="execute_saved_search",
        title="Run a saved search",
        description="Run a saved search: its search's answer, after savedSearch (the run is counted: useCount).",
        input_model=SavedSearchName,
        output_model=SearchRun,
        annotations=lean_hints(idempotent=False),  # it counts the run
        handler=lambda s, req, _call: execute_saved_search(s.gate, req, basic),
    )


def stats_and_saved_searches(search_nodes: ToolSpec) -> tuple[ToolSpec, ...]:
    """The statistics and saved-search tools of the profile whose search_nodes is `search_nodes`."""
    return (
        GET_GRAPH_STATS,
        SAVE_SEARCH,
        execute_saved_search_tool(search_nodes),
        LIST_SAVED_SEARCHES,
        UPDATE_SAVED_SEARCH,
        DELETE_SAVED_SEARCH,
    )
