"""Property names under the registry, as labels are: declared names, their drift, and what to do with the rest.

An entry declares the names in its `property_types`, `required_properties` and `merge_keys`. Under the `remap`
and `reject` policies a name that is not declared but reads as one is remapped to it: the same letters in
another case or with other underscores (`Age`, `E_Mail`, `eMail` -> `email`), or a spelling the property
`absorbs`. What matches nothing is kept as written (`remap`) or refused (`reject`). `allow` is the gate as it
was: no checks, no remapping. Pure: each write path calls `resolve_property_names` and writes what it returns.
"""

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from write_gate.core.identifiers import PROTECTED_FIELDS
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import PropertyType, SchemaEntry, UndeclaredPolicy

ARROW = "→"


def name_fold(name: str) -> str:
    """What two spellings of one name share: case and underscores do not count (`e_mail`, `EMail`, `email`).
    Only identifiers reach here, so an underscore is the only separator a name can hold."""
    return name.replace("_", "").casefold()


def declared_names(entry: SchemaEntry) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*entry.merge_keys, *entry.required_properties, *entry.property_types]))


def effective_policy(entry: SchemaEntry, default: UndeclaredPolicy) -> UndeclaredPolicy:
    """write_node and write_relationship: the entry's own policy, else the gate's setting."""
    return entry.undeclared_properties or default


def typed_tool_policy(entry: SchemaEntry) -> UndeclaredPolicy:
    """The typed tools advertise their fields, so without a policy of its own an entry's tools refuse names it
    does not define, unless it takes additional properties (seed 000's `additionalProperties: true`): then they
    are kept, and drift of a defined name is remapped to it. The input schema says `additionalProperties: true`
    exactly when this is not `reject`."""
    if entry.undeclared_properties is not None:
        return entry.undeclared_properties
    return UndeclaredPolicy.REMAP if entry.additional_properties else UndeclaredPolicy.REJECT


def absorb_clashes(property_types: Mapping[str, PropertyType], declared: Iterable[str]) -> list[str]:
    """Why an entry's property absorbs cannot be loaded: a spelling absorbed by two properties, one that reads as
    another declared name (it would take that name's writes), or one that reads as a field the gate owns (a
    computed one, or any `_` name). Empty when they are fine."""
    computed = {name_fold(name) for name in PROTECTED_FIELDS}
    owners: dict[str, set[str]] = defaultdict(set)
    for name in declared:
        owners[name_fold(name)].add(name)
    problems: list[str] = []
    absorbed: dict[str, str] = {}
    for prop, spec in property_types.items():
        for alias in spec.absorbs:
            fold = name_fold(alias)
            other = absorbed.setdefault(fold, prop)
            if other != prop:
                problems.append(f"{alias} is absorbed by both {other} and {prop}")
            elif others := sorted(owners[fold] - {prop}):
                problems.append(f"{alias}, absorbed by {prop}, reads as the declared {others[0]}")
            if fold in computed or alias.startswith("_"):
                problems.append(f"{alias}, absorbed by {prop}, reads as a field the gate owns")
    return problems


def _targets(entry: SchemaEntry, also_declared: Iterable[str]) -> tuple[frozenset[str], Mapping[str, str | None]]:
    """Declared names, and each fold that leads to exactly one of them (None where it leads to two: the names
    `first_name` and `firstName` both declared, say, leave `FirstName` to the policy)."""
    absorbs = tuple((prop, spec.absorbs) for prop, spec in entry.property_types.items() if spec.absorbs)
    return _index(declared_names(entry), absorbs, frozenset(also_declared))


@functools.lru_cache(maxsize=1024)  # the same few entries come through on every write
def _index(
    declared_in_entry: tuple[str, ...], absorbs: tuple[tuple[str, tuple[str, ...]], ...], also: frozenset[str]
) -> tuple[frozenset[str], Mapping[str, str | None]]:
    declared = frozenset(declared_in_entry) | also
    by_fold: dict[str, set[str]] = defaultdict(set)
    for name in declared:
        by_fold[name_fold(name)].add(name)
    for prop, aliases in absorbs:
        for alias in aliases:
            by_fold[name_fold(alias)].add(prop)
    return declared, {fold: next(iter(names)) if len(names) == 1 else None for fold, names in by_fold.items()}


