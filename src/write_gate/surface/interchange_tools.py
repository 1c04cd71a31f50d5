"""The interchange tools: the graph out in a format (export_graph), and in through the gate (import_graph)."""

from write_gate.interchange.exporting import ExportGraphRequest, GraphExported, export_graph
from write_gate.interchange.import_graph import ImportGraphRequest, import_graph
from write_gate.interchange.importer import ImportAnswer
from write_gate.services.export_read import Progress
from write_gate.surface.tool_spec import READ, Call, Services, ToolSpec, lean_hints


def _progress(call: Call) -> Progress:
    async def report(entities: int) -> None:
        await call.progress(entities, None, f"{entities} entities")

    return report


async def _export(services: Services, request: ExportGraphRequest, call: Call) -> GraphExported:
    return await export_graph(services.gate, request, _progress(call), services.hierarchy.type_)


EXPORT_GRAPH = ToolSpec(
    name="export_graph",
    title="Export the graph",
    description="The graph, or the filter's part of it, as text; each node named label:_key. Dates bound last_updated.",
    input_model=ExportGraphRequest,
    output_model=GraphExported,
    annotations=READ,
    handler=_export,
    # memory-mcp answers the export itself as the text: so does this (and the answer is not sent twice over).
    text=lambda result: result.content,
    admin=True,  # the whole graph at once: for operators, not for a reader or writer grant
)


async def _import(services: Services, request: ImportGraphRequest, call: Call) -> ImportAnswer:
    async def progress(done: int, total: int) -> None:
        await call.progress(done, total, None)

    return await import_graph(services.gate, request, call.writer, call.agent, progress, services.hierarchy.type_)


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
