"""The export read: every node of the registry's labels (or those asked for) that passes the filters, page by
page, and the relationships between the nodes exported, each end named by its identity (`label:_key`).

Read-only at the engine. Its filters are evaluated in the statements, as parameters; relationships whose two ends
are not both exported are left out, so a filtered export is a graph of its own.
"""

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, time
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.clock import as_utc_text
from write_gate.core.cypher import exports as export_cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.export_records import (
    HIERARCHY_TYPE,
    ExportedGraph,
    exported_node,
    exported_relation,
)
from write_gate.core.identifiers import normalize_identifier
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import SchemaRegistry
from write_gate.services.gate import Gate
from write_gate.services.reads import Text

PAGE_SIZE = 1000


def _day_or_moment(value: Any) -> Any:
    """`2025-03-01` is a day (an end date takes all of it); anything else is read as a time."""
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value)
        except ValueError:
            return value
    return value


# A time or a day, advertised as a plain string (as ProvenanceQuery's `since`).
Moment = (
    Annotated[datetime | date, BeforeValidator(_day_or_moment), WithJsonSchema({"type": "string"})]
    | SkipJsonSchema[None]
)


# memory-mcp's export filter, and the gate's label and confidence filters beside it. (No docstring: it would be
# advertised in the tool's schema.)
class ExportFilter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    startDate: Moment = None  # noqa: N815 - memory-mcp's argument names
    endDate: Moment = None  # noqa: N815
    entityType: Text | SkipJsonSchema[None] = None  # noqa: N815
    labels: list[Text] | SkipJsonSchema[None] = None
    tags: Annotated[list[Text] | SkipJsonSchema[None], Field(description="Any of these.")] = None
    minConfidence: float | SkipJsonSchema[None] = None  # noqa: N815

    @field_validator("tags")
    @classmethod
    def _normalised(cls, tags: list[str] | None) -> list[str] | None:
        # Stored tags are lowercase and trimmed: so are the ones looked for. None (`[]`) filters nothing, as memory-mcp
        # reads an empty filter.
        return sorted({t.strip().lower() for t in tags if t.strip()}) or None if tags is not None else None

    def label_names(self, registry: SchemaRegistry) -> list[str]:
        """The registered labels asked for (a drifted spelling finds its label, as writes do); all of them when
        none is asked for. One the registry does not know is refused: an export never reaches the gate's own."""
        asked = [*(self.labels or []), *([self.entityType] if self.entityType else [])]
        if not asked:
            return registry.all_canonical_labels()
        found, unknown = set(), []
        for label in asked:
            identifier = normalize_identifier(label, "labels")
            canonical = identifier if registry.get_entry(identifier) else registry.remap_target(identifier)
            if canonical is None:
                unknown.append(identifier)
            else:
                found.add(canonical)
        if unknown:
            raise GateRejection(
                ErrorCode.SCHEMA_UNKNOWN_LABEL, "the filter names labels the registry does not have", labels=unknown
            )
        return sorted(found)

    def params(self, include_archived: bool) -> dict[str, Any]:
        return {
            "include_archived": include_archived,
            "start": _moment(self.startDate, end=False),
            "end": _moment(self.endDate, end=True),
            "min_confidence": self.minConfidence,
            "tags": self.tags,
        }


def _moment(value: datetime | date | None, *, end: bool) -> str | None:
    """As stored times are written, so they compare as text; a day alone is its first moment, or its last."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.max if end else time.min, tzinfo=UTC)
    return as_utc_text(value)


Progress = Callable[[int], Awaitable[None]]  # entities exported so far


async def no_progress(_done: int) -> None:
    return None


async def read_export(
    gate: Gate,
    filters: ExportFilter | None = None,
    *,
    include_archived: bool = False,
    page_size: int = PAGE_SIZE,
    progress: Progress = no_progress,
    hierarchy_type: str = HIERARCHY_TYPE,
) -> ExportedGraph:
    """The nodes label by label (sorted), each label in its engine's page order (`Dialect.pages_by_id`); then
    the relationships between them, by start node in that order, each node's in relationship id order.
    `progress` is told after every page; `hierarchy_type` is the child -> parent type
    whose end names each node's parentId."""
    filters = filters or ExportFilter()
    registry = gate.registry
    labels = filters.label_names(registry)
    params = filters.params(include_archived)
    graph = ExportedGraph()
    ids: dict[int, str] = {}  # engine id -> node id, of every node exported
    names: dict[int, str | None] = {}
    for label in labels:
        entry = registry.get_entry(label)
        declared = entry.merge_keys if entry is not None else ()
        by_id = gate.backend.dialect.pages_by_id
        after: int | str | None = None if by_id else ""  # None: from the label's first node, unbounded
        while True:
            statement = export_cypher.export_page(label, by_id, resume=after is not None)
            bound = {} if after is None else {"after": after}
            rows = await gate.reader.read(Statement(statement.text, {**params, **bound, "limit": page_size}))
            for row in rows:
                if row["id"] in ids:  # a node with two registered labels: exported under the first
                    continue
                node = exported_node(label, row["props"], declared)
                ids[row["id"]] = node.id
                names[row["id"]] = node.name
                graph.nodes.append(node)
            await progress(len(graph.nodes))
            if len(rows) < page_size:
                break
            after = rows[-1]["key"]
    parents: dict[str, str | None] = {}
    engine_ids = list(ids)
    for start in range(0, len(engine_ids), page_size):
        batch = engine_ids[start : start + page_size]
        rows = await gate.reader.read(Statement(export_cypher.EXPORT_RELATIONSHIPS.text, {"ids": batch}))
        for row in rows:
            if row["type"] == hierarchy_type:
                parents.setdefault(ids[row["start"]], row["end_name"])
            if row["end"] not in ids:
                continue
            graph.relations.append(
                exported_relation(
                    ids[row["start"]],
                    ids[row["end"]],
                    names[row["start"]],
                    names[row["end"]],
                    row["type"],
                    row["props"],
                )
            )
    if parents:
        graph.nodes = [node.with_parent(parents.get(node.id)) for node in graph.nodes]
    return graph
