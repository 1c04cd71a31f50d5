"""The import_graph tool's work: a file's text in one of the formats, through the gate under a merge strategy;
or a lossless backup restored into the gate's (empty) graph."""

import contextlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from write_gate.access.agents import Agent
from write_gate.core.backup_file import check_backup
from write_gate.core.import_merge import Strategy
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.interchange.backup import ensure_empty, restore
from write_gate.interchange.import_parsers import PARSERS
from write_gate.interchange.importer import ImportAnswer, Progress, import_records, no_progress
from write_gate.services.gate import Gate
from write_gate.services.memory import WriterContext


class ImportGraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["json", "jsonl", "csv", "graphml", "backup"]
    data: Annotated[str, Field(description="The file's text.")]
    mergeStrategy: Annotated[  # noqa: N815 - memory-mcp's argument names
        Strategy, Field(description="For entities that exist; fail writes nothing if any does.")
    ] = "skip"
    dryRun: bool = False  # noqa: N815


async def import_graph(
    gate: Gate,
    request: ImportGraphRequest,
    writer: WriterContext,
    agent: Agent,
    progress: Progress = no_progress,
    hierarchy_type: str = DEFAULT_HIERARCHY_TYPE,
) -> ImportAnswer:
    if request.format == "backup":
        return await _restore(gate, request, progress)
    try:
        items = PARSERS[request.format](request.data)
    except ValueError as exc:
        raise GateRejection(ErrorCode.INVALID_INPUT, f"not a {request.format} import: {exc}", field="data") from exc
    return await import_records(
        gate,
        items,
        writer,
        agent,
        strategy=request.mergeStrategy,
        dry_run=request.dryRun,
        progress=progress,
        hierarchy_type=hierarchy_type,
    )


async def _restore(gate: Gate, request: ImportGraphRequest, progress: Progress) -> ImportAnswer:
    """Checked whole first; into an empty graph only; the registry it brings is loaded at once."""
    contents = check_backup(request.data.splitlines())  # a bad line (one nested too deeply too) refused by number
    total = len(contents.nodes) + len(contents.relationships)
    answer = ImportAnswer(dryRun=request.dryRun)
    if request.dryRun:
        await ensure_empty(gate.backend)
    else:
        await restore(gate.backend, contents)
        await progress(total, total)
        # A backup without a registry: the gate says so at each write, as on any graph without one.
        with contextlib.suppress(GateRejection):
            await gate.refresh()
    answer.entitiesCreated, answer.relationsCreated = len(contents.nodes), len(contents.relationships)
    return answer
