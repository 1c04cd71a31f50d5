"""`export_graph`: the export read in a format, as one text (the tool) or written out (the CLI); or the lossless
backup."""

import functools
import json
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.interchange.backup import dump
from write_gate.interchange.exports import render
from write_gate.services.export_read import ExportFilter, Progress, no_progress, read_export
from write_gate.services.gate import Gate
from write_gate.services.off_loop import off_the_loop

ExportFormat = Literal[
    "json",
    "jsonl",
    "csv",
    "graphml",
    "gexf",
    "markdown",
    "dot",
    "mermaid",
    "prov-turtle",
    "prov-jsonld",
    "prov-ntriples",
    "backup",
]
FORMATS: tuple[str, ...] = get_args(ExportFormat)
PROGRESS_EVERY = 5000  # backup lines between two progress notifications


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


async def export_graph(
    gate: Gate,
    request: ExportGraphRequest,
    progress: Progress = no_progress,
    hierarchy_type: str = DEFAULT_HIERARCHY_TYPE,
) -> GraphExported:
    if request.format == "backup":
        return await _backup(gate, request, progress)
    graph = await read_export(
        gate, request.filter, include_archived=request.includeArchived, progress=progress, hierarchy_type=hierarchy_type
    )
    size = len(graph.nodes) + len(graph.relations)
    return GraphExported(
        format=request.format,
        content=await off_the_loop(functools.partial(render, request.format, graph), size),
        entities=len(graph.nodes),
        relations=len(graph.relations),
    )


async def _backup(gate: Gate, request: ExportGraphRequest, progress: Progress) -> GraphExported:
    """The lossless backup (interchange/backup.py): every node and relationship as stored, the registry, history
    and archived entities included, so it takes no filter. Its last line counts what it holds."""
    if request.filter is not None:
        raise GateRejection(
            ErrorCode.INVALID_INPUT, "the backup format holds the whole graph: it takes no filter", field="filter"
        )
    lines: list[str] = []
    async for line in dump(gate.backend):
        lines.append(line)
        if len(lines) % PROGRESS_EVERY == 0:
            await progress(len(lines))
    end = json.loads(lines[-1])
    await progress(end["nodes"])
    return GraphExported(format="backup", content="".join(lines), entities=end["nodes"], relations=end["relationships"])
