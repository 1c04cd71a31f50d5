"""MemoryMesh's metadata ("Key: Value" strings, seed 000 section 9) read against a registry entry. Pure.

MemoryMesh keeps a node's typed fields as metadata (`add_npc {role: "Wizard"}` stores "Role: Wizard"), so its
agents write them that way to `add_nodes` too. An entry whose key reads as one of the label's declared plain
properties (case, spaces and underscores aside, or a spelling it absorbs) is that property's value as well, so
the registry checks it (required fields, enums) as it checks the typed tools' fields; a text list property takes
the value split at commas, as MemoryMesh joins one. Every entry stays in the metadata as written, showing the
value its field holds now.
"""

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from write_gate.core.identity import fold
from write_gate.core.knowledge import OBSERVATIONS
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.properties import name_fold
from write_gate.core.registry import SchemaEntry

SEPARATOR = ": "  # MemoryMesh's parseEntry splits at the first colon and space


def parse_entry(entry: str) -> tuple[str, str] | None:
    """(key, value) of "Key: Value", or None for an entry without the separator."""
    key, sep, value = entry.partition(SEPARATOR)
    return (key.strip(), value.strip()) if sep and key.strip() else None


def key_fold(key: str) -> str:
    """An entry's key as the property names it folds to ("Current Location" and `currentLocation` alike)."""
    return name_fold(key.replace(" ", ""))


def _named(metadata: Iterable[str]) -> set[str]:
    """The folded keys of the "Key: Value" entries among the metadata."""
    return {key_fold(parsed[0]) for text in metadata if (parsed := parse_entry(text))}


def _scalar(text: str, kind: str | None) -> Any:
    """An entry's value as the declared type reads it ("Level: 3" is 3 for an integer `level`, as MemoryMesh's
    `add_player_character {level: 3}` writes "Level: 3"); text that does not read so stays text, which the
    registry then refuses by its type (SCHEMA_TYPE_MISMATCH), not as missing."""
    try:
        if kind in ("integer", "number") and re.fullmatch(r"[+-]?\d{1,18}", text):
            return int(text)  # a number written whole stays whole: "Gold: 3" shows as written, not "3.0"
        if kind == "number" and math.isfinite(number := float(text)):
            return number
    except ValueError:
        return text
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _targets(entry: SchemaEntry) -> dict[str, str]:
    """Each fold that names one of the entry's plain properties (not a merge key, which the node's name is, nor a
    relationship field, which is the node's edges)."""
    targets: dict[str, str] = {}
    for name, spec in entry.property_types.items():
        if name in entry.merge_keys or spec.relationship is not None:
            continue
        for spelling in (name, *spec.absorbs):
            targets[name_fold(spelling)] = name
    return targets


def metadata_properties(entry: SchemaEntry | None, metadata: Iterable[str]) -> dict[str, Any]:
    """The declared properties the metadata sets. Two entries for one property are INVALID_INPUT (which one
    holds is not for the gate to guess)."""
    if entry is None:
        return {}
    targets = _targets(entry)
    found: dict[str, Any] = {}
    for text in metadata:
        parsed = parse_entry(text)
        if parsed is None:
            continue
        key, value = parsed
        name = targets.get(key_fold(key))
        if name is None:
            continue
        if name in found:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"two metadata entries set {name}: keep one",
                field="metadata",
                reason="property_given_twice",
                property=name,
            )
        spec = entry.property_types[name]
        if spec.type == "array":
            items = [_scalar(part.strip(), spec.items) for part in value.split(",") if part.strip()]
            if spec.items == "number" and any(isinstance(item, float) for item in items):
                items = [float(item) if isinstance(item, int) else item for item in items]  # one kind a list
            found[name] = items
        else:
            found[name] = _scalar(value, spec.type)
    return found


