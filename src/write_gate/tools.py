"""The gate's tool surface: names, descriptions, input/output models and MCP annotations.

There is no raw Cypher tool here, by design: every write goes through the gate.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from write_gate.gate import Gate
from write_gate.model import (
    NodeWritten,
    RelationshipWritten,
    SchemaRefreshed,
    WriteNodeRequest,
    WriteRelationshipRequest,
)


class NoArguments(BaseModel):
    model_config = {"extra": "forbid"}


Handler = Callable[[Gate, Any], Awaitable[BaseModel]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    annotations: types.ToolAnnotations
    handler: Handler

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_model.model_json_schema(),
            output_schema=self.output_model.model_json_schema(),
            annotations=self.annotations,
        )


_WRITE = types.ToolAnnotations(
    read_only_hint=False,
    # MERGE never deletes; it may overwrite the values of properties it is given.
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)

GATE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="write_node",
        description=(
            "Create or update one node, gated by the schema registry. The label is checked (unknown or drifted "
            "labels such as ':person' are remapped to the canonical one, or rejected), required properties are "
            "checked, and source, extraction_method, a computed confidence and the gate version are stamped. "
            "merge_keys identify the node (MERGE); properties are set on it."
        ),
        input_model=WriteNodeRequest,
        output_model=NodeWritten,
        annotations=_WRITE.model_copy(update={"title": "Write a node"}),
        handler=lambda gate, req: gate.write_node(req),
    ),
    ToolSpec(
        name="write_relationship",
        description=(
            "Create or update one relationship of a registered type between two nodes found by their labels and "
            "keys. With endpoint_policy='fail_if_missing' (default) both nodes must exist; 'merge_endpoints' "
            "creates absent ones flagged _stub=true. Provenance and confidence are stamped as on write_node."
        ),
        input_model=WriteRelationshipRequest,
        output_model=RelationshipWritten,
        annotations=_WRITE.model_copy(update={"title": "Write a relationship"}),
        handler=lambda gate, req: gate.write_relationship(req),
    ),
    ToolSpec(
        name="refresh_schema_cache",
        description=(
            "Reload the schema registry from the graph's :Schema nodes without restarting. Returns how many "
            "node labels and relationship types are now allowed."
        ),
        input_model=NoArguments,
        output_model=SchemaRefreshed,
        annotations=types.ToolAnnotations(
            title="Reload the schema registry",
            read_only_hint=True,  # reads the registry; changes nothing in the graph
            idempotent_hint=True,
            open_world_hint=False,
        ),
        handler=lambda gate, _req: gate.refresh(),
    ),
)
