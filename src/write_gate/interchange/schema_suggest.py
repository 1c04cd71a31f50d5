"""`write-gate schema suggest memory.jsonl`: a draft registry for the types an official memory server's file
uses that the registry does not cover yet. Pure: the file's items and a registry in, a draft out.

Each type the registry resolves (canonical, absorbed, a case variant) is reported as covered. The others
are grouped by spelling (`works at`, `works-at` and `WorksAt` are one), and each group becomes one draft
entry named in the registry's style (`Planet`, `ORBITS`), absorbing every spelling seen, for an operator
to review and `schema load` before `import`. Unknown entity types would otherwise land on the fallback
label and unknown relation types be rejected.
"""

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from write_gate.core.identifiers import as_identifier
from write_gate.core.registry import SchemaRegistry
from write_gate.interchange.formats import BadLine, Line
from write_gate.services.memory import EntityIn


@dataclass
class Suggestion:
    entries: list[dict[str, Any]] = field(default_factory=list)  # the draft, as `schema load` reads it
    covered: list[tuple[str, str, int]] = field(default_factory=list)  # (type as written, canonical, uses)

    def document(self) -> dict[str, Any]:
        return {"entries": self.entries}


def _group_key(identifier: str) -> str:
    return identifier.replace("_", "").casefold()


def _words(identifier: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", identifier)
    return [word for word in spaced.split("_") if word]


def label_name(identifier: str) -> str:
    """`planet`, `space_ship`, `SpaceShip` -> `Planet`, `SpaceShip`, `SpaceShip`."""
    return "".join(word[:1].upper() + word[1:] for word in _words(identifier))


def type_name(identifier: str) -> str:
    """`orbits around`, `orbitsAround` -> `ORBITS_AROUND`."""
    return "_".join(word.upper() for word in _words(identifier))


def _groups(spellings: Counter[str]) -> dict[str, list[tuple[str, int]]]:
    """Identifier spellings grouped by what they would all be; most used first."""
    groups: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for spelling, uses in spellings.most_common():
        groups[_group_key(spelling)].append((spelling, uses))
    return groups


def suggest(items: Iterable[Line | BadLine], registry: SchemaRegistry) -> Suggestion:
    entity_types: Counter[str] = Counter()
    relation_types: Counter[str] = Counter()
    for item in items:
        if isinstance(item, BadLine):
            continue
        if isinstance(item.item, EntityIn):
            entity_types[item.item.entityType] += 1
        else:
            relation_types[item.item.relationType] += 1
    return suggest_counts(entity_types, relation_types, registry)


def _text(value: Any) -> str | None:
    return value.lstrip(":") or None if isinstance(value, str) else None


def drift_counts(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[Counter[str], Counter[str]]:
    """The entity and relation types rejected write calls (tool, arguments) named, counted: what a fleet sent
    that the registry did not take (the console's drift candidates, beside what the fallback label holds)."""
    entity_types: Counter[str] = Counter()
    relation_types: Counter[str] = Counter()
    for tool, arguments in calls:
        if tool == "write_node" and (label := _text(arguments.get("label"))):
            entity_types[label] += 1
        elif tool == "write_relationship":
            if kind := _text(arguments.get("type")):
                relation_types[kind] += 1
            for end in ("from_label", "to_label"):
                if label := _text(arguments.get(end)):
                    entity_types[label] += 1
        for entity in arguments.get("entities") or () if tool == "create_entities" else ():
            if isinstance(entity, Mapping) and (label := _text(entity.get("entityType"))):
                entity_types[label] += 1
        for relation in arguments.get("relations") or () if tool == "create_relations" else ():
            if isinstance(relation, Mapping) and (kind := _text(relation.get("relationType"))):
                relation_types[kind] += 1
    return entity_types, relation_types


def suggest_counts(entity_types: Counter[str], relation_types: Counter[str], registry: SchemaRegistry) -> Suggestion:
    """Draft entries for the entity and relation types (as written, with their uses) the registry does not cover."""
    out = Suggestion()
    unknown_labels: Counter[str] = Counter()
    for written, uses in sorted(entity_types.items()):
        identifier = as_identifier(written)
        target = identifier and (identifier if registry.get_entry(identifier) else registry.remap_target(identifier))
        if target:
            out.covered.append((written, target, uses))
        elif identifier:
            unknown_labels[identifier] += uses
    unknown_types: Counter[str] = Counter()
    for written, uses in sorted(relation_types.items()):
        identifier = as_identifier(written)
        target = identifier and (
            identifier if registry.get_relationship(identifier) else registry.relationship_remap_target(identifier)
        )
        if target:
            out.covered.append((written, target, uses))
        elif identifier:
            unknown_types[identifier] += uses
    taken = {*registry.all_canonical_labels(), *registry.all_relationship_types()}
    for spellings in _groups(unknown_labels).values():
        name = label_name(spellings[0][0])
        if name in taken:
            continue
        taken.add(name)
        out.entries.append(
            {
                "name": name,
                "description": f"Suggested from {sum(u for _, u in spellings)} entities typed "
                + ", ".join(repr(s) for s, _ in spellings)
                + ". Identity: name.",
                "required_properties": ["name"],
                "merge_keys": ["name"],
                "absorbs": sorted({s for s, _ in spellings} - {name}),
                "property_types": {"name": "string", "observations": "array<string>"},
            }
        )
    for spellings in _groups(unknown_types).values():
        name = type_name(spellings[0][0])
        if name in taken:
            continue
        taken.add(name)
        out.entries.append(
            {
                "name": name,
                "kind": "relationship",
                "description": f"Suggested from {sum(u for _, u in spellings)} relations typed "
                + ", ".join(repr(s) for s, _ in spellings)
                + ".",
                "absorbs": sorted({s for s, _ in spellings} - {name}),
            }
        )
    return out