def display_key(name: str) -> str:
    """MemoryMesh's PropertyDisplayName: camelCase or snake_case to Title Case with spaces (`currentLocation`,
    `current_location`: "Current Location")."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return " ".join(word[:1].upper() + word[1:] for word in spaced.split())


def _shown(value: Any) -> str:
    return ", ".join(str(item) for item in value) if isinstance(value, list) else str(value)


def with_declared_fields(
    entry: SchemaEntry | None,
    metadata: list[str],
    properties: Mapping[str, Any],
    links: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """A node's metadata as MemoryMesh keeps it: the entries as written, then "Key: Value" for each declared
    field the node holds that no entry already names (a typed tool stores `role` as a property, where MemoryMesh
    stores "Role: Wizard"; an array joined with ", ", as MemoryMesh joins one). A relationship field's value is
    the names its relationships lead to, `links` (relationship type: the names the node's own lead to), as
    MemoryMesh writes "Current Location: Rivendell" beside the edge. An entry as written that names a field the
    node holds shows the value it holds now, under the key as written: `update_npc` to Mordor replaces "Current
    Location: Rivendell" (seed 000, 3.4), whichever tool wrote the entry."""
    if entry is None:
        return list(metadata)
    links = links or {}
    held: dict[str, tuple[str, str]] = {}  # a field's fold, and its spellings': (its name, the value it shows)
    # In the schema file's order (the registry keeps it), relationship fields among the others: seed 000, 3.7.
    for name, spec in entry.property_types.items():
        if name in entry.merge_keys or name == OBSERVATIONS:
            continue
        value = links.get(spec.relationship.type) if spec.relationship is not None else properties.get(name)
        # An emptied list is held, shown "Traits: " as seed 000's update (5.3) rebuilds it: its key set to the
        # empty join. A relationship field without edges holds nothing.
        if value is not None and (value != [] or spec.relationship is None):
            for spelling in (name, *spec.absorbs):
                held.setdefault(name_fold(spelling), (name, _shown(value)))
    shown, named = [], set()
    for text in metadata:
        parsed = parse_entry(text)
        found = held.get(key_fold(parsed[0])) if parsed is not None else None
        if parsed is not None and found is not None:
            if found[0] in named:
                continue  # a field shows once: "Status: Missing" then add_metadata "Status: Active" showed it twice
            named.add(found[0])
            text = f"{parsed[0]}{SEPARATOR}{found[1]}"
        shown.append(text)
    added = [
        f"{display_key(name)}{SEPARATOR}{value}" for name, value in dict(held.values()).items() if name not in named
    ]
    return [*shown, *added]


def _plain_fields(entry: SchemaEntry, properties: Mapping[str, Any]) -> dict[str, Any]:
    """The declared fields the node holds that its metadata shows as "Key: Value" from its properties (not its
    merge keys, which are its name, nor its relationship fields, which are its edges, nor the metadata itself,
    which a registry entry may declare as `observations`). An emptied list is held: it shows "Traits: "."""
    return {
        name: properties[name]
        for name, spec in entry.property_types.items()
        if name not in entry.merge_keys
        and name != OBSERVATIONS
        and spec.relationship is None
        and properties.get(name) is not None
    }


def _required(entry: SchemaEntry, name: str, why: str) -> GateRejection:
    return GateRejection(
        ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
        f"{entry.label} requires {name}: {why}",
        label=entry.label,
        missing=[name],
        field="metadata",
    )


def dropped_fields(
    entry: SchemaEntry | None, metadata: Iterable[str], properties: Mapping[str, Any]
) -> dict[str, None]:
    """What a replacement of the metadata by `metadata` removes of the declared fields the node holds: each one no
    entry names (MemoryMesh's update_nodes replaces the whole array, "Role: Wizard" among it). A required field
    is kept: the schema holds it, and the answer shows it still."""
    if entry is None:
        return {}
    named = _named(metadata)
    required = set(entry.required_properties)
    return {
        name: None for name in _plain_fields(entry, properties) if name_fold(name) not in named and name not in required
    }


def deleted_fields(entry: SchemaEntry | None, entries: Iterable[str], properties: Mapping[str, Any]) -> dict[str, None]:
    """The declared fields that entries to delete name with the value the node holds ("Role: Wizard" where its
    role is Wizard): MemoryMesh removes the entry, which here is the property. A required one is refused."""
    if entry is None:
        return {}
    held = {name_fold(name): (name, _shown(value)) for name, value in _plain_fields(entry, properties).items()}
    removed: dict[str, None] = {}
    for text in entries:
        parsed = parse_entry(text)
        found = held.get(key_fold(parsed[0])) if parsed is not None else None
        if parsed is None or found is None or found[1] != parsed[1]:
            continue
        if found[0] in entry.required_properties:
            raise _required(entry, found[0], f"the entry {text!r} cannot be deleted (update it instead)")
        removed[found[0]] = None
    return removed


def entry_search_value(query: str) -> str | None:
    """The part of a folded search query after its first ": ", trimmed: a query that may run across a "Key: Value"
    entry's separator ("role: wiz") finds in such an entry only nodes whose values hold that part; None when the
    query has no separator or nothing after it."""
    _key, sep, rest = query.partition(SEPARATOR)
    return rest.strip() or None if sep else None


def shows_query(query: str, name: str, node_type: str, metadata: Iterable[str]) -> bool:
    """MemoryMesh's search match (seed 000, 4.5), the folded `query` a substring of the node's name, its type or
    one of its metadata entries, as the answer shows them. Not of a stored property the answer leaves out: a
    node's provenance ("llm", its agent's name, `_schema_remap_from` ":npc") would match a query the node does
    not show."""
    return any(query in fold(text) for text in (name, node_type, *metadata))


def names_a_key(entry: SchemaEntry, query: str) -> bool:
    """Whether the folded `query` lies within the "Key: " of an entry a node of this type shows for one of its fields
    (`with_declared_fields`: every declared field but the merge keys, which are the node's name): "status" and
    "us: " do for a type with a `status`, so every such node that holds the field shows them."""
    return any(
        query in fold(display_key(name)) + SEPARATOR for name in entry.property_types if name not in entry.merge_keys
    )
