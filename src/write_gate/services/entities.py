"""Addressing one entity the way the knowledge tools do: by its display name (as `open_nodes` finds it), with
its label (`entityType`) when the name exists under several. A merged name leads to its survivor."""

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import as_identifier
from write_gate.core.identity import KEY_FIELD
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.resolution import keys_of
from write_gate.services.aliases import survivor_ids
from write_gate.services.gate import Gate
from write_gate.services.reads import Text

# The argument that picks one label of a name held under several, as every tool that addresses by name takes it.
EntityType = Annotated[Text | SkipJsonSchema[None], Field(description="Its label, if the name has several.")]

# Read-only: what addressing needs of the nodes found by name. Parameters: `ids`.
_NODES = Statement(
    f"UNWIND $ids AS i\nMATCH (n) WHERE id(n) = i\nRETURN id(n) AS id, labels(n) AS labels, n.{KEY_FIELD} AS key,\n"
    "       properties(n) AS props"
)


@dataclass(frozen=True)
class Located:
    """An entity found: its node id, label, identity (`_key`) and merge keys, and the name it was asked by."""

    id: int
    label: str
    key: str
    name: str
    keys: dict[str, Any]


def _merge_keys(gate: Gate, label: str, key: str, props: dict[str, Any]) -> dict[str, Any]:
    keys = keys_of(key)
    if keys is not None:
        return keys
    entry = gate.registry.get_entry(label)  # a hashed identity: its entry's keys, as stored
    return {name: props.get(name) for name in (entry.merge_keys if entry else ())}


def not_found(name: str, field: str = "entityName") -> GateRejection:
    return GateRejection(ErrorCode.ENTITY_NOT_FOUND, f"Entity with name {name} not found", field=field)


def _label_wanted(gate: Gate, entity_type: str) -> str:
    """The canonical label an `entityType` names (a drifted spelling is remapped, as writes remap it)."""
    label = as_identifier(entity_type) or entity_type
    registry = gate.registry
    if registry.get_entry(label) is not None:
        return label
    return registry.remap_target(label) or label


async def _candidates(
    gate: Gate, names: list[str], entity_type: str | None, field: str
) -> list[tuple[str, list[dict[str, Any]], str | None]]:
    """Each name with the nodes it names (a merged name leads to its survivor), narrowed to `entity_type`'s
    label when given; ENTITY_NOT_FOUND for a name with none."""
    named = await gate.reader.named(names)
    survivors = await survivor_ids(gate.reader.read, gate.registry, named.aliases)
    ids = sorted({survivors.get(i, i) for hits in named.found.values() for i, _ in hits})
    rows = await gate.reader.read(Statement(_NODES.text, {"ids": ids})) if ids else []
    nodes: dict[int, dict[str, Any]] = {row["id"]: row for row in rows}
    wanted = _label_wanted(gate, entity_type) if entity_type is not None else None
    found = []
    for name in names:
        hits = [nodes[survivors.get(i, i)] for i, _ in named.found.get(name, []) if survivors.get(i, i) in nodes]
        hits = list({row["id"]: row for row in hits}.values())
        if wanted is not None:
            hits = [row for row in hits if wanted in row["labels"]]
        if not hits:
            raise not_found(name, field)
        found.append((name, hits, wanted))
    return found


def _located(gate: Gate, name: str, row: dict[str, Any], wanted: str | None) -> Located:
    label = wanted if wanted is not None else row["labels"][0]
    return Located(row["id"], label, row["key"], name, _merge_keys(gate, label, row["key"], row["props"]))


async def locate_all(
    gate: Gate, names: list[str], entity_type: str | None = None, field: str = "entityName"
) -> list[Located]:
    """Each name's entity, in order; ENTITY_NOT_FOUND for a name with none, INVALID_INPUT (with the candidate
    labels) for one found under several labels and no `entity_type` to choose."""
    located = []
    for name, hits, wanted in await _candidates(gate, names, entity_type, field):
        if len(hits) > 1:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "this name exists under several labels: pass entityType",
                field="entityType",
                labels=sorted(row["labels"][0] for row in hits),
            )
        located.append(_located(gate, name, hits[0], wanted))
    return located


async def locate_every(
    gate: Gate, names: list[str], entity_type: str | None = None, field: str = "entityNames"
) -> list[Located]:
    """Every entity each name names, in order: for the tools that take names alone (memory-mcp's arguments),
    where a name held under several labels means each of them, or the one `entity_type` names."""
    return [
        _located(gate, name, row, wanted)
        for name, hits, wanted in await _candidates(gate, names, entity_type, field)
        for row in hits
    ]


async def locate(gate: Gate, name: str, entity_type: str | None = None, field: str = "entityName") -> Located:
    return (await locate_all(gate, [name], entity_type, field))[0]
