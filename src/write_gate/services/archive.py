"""Seed 004's archive: `archive_entities` marks the entities that meet any criterion given (nothing is deleted;
every read then skips them unless asked), `restore_entities` takes them back. Both are recorded in history."""

from datetime import UTC, date, datetime, time
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_validator
from pydantic.json_schema import SkipJsonSchema

from write_gate.access.agents import Agent
from write_gate.core.clock import as_utc_text
from write_gate.core.cypher import archive as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.knowledge import MAX_IMPORTANCE, MIN_IMPORTANCE, EntityFilter
from write_gate.services.change_records import change_stamp
from write_gate.services.entities import EntityType, locate_every
from write_gate.services.gate import Gate, run_write
from write_gate.services.reads import TagsFilter, Text, display_name


class ArchiveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # A date or a time, advertised as a plain string (as the reads' `since`).
    olderThan: Annotated[  # noqa: N815 - memory-mcp's argument names
        datetime | date | SkipJsonSchema[None],
        WithJsonSchema({"type": "string", "description": "ISO date or time: last updated before it."}),
    ] = None
    importanceLessThan: (  # noqa: N815
        Annotated[float, Field(ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE + 1)] | SkipJsonSchema[None]
    ) = None
    tags: TagsFilter = None
    dryRun: Annotated[bool, Field(description="Only say what would be archived.")] = False  # noqa: N815

    @model_validator(mode="after")
    def _one_criterion(self) -> "ArchiveRequest":
        if self.olderThan is None and self.importanceLessThan is None and self.tags is None:
            raise ValueError("give at least one of olderThan, importanceLessThan, tags")
        return self

    def older_than(self) -> str | None:
        """As `last_updated` is written (UTC text); a date means its start, in UTC."""
        when = self.olderThan
        if when is None:
            return None
        return as_utc_text(when if isinstance(when, datetime) else datetime.combine(when, time(), tzinfo=UTC))


class RestoreRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entityNames: Annotated[list[Text], Field(min_length=1, description="The entities' names.")]  # noqa: N815
    entityType: EntityType = None  # noqa: N815


class Archived(BaseModel):
    archived: int
    entityNames: list[str]  # noqa: N815
    dryRun: bool = False  # noqa: N815


class Restored(BaseModel):
    restored: int
    entityNames: list[str]  # noqa: N815


def _criteria(request: ArchiveRequest) -> dict[str, Any]:
    tags = EntityFilter(tuple(request.tags) if request.tags is not None else None).params()["k_tags"]
    return {"older_than": request.older_than(), "importance_below": request.importanceLessThan, "k_tags": tags}


async def archive_entities(gate: Gate, request: ArchiveRequest, agent: Agent) -> Archived:
    criteria = _criteria(request)
    labels = tuple(gate.registry.all_canonical_labels())
    rows = await gate.reader.read(Statement(cypher.candidates(labels).text, criteria)) if labels else []
    agent.grant.check_labels({row["labels"][0] for row in rows})
    names = {row["id"]: display_name({"name": row["name"], "_key": row["key"]}) or f"#{row['id']}" for row in rows}
    if request.dryRun or not rows:
        return Archived(archived=len(names), entityNames=sorted(names.values()), dryRun=request.dryRun)
    change = change_stamp(agent.id)
    params = {"ids": sorted(names), **criteria, **change.params()}
    done = await run_write(gate.backend, Statement(cypher.ARCHIVE.text, params))  # those still matching
    archived = sorted(names[row["id"]] for row in done)
    return Archived(archived=len(archived), entityNames=archived)


async def restore_entities(gate: Gate, request: RestoreRequest, agent: Agent) -> Restored:
    """Every name is found first (ENTITY_NOT_FOUND for one that is not); one not archived is left as it is. A name
    held under several labels restores each of them, unless `entityType` names one."""
    names = list(dict.fromkeys(request.entityNames))
    targets = await locate_every(gate, names, request.entityType, field="entityNames")
    agent.grant.check_labels({t.label for t in targets})
    by_id = {t.id: t.name for t in targets}
    change = change_stamp(agent.id)
    done = await run_write(gate.backend, Statement(cypher.RESTORE.text, {"ids": sorted(by_id), **change.params()}))
    restored = sorted(by_id[row["id"]] for row in done)
    return Restored(restored=len(restored), entityNames=restored)
