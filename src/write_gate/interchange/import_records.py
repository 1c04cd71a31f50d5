"""What an import reads from a file, whatever its format: entity and relation records, each with where it was
(`line` or `index`) so a refusal names it. Pure: the formats' parsers (import_parsers.py) build these, the
importer (importer.py) writes them through the gate.

One record shape takes the gate's own json (`write-gate/json` v1 and the older export), memory-mcp's and the
official server's: unknown keys (createdAt, lastModified, type, ...) are ignored, as those files carry them.
"""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from write_gate.core.identifiers import is_protected
from write_gate.core.knowledge import WrittenImportance
from write_gate.core.model import KeyValue, describe_problems
from write_gate.core.resolution import keys_of


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    properties: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] | None = None
    source: str | None = None
    extraction_method: str | None = None

    def claim(self) -> tuple[str | None, str | None]:
        """The record's own source and method: its provenance map, its columns, or (older exports) among its
        properties; None where it says none, and the importer's own is used."""
        found = {**self.properties, **{k: v for k, v in (self.provenance or {}).items() if v is not None}}
        source = self.source or found.get("source")
        method = self.extraction_method or found.get("extraction_method")
        return (source if isinstance(source, str) and source else None, method if isinstance(method, str) else None)

    def data(self, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Its properties an agent may write: not the gate's computed ones (provenance, `_` fields)."""
        return {k: v for k, v in self.properties.items() if not is_protected(k) and k not in drop}


class EntityRecord(_Record):
    id: str | None = None
    label: str | None = None
    entityType: str | None = None  # noqa: N815
    keys: dict[str, KeyValue] | None = None
    name: str | None = None
    observations: list[str] | None = None
    tags: list[str] | None = None
    importance: WrittenImportance | None = None
    parentId: str | None = None  # noqa: N815 - memory-mcp's: the parent's name

    @model_validator(mode="after")
    def _addressable(self) -> "EntityRecord":
        if not (self.label or self.entityType):
            raise ValueError("an entity needs a label or an entityType")
        if not self.keys and not self.name:
            raise ValueError("an entity needs keys or a name")
        return self

    @property
    def the_label(self) -> str:
        return self.label or self.entityType or ""

    @property
    def merge_keys(self) -> dict[str, Any]:
        return dict(self.keys) if self.keys else {"name": self.name}

    @property
    def by_name_alone(self) -> bool:
        """memory-mcp's entity: a name and a type, no id, label or keys of the gate's own (whose identity is its
        label and keys: `Person "Mercury"` and `Project "Mercury"` are two), so its name is the entity's, whatever
        its type, as in memory-mcp and the memory profile."""
        return self.id is None and self.label is None and self.keys is None

    @property
    def display_name(self) -> str:
        return self.name or str(self.merge_keys.get("name", ""))

    def values(self) -> dict[str, Any]:
        """Every value the record gives, as node properties: observations, tags (trimmed, lowercase, distinct,
        sorted), importance, and the rest; never its merge keys again."""
        out = self.data(drop=frozenset(self.merge_keys))
        if self.observations is not None:
            out["observations"] = list(dict.fromkeys(self.observations))
        if self.tags is not None:
            out["tags"] = normal_tags(self.tags)
        if self.importance is not None:
            out["importance"] = self.importance
        return out


class RelationRecord(_Record):
    from_id: str | None = None
    to_id: str | None = None
    from_: str | None = Field(default=None, alias="from")
    to: str | None = None
    relationType: str  # noqa: N815
    weight: Annotated[float, Field(ge=0, le=1)] | None = None

    @model_validator(mode="after")
    def _ends(self) -> "RelationRecord":
        if not (self.from_id or self.from_) or not (self.to_id or self.to):
            raise ValueError("a relation needs from_id or from, and to_id or to")
        return self


def normal_tags(tags: list[str]) -> list[str]:
    """Trimmed, lowercase, distinct, in the file's order (as the tag tools store them); blank ones dropped."""
    return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))


def split_id(node_id: str) -> tuple[str, dict[str, Any]] | None:
    """`Person:{"name":"Ada"}` to its label and merge keys; None for what is no such id."""
    label, colon, key = node_id.partition(":")
    keys = keys_of(key) if colon else None
    return (label, keys) if label and keys else None


Where = tuple[Literal["line", "index"], int]


@dataclass(frozen=True)
class Parsed:
    where: Where
    record: EntityRecord | RelationRecord | None
    problem: str | None = None  # why the item is no record


def entity(where: Where, data: Any) -> Parsed:
    return _parse(where, data, EntityRecord)


def relation(where: Where, data: Any) -> Parsed:
    return _parse(where, data, RelationRecord)


def _parse(where: Where, data: Any, model: type[EntityRecord] | type[RelationRecord]) -> Parsed:
    if not isinstance(data, dict):
        return Parsed(where, None, "not a JSON object")
    try:
        return Parsed(where, model.model_validate(data))
    except ValidationError as exc:
        return Parsed(where, None, describe_problems(exc))
