"""The typed tools (`add_npc`, `update_npc`, `delete_npc`) answered as MemoryMesh answers them, for the mesh profile
(seed 000, section 5.3): `{data: {nodes: [node], edges}, actionTaken: "Created npc: Gandalf", timestamp}`.

The write is the typed tool's own (services.typed_tools); the node in the answer is read back after it, so its
metadata shows what the graph holds (what the conflict policy left, where the write met another writer's claim;
the claims met are in `conflicts`, as in the gate's answer); the edges are those the call wrote. An add refuses a
name that any node holds (ALREADY_EXISTS), as MemoryMesh's does: its update tool changes a node.
"""

import functools

from pydantic import BaseModel

from write_gate.access.agents import Agent
from write_gate.core.clock import utc_now
from write_gate.core.model import MeetsConflicts
from write_gate.core.registry import SchemaEntry
from write_gate.services.gate import Gate
from write_gate.services.memory import WriterContext
from write_gate.services.mesh import (
    Edge,
    MeshAnswer,
    NamesAnswer,
    NamesData,
    Node,
    already_exists,
    mesh_node,
    own_links,
)
from write_gate.services.mesh_reads import GraphData
from write_gate.services.reads import OpenNodesRequest
from write_gate.services.typed_tools import Mode, TypedDeleted, TypedWritten, run_typed, tool_type_name


class TypedAnswer(MeshAnswer, MeetsConflicts):
    data: GraphData


def _name(merge_keys: dict[str, object]) -> str:
    return str(merge_keys["name"]) if "name" in merge_keys else ", ".join(f"{k}={v}" for k, v in merge_keys.items())


async def _node(gate: Gate, entry: SchemaEntry, name: str) -> Node:
    """The node as the graph holds it now (read by name; a node keyed otherwise is named by its keys)."""
    opened = await gate.reader.open_nodes(OpenNodesRequest(names=[name]))
    own = [entity for entity in opened.entities if entity.entityType == entry.label]
    if not own:
        return Node(name=name, nodeType=tool_type_name(entry.label), metadata=[])
    return mesh_node(own[0], gate.registry, own_links(opened.relations).get(name, {}))


async def run_mesh_typed(
    entry: SchemaEntry, mode: Mode, request: BaseModel, gate: Gate, agent: Agent, writer: WriterContext
) -> BaseModel:
    kind = tool_type_name(entry.label)
    refuse = None
    if mode == "add":  # MemoryMesh's add tools create: a name any node holds is refused (validateNodeDoesNotExist)
        name = str(getattr(request, kind).get("name", ""))  # the node's fields, as given (a mapping)
        refuse = functools.partial(already_exists, "Node", name, field=kind, names=[name], update_tool=f"update_{kind}")
        if entry.merge_keys == ("name",) and await gate.reader.find_by_names([name]):
            raise refuse()
    written = await run_typed(entry, mode, request, gate, agent, writer, refuse_existing=refuse)
    if isinstance(written, TypedDeleted):
        name = _name(written.merge_keys)
        return NamesAnswer(data=NamesData(nodeNames=[name]), actionTaken=f"Deleted {kind}: {name}", timestamp=utc_now())
    assert isinstance(written, TypedWritten)
    name = _name(written.merge_keys)
    edges = [Edge(from_=name, to=link.to, edgeType=link.type, weight=link.weight) for link in written.relationships]
    return TypedAnswer(
        data=GraphData(nodes=[await _node(gate, entry, name)], edges=edges),
        actionTaken=f"{'Created' if mode == 'add' else 'Updated'} {kind}: {name}",
        timestamp=utc_now(),
        conflicts=written.conflicts,
    )
