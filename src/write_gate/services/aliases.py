"""Following aliases to their survivor, on the graph (so every gate sharing it agrees; nothing is cached).

Ordinary writes pay nothing here: their statements refuse to land on an alias (`core.cypher.aliases`), and
only then does the gate ask where the alias leads and write there.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from write_gate.core.cypher.aliases import alias_target, node_id
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import is_identifier
from write_gate.core.identity import identity_key
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import SchemaRegistry
from write_gate.core.resolution import keys_of

# A merge into a node that was itself merged later makes a chain; past this many steps it is a defect.
MAX_HOPS = 16

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]


@dataclass(frozen=True)
class Survivor:
    label: str
    keys: dict[str, Any]


async def survivor_of(read: Read, registry: SchemaRegistry, label: str, key: str) -> Survivor | None:
    """Where the node of `label` and `key` leads, if it is an alias; None if it is not one (or is absent)."""
    hops = 0
    while True:
        rows = await read(Statement(alias_target(label).text, {"key": key}))
        if not rows:
            return None if hops == 0 else _broken(label)
        row = rows[0]
        if row["key"] is None:
            return None if hops == 0 else Survivor(label, _keys(registry, label, key, row["props"]))
        label, key, hops = row["label"], row["key"], hops + 1
        if hops > MAX_HOPS or not isinstance(label, str) or not is_identifier(label):
            return _broken(label)


def _keys(registry: SchemaRegistry, label: str, key: str, props: dict[str, Any]) -> dict[str, Any]:
    """The survivor's merge keys: read back from its `_key`, or (hashed) from its entry's merge keys."""
    keys = keys_of(key)
    if keys is not None:
        return keys
    entry = registry.get_entry(label)
    return {name: props.get(name) for name in (entry.merge_keys if entry else ())}


SURVIVOR_DELETED = "survivor_deleted"


def _broken(label: Any) -> Survivor:
    # The survivor was deleted after the merge (deletes do not follow aliases), or the chain is corrupt.
    raise GateRejection(
        ErrorCode.INVALID_INPUT,
        "this key was merged into a node that no longer exists; nothing was written",
        reason=SURVIVOR_DELETED,
    )


def addressed_to(request: Any, survivor: Survivor, label_field: str, keys_field: str) -> Any:
    """The same request addressed to the survivor. A node's properties repeating the alias's own merge keys are
    dropped: they are the alias's identity, which the survivor does not take."""
    update: dict[str, Any] = {label_field: survivor.label, keys_field: survivor.keys}
    if keys_field == "merge_keys":
        old_keys = getattr(request, keys_field)
        update["properties"] = {k: v for k, v in request.properties.items() if k not in old_keys}
    return request.model_copy(update=update)


@dataclass(frozen=True)
class Alias:
    """A node found that is an alias: its id, and the label and `_key` of the node it was merged into."""

    id: int
    label: str
    key: str


async def survivor_ids(
    read: Read, registry: SchemaRegistry, aliases: list[Alias], gone: set[int] | None = None
) -> dict[int, int]:
    """For the aliases found, their survivor's id (a read shows the survivor, never the alias). An alias whose
    survivor no longer exists is refused (survivor_deleted), or, given `gone` (a read: the name leads to no
    entity now, and the other names are still answered), added to it."""
    found: dict[int, int] = {}
    for alias in aliases:
        try:
            survivor = await _chain_end(read, registry, alias.label, alias.key)
        except GateRejection as exc:
            if gone is None or exc.rejected.details.get("reason") != SURVIVOR_DELETED:
                raise
            gone.add(alias.id)
            continue
        hits = await read(Statement(node_id(survivor.label).text, {"key": identity_key(survivor.keys)}))
        if hits:
            found[alias.id] = hits[0]["id"]
    return found


async def survivor_names(
    read: Read, registry: SchemaRegistry, found: dict[str, list[tuple[int, list[str]]]], aliases: list[Alias]
) -> dict[str, str]:
    """The memory profile's names that are aliases, each with its survivor's name (by name, as that profile
    addresses entities). `found` and `aliases`: what the names' look-up answered."""
    ids = {node_id: name for name, hits in found.items() for node_id, _ in hits}
    renamed: dict[str, str] = {}
    for alias in aliases:
        name = (await _chain_end(read, registry, alias.label, alias.key)).keys.get("name")
        if isinstance(name, str) and alias.id in ids:
            renamed[ids[alias.id]] = name
    return renamed


async def _chain_end(read: Read, registry: SchemaRegistry, label: str, key: str) -> Survivor:
    """The survivor an alias names (`label`, `key`), or the one that survivor was merged into since."""
    survivor = await survivor_of(read, registry, label, key)
    if survivor is not None:
        return survivor
    rows = await read(Statement(alias_target(label).text, {"key": key}))
    if not rows:
        return _broken(label)
    return Survivor(label, _keys(registry, label, key, rows[0]["props"]))
