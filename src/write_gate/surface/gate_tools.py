"""The gate profile's tools: typed writes of nodes and relationships, batches, and the shared reads."""

from write_gate.core.model import (
    NodeWritten,
    RelationshipWritten,
    SchemaRefreshed,
    WriteNodeRequest,
    WriteRelationshipRequest,
)
from write_gate.core.schema_view import SchemaView
from write_gate.services.batch import (
    BatchWritten,
    WriteNodesRequest,
    WriteRelationshipsRequest,
    checked,
    write_nodes,
    write_relationships,
)
from write_gate.services.conflicts import ConflictResolved, ResolveConflictRequest, resolve_conflict
from write_gate.services.history import (
    Conflicts,
    GetHistoryRequest,
    History,
    ListConflictsRequest,
    get_history,
    list_conflicts,
)
from write_gate.services.memory import EntityIn
from write_gate.services.reads import GraphResult, NeighbourOpenRequest, NeighbourSearchRequest, ReadGraphRequest
from write_gate.services.resolution import (
    CreateEntity,
    DuplicatesFound,
    EntitiesMerged,
    FindDuplicatesRequest,
    MergeEntitiesRequest,
    find_duplicates,
    merge_entities,
)
from write_gate.services.schema import get_schema
from write_gate.services.search import RankedResult, RankedSearchRequest
from write_gate.surface.tool_schemas import input_schema
from write_gate.surface.tool_spec import READ, Call, NoArguments, Services, ToolSpec, lean_hints

WRITE_NODE = ToolSpec(
    name="write_node",
    title="Write a node",
    description=(
        "Create or update one node: MERGE on merge_keys, then set properties. The label is checked against the "
        "schema registry (drifts such as ':person' are remapped, unknown labels remapped to the fallback or "
        "rejected), property names too, by the entry's policy (property_remaps), required properties are "
        "checked, and provenance with a computed confidence is stamped."
    ),
    input_model=WriteNodeRequest,
    output_model=NodeWritten,
    # MERGE never deletes; repeating a call sets the same values again (only last_updated moves).
    annotations=lean_hints(),
    handler=lambda s, req, call: s.gate.write_node(req, call.agent),
)


WRITE_RELATIONSHIP = ToolSpec(
    name="write_relationship",
    title="Write a relationship",
    description=(
        "Create or update one relationship of a registered type between two nodes given by label and keys. "
        "Both must exist, unless endpoint_policy='merge_endpoints' (absent ones are created as _stub). "
        "Stamped like write_node."
    ),
    input_model=WriteRelationshipRequest,
    output_model=RelationshipWritten,
    # Not idempotent: a weight given for an existing relationship is averaged into it, so a repeat moves it.
    annotations=lean_hints(idempotent=False),
    handler=lambda s, req, call: s.gate.write_relationship(req, call.agent),
)


REFRESH_SCHEMA_CACHE = ToolSpec(
    name="refresh_schema_cache",
    title="Reload the schema registry",
    description="Reload the schema registry from the graph's :Schema nodes; generated tools follow it.",
    input_model=NoArguments,
    output_model=SchemaRefreshed,
    # Not read-only: nothing in the graph changes, but the registry in force and the tool list may.
    annotations=lean_hints(),
    handler=lambda s, _req, _call: s.gate.refresh(),
    admin=True,
)


WRITE_NODES = ToolSpec(
    name="write_nodes",
    title="Write nodes",
    description="Many write_node items in one call, each checked on its own; every item's outcome comes back "
    "(written, or rejected with its code) in input order.",
    input_model=WriteNodesRequest,
    output_model=BatchWritten,
    annotations=lean_hints(),
    handler=lambda s, req, call: write_nodes(s.gate, checked(req.items), call.agent),
    # The same model, its items left undescribed: write_node describes them.
    input_schema=input_schema(WriteNodesRequest, description_depth=1),
)


WRITE_RELATIONSHIPS = ToolSpec(
    name="write_relationships",
    title="Write relationships",
    description="Many write_relationship items in one call; every item's outcome, in input order.",
    input_model=WriteRelationshipsRequest,
    output_model=BatchWritten,
    annotations=lean_hints(idempotent=False),  # weights, as write_relationship
    handler=lambda s, req, call: write_relationships(s.gate, checked(req.items), call.agent),
    input_schema=input_schema(WriteRelationshipsRequest, description_depth=1),
)


_PAGED = " Paged: pass next_cursor back as cursor."


