"""The interchange tools: import_graph (the export half, export_graph, is part X's)."""

from write_gate.interchange.import_graph import ImportGraphRequest, import_graph
from write_gate.interchange.importer import ImportAnswer
from write_gate.surface.tool_spec import Call, Services, ToolSpec, lean_hints


async def _import(services: Services, request: ImportGraphRequest, call: Call) -> ImportAnswer:
    async def progress(done: int, total: int) -> None:
        await call.progress(done, total, None)

    return await import_graph(services.gate, request, call.writer, call.agent, progress)


IMPORT_GRAPH = ToolSpec(
    name="import_graph",
    title="Import a graph",
    description=(
        "Import json, jsonl, csv or graphml through the gate, or restore a write-gate backup into an empty graph. "
        "dryRun writes nothing."
    ),
    input_model=ImportGraphRequest,
    output_model=ImportAnswer,
    annotations=lean_hints(idempotent=False),
    handler=_import,
    admin=True,
)
