"""`export_graph`: the export read in a format, as one text (the tool) or written out (the CLI)."""

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from write_gate.interchange.exports import render
from write_gate.services.export_read import ExportFilter, Progress, no_progress, read_export
from write_gate.services.gate import Gate

ExportFormat = Literal["json", "jsonl", "csv", "graphml", "gexf", "markdown", "dot", "mermaid"]
FORMATS: tuple[str, ...] = get_args(ExportFormat)


class ExportGraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: ExportFormat
    filter: ExportFilter | SkipJsonSchema[None] = None
    includeArchived: Annotated[bool, Field(description="Archived entities too.")] = False  # noqa: N815


class GraphExported(BaseModel):
    format: str
    content: str
    entities: int
    relations: int


async def export_graph(gate: Gate, request: ExportGraphRequest, progress: Progress = no_progress) -> GraphExported:
    graph = await read_export(gate, request.filter, include_archived=request.includeArchived, progress=progress)
    return GraphExported(
        format=request.format,
        content=render(request.format, graph),
        entities=len(graph.nodes),
        relations=len(graph.relations),
    )