READ_GRAPH = ToolSpec(
    name="read_graph",
    title="Read Graph",
    description="Read the knowledge graph: {entities, relations, next_cursor}; each entity has name, entityType, "
    "observations, labels and properties (provenance included)." + _PAGED,
    input_model=ReadGraphRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda s, req, _call: s.gate.reader.read_graph(req),
)


SEARCH_NODES = ToolSpec(
    name="search_nodes",
    title="Search Nodes",
    description="Entities whose name, type or text contains query (case-insensitive), their neighbours and the "
    "relations touching them; answers like read_graph." + _PAGED,
    input_model=NeighbourSearchRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda s, req, _call: s.gate.reader.search_nodes(req),
)


SEARCH_NODES_RANKED = ToolSpec(
    name="search_nodes_ranked",
    title="Ranked search",
    description="Entities matching a query (see its syntax), best first, with scores, matched fields and the "
    "relations touching them.",
    input_model=RankedSearchRequest,
    output_model=RankedResult,
    annotations=READ,
    handler=lambda s, req, _call: s.gate.searcher.search(req),
)


OPEN_NODES = ToolSpec(
    name="open_nodes",
    title="Open Nodes",
    description="Entities with exactly these names (case-sensitive), their neighbours and the relations touching "
    "them; answers like read_graph.",
    input_model=NeighbourOpenRequest,
    output_model=GraphResult,
    annotations=READ,
    handler=lambda s, req, _call: s.gate.reader.open_nodes(req),
)


GET_SCHEMA = ToolSpec(
    name="get_schema",
    title="Get the schema",
    description="The schema registry: node labels (required properties, merge keys, property types, absorbed "
    "drifts, undeclared-property policy), relationship types (endpoint labels), extraction methods and live counts.",
    input_model=NoArguments,
    output_model=SchemaView,
    annotations=READ,
    handler=lambda s, _req, _call: get_schema(s.gate),
)


FIND_DUPLICATES = ToolSpec(
    name="find_duplicates",
    title="Find duplicates",
    description="Likely duplicate nodes, best first, each pair scored 0-1 with the signals that matched "
    "(similar name, same email or url).",
    input_model=FindDuplicatesRequest,
    output_model=DuplicatesFound,
    annotations=READ,
    handler=lambda s, req, _call: find_duplicates(s.gate, req),
)


MERGE_ENTITIES = ToolSpec(
    name="merge_entities",
    title="Merge entities",
    description="Merge nodes into the survivor: their relationships move to it, properties it lacks are copied "
    "(conflicts reported), and their keys become its aliases.",
    input_model=MergeEntitiesRequest,
    output_model=EntitiesMerged,
    # Idempotent in effect but not in answer: a repeat is refused (already merged).
    annotations=lean_hints(destructive=True, idempotent=False),
    handler=lambda s, req, call: merge_entities(s.gate, req, call.agent, _creator(s, call)),
)


def _creator(services: Services, call: Call) -> CreateEntity:
    """A new targetName's entity, created as create_entities creates one (empty, with the caller's provenance)."""

    async def create(name: str, label: str) -> None:
        await services.memory.create_entities(
            [EntityIn(name=name, entityType=label, observations=[])], call.writer, call.agent
        )

    return create


RESOLVE_CONFLICT = ToolSpec(
    name="resolve_conflict",
    title="Resolve a conflict",
    description="Close an open conflict (a keep_both value held beside the current one): pick 'current' to keep "
    "the value in place, or 'incoming' to write the held value with its own claim.",
    input_model=ResolveConflictRequest,
    output_model=ConflictResolved,
    # A repeat is refused (no longer open); picking incoming overwrites the current value.
    annotations=lean_hints(destructive=True, idempotent=False),
    handler=lambda s, req, call: resolve_conflict(s.gate, req, call.agent),
)


GET_HISTORY = ToolSpec(
    name="get_history",
    title="Get history",
    description="Changes of one node (label, merge_keys) or relationship (label as type, from_/to_label and keys), "
    "newest first: before, after, their claims, agent, time." + _PAGED,
    input_model=GetHistoryRequest,
    output_model=History,
    annotations=READ,
    handler=lambda s, req, _call: get_history(s.gate, req),
)


LIST_CONFLICTS = ToolSpec(
    name="list_conflicts",
    title="List conflicts",
    description="Conflicts writes met (default: open ones), newest first, with both values and claims." + _PAGED,
    input_model=ListConflictsRequest,
    output_model=Conflicts,
    annotations=READ,
    handler=lambda s, req, _call: list_conflicts(s.gate, req),
)