@functools.lru_cache(maxsize=8)
def _computed_folds(protected: frozenset[str]) -> frozenset[str]:
    return frozenset(name_fold(name) for name in protected)


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Renamed:
    """A map with every name as the entry declares it, each value's kind, and the remaps made ("e_mail→email")."""

    values: dict[str, Any]
    kinds: dict[str, str]
    remaps: tuple[str, ...] = ()


def resolve_property_names(
    entry: SchemaEntry,
    values: Mapping[str, Any],
    kinds: Mapping[str, str],
    policy: UndeclaredPolicy,
    *,
    what: str,
    protected: frozenset[str] = PROTECTED_FIELDS,
    also_declared: Iterable[str] = (),
) -> Renamed:
    """`values` has passed `clean_map` (identifiers) and `check_protected` (no gate-computed field under any case).
    `what` names the map in rejections (`properties`, `from_keys`); `also_declared`, names a write path owns
    whatever the entry says (the memory profile's `observations`). Rejections name names, never values."""
    if policy is UndeclaredPolicy.ALLOW:
        return Renamed(dict(values), dict(kinds))
    declared, by_fold = _targets(entry, also_declared)
    computed = _computed_folds(protected)
    target_of: dict[str, str] = {}
    unknown: list[str] = []
    for key in values:
        fold = name_fold(key)
        if key in declared:
            target_of[key] = key
        elif fold in computed:  # `extractionMethod`: a gate-computed field, not a new property
            raise GateRejection(
                ErrorCode.SCHEMA_PROTECTED_FIELD,
                f"{key} is spelled like a field the gate computes; a write cannot set it",
                fields=[key],
                reason="computed_field",
            )
        elif (target := by_fold.get(fold)) is not None:
            target_of[key] = target
        else:
            unknown.append(key)
            target_of[key] = key
    if unknown and policy is UndeclaredPolicy.REJECT:
        raise GateRejection(
            ErrorCode.SCHEMA_UNKNOWN_PROPERTY,
            f"{entry.label} does not declare {', '.join(unknown)} and takes no undeclared properties",
            label=entry.label,
            field=what,
            properties=unknown,
            known=sorted(declared),
        )
    _check_collisions(entry, target_of, what)
    return Renamed(
        {target_of[k]: v for k, v in values.items()},
        {target_of[k]: kind for k, kind in kinds.items()},
        tuple(f"{key}{ARROW}{target}" for key, target in target_of.items() if key != target),
    )


def _check_collisions(entry: SchemaEntry, target_of: Mapping[str, str], what: str) -> None:
    """Two names given for one declared name (`email` and `e_mail`): which value was meant is not for the gate
    to guess. A merge key given twice is identity respelled, refused as `without_identity` refuses it."""
    given: dict[str, list[str]] = defaultdict(list)
    for key, target in target_of.items():
        given[target].append(key)
    for target, keys in given.items():
        if len(keys) < 2:
            continue
        if target in entry.merge_keys:
            raise GateRejection(
                ErrorCode.SCHEMA_PROTECTED_FIELD,
                f"{', '.join(keys)} all name the merge key {target} of {entry.label}; give it once",
                fields=keys,
                reason="merge_key",
                merge_keys=list(entry.merge_keys),
            )
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{', '.join(keys)} all name {entry.label}.{target}; give it once",
            reason="same_property",
            field=what,
            property=target,
            given=keys,
        )


def remap_texts(prefix: str, remaps: Iterable[str]) -> list[str]:
    """Remaps of an endpoint's keys, told apart from the write's own in its answer: `from_keys.Name→name`."""
    return [f"{prefix}.{remap}" for remap in remaps]
