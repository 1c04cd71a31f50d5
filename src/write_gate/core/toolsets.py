"""Toolsets: the named sets a profile's tools are listed in. Pure.

Every tool an agent is shown costs it context on every turn, so a server lists its profile's default sets
(the gate's writes, reads and schema; the official memory server's nine) and more only when asked: by the
operator (`--toolsets` / WRITE_GATE_TOOLSETS), by an agent's grant naming sets, or by the agent itself in
discovery mode (`enable_toolset`). Toolsets choose what is listed; grants and WRITE_GATE_TOOLS choose what
may be called (docs/tools/toolsets.md).
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Toolset:
    name: str
    description: str
    tools: frozenset[str]  # by name; the typed set names none: it holds every tool generated from the registry


CORE = "core"
SCHEMA = "schema"
TYPED = "typed"
MESH = "mesh"
DISCOVERY = "discovery"
ALL = "all"  # every set but discovery: the lists as they were before toolsets

_SETS = (
    Toolset(
        CORE,
        "Write and read the graph: write_node(s), write_relationship(s), read_graph, search_nodes, open_nodes "
        "(gate); the official memory server's nine tools (memory); MemoryMesh's three reads (mesh).",
        frozenset(
            {
                "write_node",
                "write_relationship",
                "write_nodes",
                "write_relationships",
                "read_graph",
                "search_nodes",
                "open_nodes",
                "create_entities",
                "create_relations",
                "add_observations",
                "delete_entities",
                "delete_observations",
                "delete_relations",
            }
        ),
    ),
    Toolset(SCHEMA, "The schema registry: read it, reload it.", frozenset({"get_schema", "refresh_schema_cache"})),
    Toolset(
        "search",
        "Ranked, fuzzy and boolean search, saved searches, and the graph's statistics.",
        frozenset(
            {
                "search_nodes_ranked",
                "boolean_search",
                "fuzzy_search",
                "save_search",
                "execute_saved_search",
                "list_saved_searches",
                "update_saved_search",
                "delete_saved_search",
                "get_graph_stats",
            }
        ),
    ),
    Toolset(
        "knowledge",
        "Tags, importance, a hierarchy of entities, and the archive.",
        frozenset(
            {
                "add_tags",
                "remove_tags",
                "set_importance",
                "add_tags_to_multiple_entities",
                "set_entity_parent",
                "get_parent",
                "get_children",
                "get_ancestors",
                "get_descendants",
                "get_subtree",
                "archive_entities",
                "restore_entities",
            }
        ),
    ),
    Toolset(
        "history",
        "What changed, and the conflicts writes met: read them, resolve one.",
        frozenset({"get_history", "list_conflicts", "resolve_conflict"}),
    ),
    Toolset(
        "resolution",
        "Find likely duplicates and merge them.",
        frozenset({"find_duplicates", "merge_entities", "compress_graph"}),
    ),
    Toolset("fleet", "The change feed: what every agent wrote since a cursor.", frozenset({"changes_since"})),
    Toolset(
        "interchange",
        "The graph out in a format, and in through the gate.",
        frozenset({"export_graph", "import_graph"}),
    ),
    Toolset(
        "quarantine",
        "Rejected writes kept for replay: list, replay, discard them.",
        frozenset({"list_quarantine", "replay_quarantine", "discard_quarantine"}),
    ),
    Toolset(
        MESH,
        "MemoryMesh's graph tools: add, update and delete nodes and edges, add and delete metadata.",
        frozenset(
            {
                "add_nodes",
                "update_nodes",
                "delete_nodes",
                "add_edges",
                "update_edges",
                "delete_edges",
                "add_metadata",
                "delete_metadata",
            }
        ),
    ),
    Toolset(TYPED, "add_/update_/delete_<type> for each registry entry that defines its properties.", frozenset()),
    Toolset(
        DISCOVERY, "See the toolsets and enable one for this session.", frozenset({"list_toolsets", "enable_toolset"})
    ),
)

TOOLSETS: dict[str, Toolset] = {toolset.name: toolset for toolset in _SETS}
_BY_TOOL: dict[str, str] = {tool: toolset.name for toolset in _SETS for tool in toolset.tools}

# What each profile lists unasked: the gate's writes, reads and schema; the memory profile's official nine; the
# mesh profile's MemoryMesh eleven (its three reads are core) and the typed tools.
DEFAULTS: dict[str, frozenset[str]] = {
    "gate": frozenset({CORE, SCHEMA}),
    "memory": frozenset({CORE}),
    "mesh": frozenset({CORE, MESH, TYPED}),
}


def toolset_of(tool: str, *, generated: bool = False) -> str | None:
    """The set a tool is listed in: `typed` for a generated one; None for a name no set holds."""
    return TYPED if generated else _BY_TOOL.get(tool)


def parse_toolsets(text: str) -> frozenset[str]:
    """WRITE_GATE_TOOLSETS / --toolsets: set names separated by commas or white space; `all` is every set but
    discovery (which --dynamic-toolsets adds). ValueError naming what it cannot read."""
    items = [item for item in re.split(r"[,\s]+", text.strip()) if item]
    unknown = [item for item in items if item != ALL and item not in TOOLSETS]
    if unknown:
        raise ValueError(f"WRITE_GATE_TOOLSETS: {', '.join(unknown)} is not a toolset ({', '.join([*TOOLSETS, ALL])})")
    if ALL in items:
        return frozenset(TOOLSETS) - {DISCOVERY} | set(items) - {ALL}
    return frozenset(items)


def served_toolsets(profile: str, toolsets: str, dynamic: bool) -> frozenset[str]:
    """The sets a server lists to every agent: the profile's defaults, those asked for, and discovery in the
    dynamic mode."""
    return DEFAULTS[profile] | parse_toolsets(toolsets) | ({DISCOVERY} if dynamic else set())
