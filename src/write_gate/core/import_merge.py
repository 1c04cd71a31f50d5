"""What an import does with an entity or relation whose node (label and keys) or relationship exists, under each
merge strategy; and the values a `merge` writes. Pure."""

from collections.abc import Mapping
from typing import Any, Literal

Strategy = Literal["skip", "update", "replace", "merge", "fail"]
Action = Literal["create", "skip", "overwrite", "merge"]

# Lists whose union a merge takes; a number whose maximum it takes.
UNION_LISTS = ("observations", "tags")
MAXIMUM = "importance"


def entity_action(strategy: Strategy, exists: bool) -> Action:
    """`fail` is decided before any write (the whole import is refused); here it leaves what exists."""
    if not exists:
        return "create"
    if strategy in ("update", "replace"):
        return "overwrite"
    return "merge" if strategy == "merge" else "skip"


def relation_action(strategy: Strategy, exists: bool) -> Action:
    """A `merge` of a relation that exists writes it where it changes a value, and skips it where it changes none
    (the importer decides, on what the relation holds): memory-mcp's relation, its ends and type, changes none."""
    if not exists:
        return "create"
    if strategy in ("update", "replace"):
        return "overwrite"
    return "merge" if strategy == "merge" else "skip"


def merged_values(current: Mapping[str, Any], incoming: Mapping[str, Any]) -> dict[str, Any]:
    """Only what changes: observations and tags unioned (the node's first, in order), the higher
    importance, and the properties the node lacks; its other values are left alone."""
    out: dict[str, Any] = {}
    for name, value in incoming.items():
        held = current.get(name)
        if name in UNION_LISTS and isinstance(held, list) and isinstance(value, list):
            union = list(dict.fromkeys([*held, *value]))
            if union != held:
                out[name] = union
        elif name == MAXIMUM and isinstance(held, int | float) and isinstance(value, int | float):
            if value > held:
                out[name] = value
        elif name not in current:
            out[name] = value
    return out
