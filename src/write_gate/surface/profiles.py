"""The three profiles a server offers: the gate's tools, the official memory server's, or MemoryMesh's. Each lists
only its default toolsets unless asked for more (core.toolsets)."""

from write_gate.core.toolsets import CORE, MESH
from write_gate.surface.change_feed_tools import CHANGES_SINCE
from write_gate.surface.discovery_tools import DISCOVERY_TOOLS
from write_gate.surface.gate_tools import (
    FIND_DUPLICATES,
    GET_HISTORY,
    GET_SCHEMA,
    LIST_CONFLICTS,
    MERGE_ENTITIES,
    OPEN_NODES,
    READ_GRAPH,
    REFRESH_SCHEMA_CACHE,
    RESOLVE_CONFLICT,
    SEARCH_NODES,
    SEARCH_NODES_RANKED,
    WRITE_NODE,
    WRITE_NODES,
    WRITE_RELATIONSHIP,
    WRITE_RELATIONSHIPS,
)
from write_gate.surface.interchange_tools import EXPORT_GRAPH, IMPORT_GRAPH
from write_gate.surface.knowledge_stats_tools import stats_and_saved_searches
from write_gate.surface.knowledge_tools import KNOWLEDGE_TOOLS
from write_gate.surface.memory_mcp_compress_tool import COMPRESS_GRAPH
from write_gate.surface.memory_mcp_search_tools import MEMORY_MCP_SEARCHES
from write_gate.surface.memory_mcp_texts import in_memory_mcp_form
from write_gate.surface.memory_tools import (
    ADD_OBSERVATIONS,
    CREATE_ENTITIES,
    CREATE_RELATIONS,
    DELETE_ENTITIES,
    DELETE_OBSERVATIONS,
    DELETE_RELATIONS,
    MEMORY_OPEN_NODES,
    MEMORY_READ_GRAPH,
    MEMORY_SEARCH_NODES,
)
from write_gate.surface.mesh_tools import MESH_OPEN_NODES, MESH_READ_GRAPH, MESH_SEARCH_NODES, MESH_TOOLS
from write_gate.surface.quarantine_tools import QUARANTINE_TOOLS
from write_gate.surface.tool_spec import ToolSpec

PROFILES: dict[str, tuple[ToolSpec, ...]] = {
    "gate": (
        WRITE_NODE,
        WRITE_RELATIONSHIP,
        WRITE_NODES,
        WRITE_RELATIONSHIPS,
        REFRESH_SCHEMA_CACHE,
        SEARCH_NODES,
        SEARCH_NODES_RANKED,
        *MEMORY_MCP_SEARCHES,
        OPEN_NODES,
        READ_GRAPH,
        GET_SCHEMA,
        FIND_DUPLICATES,
        MERGE_ENTITIES,
        RESOLVE_CONFLICT,
        GET_HISTORY,
        LIST_CONFLICTS,
        CHANGES_SINCE,
        *KNOWLEDGE_TOOLS,
        *stats_and_saved_searches(SEARCH_NODES),
        EXPORT_GRAPH,
        IMPORT_GRAPH,
        *QUARANTINE_TOOLS,
        *MESH_TOOLS,
        *DISCOVERY_TOOLS,
    ),
    # Seed 001's nine tools (read_graph, search_nodes and open_nodes are the same implementation as above), then
    # seed 004's searches, duplicates, merges and compression (compress_graph is this profile's alone), and the
    # history reads, statistics and saved searches; seed 004's tools answer their text as memory-mcp does
    # (surface/memory_mcp_texts.py).
    "memory": in_memory_mcp_form(
        (
            CREATE_ENTITIES,
            CREATE_RELATIONS,
            ADD_OBSERVATIONS,
            DELETE_ENTITIES,
            DELETE_OBSERVATIONS,
            DELETE_RELATIONS,
            MEMORY_READ_GRAPH,
            MEMORY_SEARCH_NODES,
            MEMORY_OPEN_NODES,
            SEARCH_NODES_RANKED,
            *MEMORY_MCP_SEARCHES,
            FIND_DUPLICATES,
            MERGE_ENTITIES,
            COMPRESS_GRAPH,
            GET_HISTORY,
            LIST_CONFLICTS,
            CHANGES_SINCE,
            *KNOWLEDGE_TOOLS,
            *stats_and_saved_searches(MEMORY_SEARCH_NODES),
            EXPORT_GRAPH,
            IMPORT_GRAPH,
            *QUARANTINE_TOOLS,
            *MESH_TOOLS,
            *DISCOVERY_TOOLS,
        )
    ),
}

# Seed 000's eleven static tools (its three reads answered as MemoryMesh answers; the typed tools the registry
# generates are listed too), then the gate profile's further sets as it has them.
PROFILES["mesh"] = (
    *MESH_TOOLS,
    MESH_READ_GRAPH,
    MESH_SEARCH_NODES,
    MESH_OPEN_NODES,
    *(spec for spec in PROFILES["gate"] if spec.toolset not in (CORE, MESH)),
)
