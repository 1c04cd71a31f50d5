"""The schema registry and the graph's statistics as read-only MCP resources, and completion of the label and
type names they take.

`write-gate://schema` is the whole registry (what `get_schema` answers); the template
`write-gate://schema/{name}` is one node label's or relationship type's entry, with its live count;
`write-gate://stats` is what `get_graph_stats` answers.
"""

import json

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from write_gate.core.model import GateRejection
from write_gate.engines import BackendError, BackendUnavailable
from write_gate.engines.errors import engine_failure
from write_gate.services.gate import Gate
from write_gate.services.schema import entry_view, get_schema
from write_gate.services.statistics import get_graph_stats
from write_gate.surface.mcp_context import GateContext

SCHEMA_URI = "write-gate://schema"
STATS_URI = "write-gate://stats"
ENTRY_TEMPLATE = "write-gate://schema/{name}"
_ENTRY_PREFIX = SCHEMA_URI + "/"
JSON = "application/json"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for resources/read of an unknown URI
MAX_COMPLETIONS = 100  # the specification's cap on completion values per answer

REGISTRY = types.Resource(
    uri=SCHEMA_URI,
    name="schema",
    title="Schema registry",
    description="Every allowed node label and relationship type, with live counts (as get_schema).",
    mime_type=JSON,
)
STATS = types.Resource(
    uri=STATS_URI,
    name="stats",
    title="Graph statistics",
    description="Counts by type, agent and source, confidence, growth, open conflicts (as get_graph_stats).",
    mime_type=JSON,
)
ENTRY = types.ResourceTemplate(
    uri_template=ENTRY_TEMPLATE,
    name="schema-entry",
    title="Schema entry",
    description="One node label's or relationship type's registry entry, with its live count.",
    mime_type=JSON,
)


async def list_resources(_ctx: GateContext, _params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[REGISTRY, STATS])


async def list_templates(
    _ctx: GateContext, _params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[ENTRY])


async def read_resource(ctx: GateContext, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    gate = ctx.lifespan_context.gate
    try:
        # A registry that never loaded is empty: only an engine that answers makes an empty registry true.
        await gate.backend.ping()
        if params.uri == SCHEMA_URI:
            view: BaseModel = await get_schema(gate)
        elif params.uri == STATS_URI:
            view = await get_graph_stats(gate)
        elif params.uri.startswith(_ENTRY_PREFIX):
            view = await _entry_view(gate, params.uri[len(_ENTRY_PREFIX) :])
        else:
            raise MCPError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": params.uri})
    except (BackendUnavailable, BackendError) as exc:  # the ping: the same mapping as every read
        raise protocol_error(engine_failure(exc, "read")) from exc
    except GateRejection as exc:  # the engine could not be read: say so, never an empty registry
        raise protocol_error(exc) from exc
    text = json.dumps(view.model_dump(mode="json"), ensure_ascii=False)
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, mime_type=JSON, text=text)])


def protocol_error(exc: GateRejection) -> MCPError:
    """A resource read has no tool result to carry a rejection: its code and details ride the JSON-RPC error."""
    rejected = exc.rejected
    return MCPError(
        types.INTERNAL_ERROR, rejected.message, {"error_code": rejected.error_code.value, **rejected.details}
    )


async def _entry_view(gate: Gate, name: str) -> BaseModel:
    view = await entry_view(gate, name)
    if view is None:
        raise MCPError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": _ENTRY_PREFIX + name})
    return view


def complete_names(names: list[str], prefix: str) -> types.Completion:
    """Names starting with what was typed (case-insensitive), exact-case matches first. Pure."""
    folded = prefix.casefold()
    matches = sorted((n for n in names if n.casefold().startswith(folded)), key=lambda n: (not n.startswith(prefix), n))
    return types.Completion(
        values=matches[:MAX_COMPLETIONS], total=len(matches), has_more=len(matches) > MAX_COMPLETIONS
    )


async def complete(ctx: GateContext, params: types.CompleteRequestParams) -> types.CompleteResult:
    ref = params.ref
    if isinstance(ref, types.PromptReference):
        raise MCPError(types.INVALID_PARAMS, f"no prompt named {ref.name!r}")
    if ref.uri != ENTRY_TEMPLATE or params.argument.name != "name":
        raise MCPError(types.INVALID_PARAMS, f"nothing to complete for {params.argument.name!r} of {ref.uri!r}")
    registry = ctx.lifespan_context.gate.registry
    names = registry.all_canonical_labels() + registry.all_relationship_types()
    return types.CompleteResult(completion=complete_names(names, params.argument.value))
