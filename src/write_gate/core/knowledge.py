"""Seed 004's knowledge properties, decided purely: tags, importance, the archive marks, and the hierarchy's
names. The property names are the contract between the knowledge tools, the exports and the imports."""

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from write_gate.core.identifiers import CREATED_FIELD, LAST_UPDATED
from write_gate.core.identity import FOLD_PREFIX, fold
from write_gate.core.model import ErrorCode, GateRejection

OBSERVATIONS = "observations"  # an entity's observations, a mesh node's metadata
TAGS = "tags"
IMPORTANCE = "importance"
ARCHIVED_AT = "_archived_at"
ARCHIVED_BY = "_archived_by"
MIN_IMPORTANCE = 0.0
MAX_IMPORTANCE = 10.0
# An importance as every write reads it (create_entities, set_importance, the imports): a finite number from 0 to
# 10, never a boolean or a text read as one (memory-mcp's InvalidImportanceError; `true` was stored as 1.0).
WrittenImportance = Annotated[float, Field(ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE, allow_inf_nan=False, strict=True)]
# Written on every label whatever its registry entry declares (as the memory profile's `observations`); an entry
# that declares them still has its declared type enforced (`array<string>` with an enum, say).
KNOWLEDGE_PROPERTIES = frozenset({TAGS, IMPORTANCE})
DEFAULT_HIERARCHY_TYPE = "CHILD_OF"


def normalize_tags(tags: Iterable[str], field: str = "tags") -> list[str]:
    """Trimmed, lowercase, distinct (the first of each kept), in the order given: seed 004 only lower-cases them,
    and an agent reads its tags back as it wrote them. An empty (or all-blank) tag is refused; the value is not
    echoed."""
    out: dict[str, None] = {}
    for i, tag in enumerate(tags):
        clean = tag.strip().lower()
        if not clean:
            raise GateRejection(ErrorCode.INVALID_INPUT, "a tag is empty", field=f"{field}.{i}")
        out[clean] = None
    return list(out)


def as_number(value: Any) -> float | None:
    """A number as the engines compare it (a boolean is none)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def knowledge_values(values: Mapping[str, Any], what: str, declared: Collection[str] = ()) -> dict[str, Any]:
    """The one rule every write path applies to `tags` and `importance` among a node's values (`what`: the map's
    name, for the field a refusal names): tags are normalised as the tag tools store them; an importance outside
    0 to 10 is refused, naming the tool that sets it. A name in `declared` (the registry entry types it) keeps
    its declared type, so only a list of text is normalised and only a number range-checked there."""
    out = dict(values)
    tags = values.get(TAGS)
    if TAGS in values:
        if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
            out[TAGS] = normalize_tags(tags, f"{what}.{TAGS}")
        elif TAGS not in declared:
            raise GateRejection(
                ErrorCode.INVALID_INPUT, "tags is a list of text (add_tags sets them)", field=f"{what}.{TAGS}"
            )
    number = as_number(values.get(IMPORTANCE))
    checked = IMPORTANCE in values and (number is not None or IMPORTANCE not in declared)
    if checked and not (number is not None and MIN_IMPORTANCE <= number <= MAX_IMPORTANCE):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            "importance is a number from 0 to 10 (set_importance sets it)",
            field=f"{what}.{IMPORTANCE}",
        )
    return out


def stored_tags(props: Mapping[str, Any]) -> list[str]:
    """An entity's tags as stored; anything but a list of strings (written around the tools) counts as none."""
    tags = props.get(TAGS)
    return list(tags) if isinstance(tags, list) and all(isinstance(t, str) for t in tags) else []


def with_tags(props: Mapping[str, Any], added: Iterable[str]) -> list[str]:
    """The tags held, then those added that it lacks, in the order given."""
    return list(dict.fromkeys([*stored_tags(props), *added]))


def without_tags(props: Mapping[str, Any], removed: Iterable[str]) -> list[str]:
    gone = set(removed)
    return [t for t in stored_tags(props) if t not in gone]


@dataclass(frozen=True)
class EntityFilter:
    """The read filters on the knowledge properties: any of `tags`, importance within bounds. Tags are compared
    folded (`_f_tags`, a list whatever was stored), so a tag written in capitals around the tools still matches."""

    tags: tuple[str, ...] | None = None
    min_importance: float | None = None
    max_importance: float | None = None

    @property
    def active(self) -> bool:
        return self.tags is not None or self.min_importance is not None or self.max_importance is not None

    def _folded_tags(self) -> list[str] | None:
        return [fold(t) for t in normalize_tags(self.tags)] if self.tags is not None else None

    def params(self) -> dict[str, Any]:
        tags = self._folded_tags()
        return {"k_tags": tags, "k_min_importance": self.min_importance, "k_max_importance": self.max_importance}

    def admits(self, props: Mapping[str, Any]) -> bool:
        """The statements' test (`core.cypher.reads.knowledge_matches`) on a node's stored properties: what a
        neighbour read brings in must pass the filter its matches passed."""
        tags = self._folded_tags()
        if tags is not None:
            stored = props.get(FOLD_PREFIX + TAGS)
            if not (isinstance(stored, list) and any(t in tags for t in stored)):
                return False
        number = as_number(props.get(IMPORTANCE))
        if self.min_importance is not None and (number is None or number < self.min_importance):
            return False
        return self.max_importance is None or (number is not None and number <= self.max_importance)


def depth_first[R: Mapping[str, Any]](rows: Sequence[R]) -> list[R]:
    """Descendants in depth-first order (each right after its parent's earlier siblings' subtrees, siblings in
    creation order: their ids, as memory-mcp filters its list of entities), from each one's path between it and
    the node (`path_ids`: from the descendant up)."""

    def order(row: Mapping[str, Any]) -> list[int]:
        return list(row["path_ids"])[::-1][1:]  # from the node, without it

    return sorted(rows, key=order)


def memory_mcp_stamps(properties: Mapping[str, Any]) -> dict[str, str]:
    """memory-mcp's `createdAt` and `lastModified` (seed 004: every entity is stamped when created and changed),
    from the node's `created_at` and `last_updated`, where it holds them."""
    return {
        key: value
        for key, field in (("createdAt", CREATED_FIELD), ("lastModified", LAST_UPDATED))
        if isinstance(value := properties.get(field), str)
    }
