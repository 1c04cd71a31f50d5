"""What every client in the tier does, and what its agent must receive: a success and a rejection of every
tool kind, per profile. The calls go to the drivers as JSON; the expectations stay here.

The calls are repeatable on one graph (each client runs them in turn on the same server): what a
scenario creates, it deletes at its end.
"""

from dataclasses import dataclass, field
from typing import Any

from tests.conftest import (
    DISCOVERY_TOOLS,
    FEED_TOOLS,
    KNOWLEDGE_TOOLS,
    MEMORY_DEFAULT_TOOLS,
    MESH_TOOLS,
    QUARANTINE_TOOLS,
    STATS_TOOLS,
    TEXT_SEARCHES,
)

PROV = {"source": "client-tier", "extraction_method": "manual"}
ADA = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": {"age": 36}, **PROV}
# The HTTP and stdio servers of this tier run with WRITE_GATE_MAX_BATCH_ITEMS=5: six items are over it.
TOO_MANY = 6


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]
    # None: a success (isError false); a code: a rejection carrying it; "-32602": a JSON-RPC error.
    expect: str | None = None
    text_contains: tuple[str, ...] = field(default_factory=tuple)

    def wire(self) -> dict[str, Any]:
        return {"name": self.tool, "arguments": self.arguments}


def _rel(type_: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": "Person",
        "from_keys": {"name": "Ada"},
        "to_label": "Organization",
        "to_keys": {"name": "Acme"},
        "endpoint_policy": "merge_endpoints",
        "weight": 0.5,
        **PROV,
        **extra,
    }


_FRODO = {"name": "Frodo", "nodeType": "npc", "metadata": ["Role: Peasant", "Status: Active"]}
_FRODO_IN = {"from": "Frodo", "to": "Rivendell", "edgeType": "located_in"}

GATE: list[Call] = [
    Call("write_node", ADA, text_contains=('"written"',)),
    Call("write_node", {**ADA, "properties": {"source": "me"}}, "SCHEMA_PROTECTED_FIELD"),
    Call("write_relationship", _rel("WORKS_FOR"), text_contains=('"written"',)),
    Call("write_relationship", _rel("DIRECTED"), "SCHEMA_UNKNOWN_LABEL"),
    Call("write_nodes", {"items": [ADA, {**ADA, "merge_keys": {"name": "Bob"}}]}, text_contains=('"done"',)),
    Call("write_nodes", {"items": [ADA] * TOO_MANY}, "INVALID_INPUT"),
    Call("write_relationships", {"items": [_rel("WORKS_FOR")]}, text_contains=('"done"',)),
    Call("write_relationships", {"items": [_rel("WORKS_FOR")] * TOO_MANY}, "INVALID_INPUT"),
    Call("refresh_schema_cache", {}, text_contains=('"refreshed"',)),
    Call("refresh_schema_cache", {"now": True}, "INVALID_INPUT"),
    Call("search_nodes", {"query": "ada"}, text_contains=("Ada",)),
    Call("search_nodes", {"query": "ada", "limit": 0}, "INVALID_INPUT"),
    Call("open_nodes", {"names": ["Ada"]}, text_contains=("Ada",)),
    Call("open_nodes", {"names": "Ada"}, "INVALID_INPUT"),
    Call("read_graph", {"limit": 10}, text_contains=("entities",)),
    Call("read_graph", {"cursor": "not-a-cursor"}, "INVALID_INPUT"),
    Call("get_schema", {}, text_contains=("Npc",)),
    Call("get_schema", {"label": "Npc"}, "INVALID_INPUT"),
    Call(
        "add_npc",
        {
            "npc": {"name": "Gandalf", "role": "Wizard", "status": "Active", "currentLocation": "Rivendell"},
            "endpoint_policy": "merge_endpoints",
            **PROV,
        },
        text_contains=("LOCATED_IN",),
    ),
    Call("add_npc", {"npc": {"name": "Saruman", "status": "Active"}, **PROV}, "SCHEMA_MISSING_REQUIRED_PROPERTY"),
    Call("update_npc", {"npc": {"name": "Gandalf", "status": "Missing"}, **PROV}, text_contains=('"written"',)),
    Call("update_npc", {"npc": {"name": "Nobody", "status": "Missing"}, **PROV}, "ENTITY_NOT_FOUND"),
    Call("delete_npc", {"npc": {"name": "Gandalf"}}, text_contains=('"deleted"',)),
    Call("delete_npc", {"npc": {"name": "Gandalf"}}, "ENTITY_NOT_FOUND"),
    # MemoryMesh's graph tools (the mesh set), as its agents call them.
    Call("add_nodes", {"nodes": [_FRODO]}, text_contains=("Added nodes: Frodo",)),
    Call("add_nodes", {"nodes": [_FRODO]}, "ALREADY_EXISTS"),
    Call("add_edges", {"edges": [{**_FRODO_IN, "weight": 0.8}]}, text_contains=("located_in",)),
    Call("add_edges", {"edges": [{**_FRODO_IN, "edgeType": "directed"}]}, "SCHEMA_UNKNOWN_LABEL"),
    Call("update_edges", {"edges": [{**_FRODO_IN, "weight": 0.6}]}, text_contains=("0.7",)),
    Call("update_edges", {"edges": [{**_FRODO_IN, "weight": 1.5}]}, "INVALID_INPUT"),
    Call("add_metadata", {"nodeName": "Frodo", "metadata": ["Mood: Brave"]}, text_contains=("Mood: Brave",)),
    Call("delete_metadata", {"nodeName": "Nobody", "metadata": ["Mood: Brave"]}, "ENTITY_NOT_FOUND"),
    Call("delete_nodes", {"nodeNames": ["Frodo"]}, text_contains=("Deleted nodes: Frodo",)),
    Call("no_such_tool", {}, "-32602"),
]

