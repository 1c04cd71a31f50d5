"""`write-gate import`: moving a memory server's data in (the graph out is interchange.exporting)."""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from write_gate.access.agents import Agent
from write_gate.core.model import GateRejection
from write_gate.interchange.formats import BadLine, Line
from write_gate.services.memory import ItemOutcome, MemoryService, WriterContext

# --- import --------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    counts: Counter[str] = field(default_factory=Counter)  # "entity created", "relation skipped", ...
    rejected: list[dict[str, Any]] = field(default_factory=list)  # line, error_code, message
    remapped: list[dict[str, Any]] = field(default_factory=list)  # line, from, to
    stopped: str | None = None  # why the import stopped early, if it did

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "rejected": self.rejected,
            "remapped": self.remapped,
            "stopped": self.stopped,
        }


def _record(report: ImportReport, kind: str, lines: list[Line], outcomes: list[ItemOutcome]) -> None:
    for outcome in outcomes:
        line = lines[outcome.index]
        report.counts[f"{kind} {outcome.status}"] += 1
        if outcome.status == "rejected":
            report.rejected.append(
                {"line": line.number, "kind": kind, "error_code": outcome.error_code, "message": outcome.message}
            )
        if outcome.remapped_from:
            report.remapped.append(
                {"line": line.number, "kind": kind, "from": outcome.remapped_from, "to": outcome.label}
            )


async def import_lines(
    memory: MemoryService,
    items: Iterable[Line | BadLine],
    writer: WriterContext,
    agent: Agent,
    *,
    batch_size: int = 500,
    dry_run: bool = False,
    advance: Callable[[int], None] = lambda _n: None,
) -> ImportReport:
    """Entities first (so relations find their endpoints), in batches; every line gets an outcome."""
    report = ImportReport()
    entities: list[Line] = []
    relations: list[Line] = []
    for item in items:
        if isinstance(item, BadLine):
            report.counts["line rejected"] += 1
            report.rejected.append(
                {"line": item.number, "kind": "line", "error_code": "INVALID_INPUT", "message": item.reason}
            )
            advance(1)
        else:
            (entities if item.kind == "entity" else relations).append(item)
    would_create: dict[str, str] = {}
    try:
        for start in range(0, len(entities), batch_size):
            batch = entities[start : start + batch_size]
            outcomes, _ = await memory.create_entities(
                [line.item for line in batch], writer, agent, atomic=False, write=not dry_run
            )
            _record(report, "entity", batch, outcomes)
            would_create.update({batch[o.index].item.name: o.label for o in outcomes if o.status == "created"})
            advance(len(batch))
        for start in range(0, len(relations), batch_size):
            batch = relations[start : start + batch_size]
            outcomes, _ = await memory.create_relations(
                [line.item for line in batch],
                writer,
                agent,
                atomic=False,
                write=not dry_run,
                known=would_create if dry_run else None,
            )
            _record(report, "relation", batch, outcomes)
            advance(len(batch))
    except GateRejection as exc:
        # The engine went away mid-import: what was written stays written, and the report says where it stopped.
        report.stopped = f"{exc.rejected.error_code}: {exc.rejected.message}"
    report.rejected.sort(key=lambda item: item["line"])
    report.remapped.sort(key=lambda item: item["line"])
    return report
