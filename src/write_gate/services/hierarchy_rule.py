"""The hierarchy (seed 004: one parent per child, no cycle) kept by every write of its type, not set_entity_parent
alone: a link written through write_relationship(s), create_relations, MemoryMesh's add_edges, a typed tool's
relationship property or an import that would give a child a second parent or make a cycle is refused, and says
which. The statement itself checks
(core/cypher/hierarchy.keeping_one_parent), so two writers racing cannot get past it together; this reads why
it wrote nothing."""

from collections.abc import Awaitable, Callable
from typing import Any

from write_gate.core.cypher.hierarchy import breach, lineage
from write_gate.core.cypher.statement import Endpoint, Statement
from write_gate.core.model import ErrorCode, GateRejection

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]


def hierarchy_cycle(field: str = "to_keys") -> GateRejection:
    """The parent named in `field` is the entity itself or one of its descendants (set_entity_parent's too)."""
    return GateRejection(
        ErrorCode.HIERARCHY_CYCLE, "the parent is the entity itself or one of its descendants", field=field
    )


def one_parent(type_: str, why: str, **details: Any) -> GateRejection:
    """A second parent, for the reason `why` says; set_entity_parent is how a child moves."""
    return GateRejection(
        ErrorCode.CONFLICT,
        f"{why} ({type_} is the hierarchy's type: one parent each); set_entity_parent moves a child",
        reason="one_parent",
        type=type_,
        **details,
    )


async def _breach(read: Read, type_: str, child: Endpoint, parent: Endpoint) -> dict[str, Any] | None:
    """The `breach` read of a link from `child` to `parent`; None where either is missing."""
    statement = breach(type_, child.label, parent.label)
    rows = await read(Statement(statement.text, {"child_key": child.key, "parent_key": parent.key}))
    return rows[0] if rows else None


async def hierarchy_breach(read: Read, type_: str, child: Endpoint, parent: Endpoint) -> GateRejection | None:
    """Why a link of the hierarchy's type from `child` to `parent` was not written (`read`: on the write path, as the
    gate reads what it is about to write); None when it would now be."""
    row = await _breach(read, type_, child, parent)
    if row is None:
        return None  # one of them is gone: the caller reads that
    if row["cycle"]:
        return hierarchy_cycle()
    if parents := row["parents"]:
        return one_parent(type_, "the entity has a parent already", parent_keys=sorted(parents))
    return None


async def parent_below(read: Read, type_: str, child: Endpoint, parent: Endpoint) -> bool:
    """Whether `parent` is `child` or one of its descendants (a link from one to the other would close a cycle);
    False where either is missing."""
    row = await _breach(read, type_, child, parent)
    return row is not None and bool(row["cycle"])


async def hierarchy_breaches(
    read: Read, type_: str, links: list[tuple[int, Endpoint, Endpoint]]
) -> dict[int, GateRejection]:
    """Of a call's links of the hierarchy's type (index, child, parent), those that would break it, each with its
    refusal, before any is written: a second parent or a cycle in the graph, or a child given two parents by the
    call itself."""
    refused: dict[int, GateRejection] = {}
    parents: dict[tuple[str, str], str] = {}
    for i, child, parent in links:
        if parents.setdefault((child.label, child.key), parent.key) != parent.key:
            refused[i] = one_parent(type_, "the call gives the entity two parents")
        elif refusal := await hierarchy_breach(read, type_, child, parent):
            refused[i] = refusal
    return refused


async def merge_breach(read: Read, type_: str, members: list[int]) -> GateRejection | None:
    """Why merging these nodes (ids, the survivor's among them) would break the hierarchy, the survivor taking
    every link of theirs: one is another's ancestor (its links would fold into a cycle), or they have more than one
    parent outside the group between them (the survivor would have them all); None when it would not."""
    parents: set[int] = set()
    group = set(members)
    for member in members:
        [row] = await read(Statement(lineage(type_).text, {"id": member}))
        if group & set(row["ancestors"]):
            return GateRejection(
                ErrorCode.HIERARCHY_CYCLE,
                "one entity merged is another's ancestor: the survivor would be its own; set_entity_parent first",
                field="merged",
            )
        parents |= set(row["parents"]) - group
    if len(parents) > 1:
        return one_parent(type_, f"the entities merged have {len(parents)} parents between them")
    return None