_ENTITIES = [
    {"name": "Ada", "entityType": "person", "observations": ["writes programs"]},
    {"name": "Acme", "entityType": "Company", "observations": []},
]
_WORKS = {"from": "Ada", "to": "Acme", "relationType": "works at"}

MEMORY: list[Call] = [
    Call("create_entities", {"entities": _ENTITIES}),
    Call("create_entities", {"entities": [{"name": "Zed", "entityType": "Spaceship"}]}, "SCHEMA_UNKNOWN_LABEL"),
    Call("create_relations", {"relations": [_WORKS]}),
    Call("create_relations", {"relations": [{**_WORKS, "relationType": "DIRECTED"}]}, "SCHEMA_UNKNOWN_LABEL"),
    Call("add_observations", {"observations": [{"entityName": "Ada", "contents": ["likes tea"]}]}),
    Call(
        "add_observations",
        {"observations": [{"entityName": "Nobody", "contents": ["x"]}]},
        "ENTITY_NOT_FOUND",
        ("Entity with name Nobody not found",),
    ),
    Call("read_graph", {}, text_contains=("likes tea",)),
    Call("read_graph", {"limit": "many"}, "INVALID_INPUT"),
    Call("search_nodes", {"query": "tea"}, text_contains=("Ada",)),
    Call("search_nodes", {}, "INVALID_INPUT"),
    Call("open_nodes", {"names": ["Acme"]}, text_contains=("Acme",)),
    Call("open_nodes", {}, "INVALID_INPUT"),
    Call(
        "delete_observations",
        {"deletions": [{"entityName": "Ada", "observations": ["likes tea"]}]},
        text_contains=("Observations deleted successfully",),
    ),
    Call("delete_observations", {}, "INVALID_INPUT"),
    Call("delete_relations", {"relations": [_WORKS]}, text_contains=("Relations deleted successfully",)),
    Call("delete_relations", {"relations": "all"}, "INVALID_INPUT"),
    Call("delete_entities", {"entityNames": ["Ada", "Acme"]}, text_contains=("Entities deleted successfully",)),
    Call("delete_entities", {"entityNames": [1, 2]}, "INVALID_INPUT"),
    Call("no_such_tool", {}, "-32602"),
]

# MemoryMesh's agent, on the mesh profile: its answers and its refusals (error, context, suggestions).
_ARWEN = {"name": "Arwen", "role": "Noble", "status": "Active", "currentLocation": "Lothlorien"}
MESH: list[Call] = [
    Call("add_location", {"location": {"name": "Lothlorien", "region": "Wilderland"}}, text_contains=("actionTaken",)),
    Call("add_npc", {"npc": _ARWEN}, text_contains=("Created npc: Arwen", "Current Location: Lothlorien")),
    Call("add_npc", {"npc": _ARWEN}, "ALREADY_EXISTS", ("update_npc",)),  # an add creates, as MemoryMesh's
    Call("add_npc", {"npc": {"name": "Sauron", "role": "Noble"}}, "SCHEMA_MISSING_REQUIRED_PROPERTY", ("suggestions",)),
    Call("add_nodes", {"nodes": [{**_FRODO, "name": "Sam"}]}, text_contains=("Added nodes: Sam",)),
    Call("add_nodes", {"nodes": [{**_FRODO, "name": "Sam"}]}, "ALREADY_EXISTS", ("update_nodes",)),
    Call("add_edges", {"edges": [{"from": "Sam", "to": "Lothlorien", "edgeType": "located_in"}]}),
    Call("search_nodes", {"query": "noble"}, text_contains=('"nodeType": "npc"', "Lothlorien")),
    Call("search_nodes", {}, "INVALID_INPUT"),
    Call("open_nodes", {"names": ["Sam"]}, text_contains=('"edgeType": "located_in"',)),
    Call("read_graph", {"limit": 10}, text_contains=('"nodes"', '"edges"')),
    Call("delete_npc", {"npc": {"name": "Arwen"}}, text_contains=("Deleted npc: Arwen",)),
    Call("delete_nodes", {"nodeNames": ["Sam"]}, text_contains=("Deleted nodes: Sam",)),  # the next client's turn
    Call("delete_location", {"location": {"name": "Lothlorien"}}, text_contains=("Deleted location: Lothlorien",)),
    Call("no_such_tool", {}, "-32602"),
]

