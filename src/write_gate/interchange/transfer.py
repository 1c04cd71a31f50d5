"""`write-gate import`: moving a memory server's data in (the graph out is interchange.exporting)."""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from write_gate.access.agents import Agent
from write_gate.core.model import GateRejection
from write_gate.interchange.formats import BadLine, Line
from write_gate.services.memory import EntityIn, ItemOutcome, MemoryService, RelationIn, WriterContext

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


def _record(report: ImportReport, kind: str, batch: Sequence[tuple[int, Any]], outcomes: list[ItemOutcome]) -> None:
    for outcome in outcomes:
        number, _item = batch[outcome.index]
        report.counts[f"{kind} {outcome.status}"] += 1
        if outcome.status == "rejected":
            report.rejected.append(
                {"line": number, "kind": kind, "error_code": outcome.error_code, "message": outcome.message}
            )
        if outcome.remapped_from:
            report.remapped.append({"line": number, "kind": kind, "from": outcome.remapped_from, "to": outcome.label})


def _repeat(outcome: ItemOutcome) -> ItemOutcome:
    if outcome.status != "created":
        return outcome
    return ItemOutcome(
        index=outcome.index, status="skipped", label=outcome.label, message="an entity with this name exists"
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
    # Each item with its line's number, entities and relations apart.
    entities: list[tuple[int, EntityIn]] = []
    relations: list[tuple[int, RelationIn]] = []
    for item in items:
        if isinstance(item, BadLine):
            report.counts["line rejected"] += 1
            report.rejected.append(
                {"line": item.number, "kind": "line", "error_code": "INVALID_INPUT", "message": item.reason}
            )
            advance(1)
        elif isinstance(item.item, EntityIn):
            entities.append((item.number, item.item))
        else:
            relations.append((item.number, item.item))
    would_create: dict[str, str] = {}
    try:
        for start in range(0, len(entities), batch_size):
            entity_batch = entities[start : start + batch_size]
            outcomes, _ = await memory.create_entities(
                [entity for _number, entity in entity_batch], writer, agent, atomic=False, write=not dry_run
            )
            if dry_run:  # a name an earlier batch would create is there by now in a real import: it is skipped
                outcomes = [_repeat(o) if entity_batch[o.index][1].name in would_create else o for o in outcomes]
            _record(report, "entity", entity_batch, outcomes)
            would_create.update(
                {entity_batch[o.index][1].name: o.label for o in outcomes if o.status == "created" and o.label}
            )
            advance(len(entity_batch))
        for start in range(0, len(relations), batch_size):
            relation_batch = relations[start : start + batch_size]
            outcomes, _ = await memory.create_relations(
                [relation for _number, relation in relation_batch],
                writer,
                agent,
                atomic=False,
                write=not dry_run,
                known=would_create if dry_run else None,
            )
            _record(report, "relation", relation_batch, outcomes)
            advance(len(relation_batch))
    except GateRejection as exc:
        # The engine went away mid-import: what was written stays written, and the report says where it stopped.
        report.stopped = f"{exc.rejected.error_code}: {exc.rejected.message}"
    report.rejected.sort(key=lambda item: item["line"])
    report.remapped.sort(key=lambda item: item["line"])
    return report