SCENARIOS = {"gate": GATE, "memory": MEMORY, "mesh": MESH}
# The tools each profile lists with every toolset (gate: discovery's two too, and the typed tools of the rpg
# examples).
RPG_TYPES = [
    "artifact",
    "currency",
    "faction",
    "inventory",
    "location",
    "npc",
    "player_character",
    "quest",
    "skills",
    "temporal",
    "transportation",
]
TOOLS = {
    "gate": {
        "write_node",
        "write_relationship",
        "write_nodes",
        "write_relationships",
        "refresh_schema_cache",
        "search_nodes",
        "search_nodes_ranked",
        *TEXT_SEARCHES,
        "open_nodes",
        "read_graph",
        "get_schema",
        "find_duplicates",
        "merge_entities",
        "resolve_conflict",
        "get_history",
        "list_conflicts",
        *FEED_TOOLS,
        *KNOWLEDGE_TOOLS,
        *STATS_TOOLS,
        "export_graph",
        "import_graph",
        *QUARANTINE_TOOLS,
        *MESH_TOOLS,
        *DISCOVERY_TOOLS,
        *(f"{verb}_{t}" for t in RPG_TYPES for verb in ("add", "update", "delete")),
    },
    "memory": {
        *MEMORY_DEFAULT_TOOLS,
        "search_nodes_ranked",
        *TEXT_SEARCHES,
        "find_duplicates",
        "merge_entities",
        "compress_graph",
        "get_history",
        "list_conflicts",
        *FEED_TOOLS,
        *KNOWLEDGE_TOOLS,
        *STATS_TOOLS,
        "export_graph",
        "import_graph",
        *QUARANTINE_TOOLS,
        *MESH_TOOLS,
    },
}

# The mesh profile with every set: the gate's, less its four writes (MemoryMesh's own take their place) and
# discovery (not asked for there).
TOOLS["mesh"] = (
    TOOLS["gate"] - {"write_node", "write_relationship", "write_nodes", "write_relationships"} - DISCOVERY_TOOLS
)


def check_report(report: dict[str, Any], profile: str) -> list[str]:
    """Everything the agent received that differs from what it must: empty when the client works."""
    problems: list[str] = []
    if set(report["tools"]) != TOOLS[profile]:
        problems.append(f"tools listed: {sorted(set(report['tools']) ^ TOOLS[profile])} differ")
    problems += [f"schema of {name}: {err}" for name, err in report["schema_errors"]]
    for call, got in zip(SCENARIOS[profile], report["calls"], strict=True):
        where = f"{call.tool}({'rejection' if call.expect else 'success'})"
        if call.expect == "-32602":
            if (got.get("error") or {}).get("code") != -32602:
                problems.append(f"{where}: expected JSON-RPC -32602, got {got}")
            continue
        if got.get("error"):
            problems.append(f"{where}: the client raised {got['error']}")
            continue
        if got["outputValid"] is not True:
            problems.append(f"{where}: structuredContent does not match the outputSchema: {got['outputValid']}")
        structured, text = got.get("structured") or {}, got.get("text") or ""
        if call.expect is None:
            if got["isError"]:
                problems.append(f"{where}: isError, {structured.get('error_code')}: {structured.get('message')}")
        else:
            if not got["isError"] or structured.get("status") != "rejected":
                problems.append(f"{where}: expected a rejection, got {structured}")
            if structured.get("error_code") != call.expect or call.expect not in text:
                problems.append(f"{where}: expected {call.expect} in structuredContent and text, got {text[:200]}")
            if not structured.get("message"):
                problems.append(f"{where}: a rejection without a message")
        problems += [f"{where}: {needle!r} not in the text" for needle in call.text_contains if needle not in text]
    resources = report["resources"]
    listed = ["write-gate://schema", "write-gate://stats", "write-gate://changes"]
    if resources["list"] != listed or resources["templates"] != [
        "write-gate://schema/{name}",
        "write-gate://changes/{label}",
    ]:
        problems.append(f"resources: {resources}")
    if not resources["readOk"] or "Person" not in resources["completion"]:
        problems.append(f"resources read or completion: {resources}")
    return problems
