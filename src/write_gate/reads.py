"""The read tools: paged, read-only at the engine, in one result shape that serves both profiles.

A result is the official memory server's `{entities, relations}` with more in it: each entity keeps
`name`, `entityType` and `observations` and adds its `labels` and its other `properties` (provenance
included); each relation keeps `from`, `to`, `relationType` and adds `properties`. A node's name is its
`name` property, or else its merge keys rendered `key=value,...`.
"""

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from write_gate import read_cypher
from write_gate.backends import BackendError, BackendUnavailable, GraphBackend, Row
from write_gate.cypher import SEARCH_FIELD, Statement
from write_gate.identifiers import normalize_identifier
from write_gate.model import ErrorCode, GateRejection
from write_gate.registry import SchemaRegistry

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Page size (default {DEFAULT_LIMIT}).")]
Cursor = Annotated[str | None, Field(description="next_cursor from the previous page; omit for the first page.")]
Labels = Annotated[list[str] | None, Field(description="Only nodes with one of these labels.")]


class ReadGraphRequest(_Request):
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None
    labels: Labels = None


class SearchNodesRequest(_Request):
    query: Annotated[str, Field(description="Case-insensitive substring of a name, label or text property.")]
    labels: Labels = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None


class OpenNodesRequest(_Request):
    names: Annotated[list[str], Field(description="Exact, case-sensitive entity names.")]


class Entity(BaseModel):
    name: str | None
    entityType: str  # noqa: N815 - the official memory server's field name
    observations: list[str] = Field(default_factory=list)
    labels: list[str]
    properties: dict[str, Any] = Field(default_factory=dict)


class Relation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str  # noqa: N815
    properties: dict[str, Any] = Field(default_factory=dict)


class GraphResult(BaseModel):
    entities: list[Entity]
    relations: list[Relation]
    next_cursor: str | None = Field(default=None, description="Pass back as cursor for the next page; null at the end.")


# --- cursors ---------------------------------------------------------------------------------


def encode_cursor(kind: str, after: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"k": kind, "after": after}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: str) -> int:
    if cursor is None:
        return -1
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if data["k"] == kind and isinstance(data["after"], int) and not isinstance(data["after"], bool):
            return data["after"]
    except (ValueError, TypeError, KeyError, binascii.Error):
        pass
    raise GateRejection(ErrorCode.INVALID_INPUT, f"cursor is not a {kind} cursor from this server", field="cursor")


# --- shaping (pure) ----------------------------------------------------------------------------


def display_name(labels: Sequence[str], props: Mapping[str, Any], registry: SchemaRegistry) -> str | None:
    name = props.get("name")
    if isinstance(name, str):
        return name
    for label in labels:
        entry = registry.get_entry(label)
        if entry and entry.merge_keys:
            return ",".join(f"{k}={props.get(k)}" for k in entry.merge_keys)
    return None


def to_entity(labels: Sequence[str], props: Mapping[str, Any], registry: SchemaRegistry) -> Entity:
    observations = props.get("observations")
    if not (isinstance(observations, list) and all(isinstance(o, str) for o in observations)):
        observations = []
    rest = {k: v for k, v in props.items() if k not in ("name", "observations", SEARCH_FIELD)}
    if "observations" in props and not observations:
        rest["observations"] = props["observations"]  # not a list of strings: keep it visible, unaltered
    return Entity(
        name=display_name(labels, props, registry),
        entityType=labels[0] if labels else "",
        observations=observations,
        labels=list(labels),
        properties=rest,
    )


def shape(rows: Iterable[Row], page: Sequence[int], registry: SchemaRegistry, *, neighbours: bool) -> GraphResult:
    """Rows of read_cypher.EXPAND -> entities (the page, then neighbours) and relations.

    Without neighbours (read_graph) a relation belongs to the page of its start node, so a walk
    returns each relation once."""
    in_page = set(page)
    known: dict[int, tuple[list[str], dict[str, Any]]] = {}
    rels: dict[int, tuple[str, int, int, dict[str, Any]]] = {}
    for row in rows:
        known[row["id"]] = (row["labels"], row["props"])
        if row["rid"] is None:
            continue
        known.setdefault(row["mid"], (row["mlabels"], row["mprops"]))
        start = row["rstart"]
        end = row["mid"] if start == row["id"] else row["id"]
        if neighbours or start in in_page:
            rels[row["rid"]] = (row["rtype"], start, end, row["rprops"] or {})

    def name_of(node_id: int) -> str:
        return display_name(*known[node_id], registry) or f"#{node_id}"

    listed = [i for i in page if i in known]
    if neighbours:
        listed += sorted(i for i in known if i not in in_page)
    return GraphResult(
        entities=[to_entity(*known[i], registry) for i in listed],
        relations=[
            Relation(from_=name_of(start), to=name_of(end), relationType=rtype, properties=props)
            for _rid, (rtype, start, end, props) in sorted(rels.items())
        ],
    )


# --- the reader ---------------------------------------------------------------------------------


class Reader:
    def __init__(self, backend: GraphBackend, registry: Callable[[], SchemaRegistry]) -> None:
        self._backend = backend
        self._registry = registry  # read at each call: a refresh swaps the snapshot

    async def read(self, statement: Statement) -> list[Row]:
        try:
            return await self._backend.read(statement)
        except BackendUnavailable as exc:
            raise GateRejection(ErrorCode.BACKEND_UNAVAILABLE, str(exc)) from exc
        except BackendError as exc:
            raise GateRejection(
                ErrorCode.INTERNAL_ERROR, "the graph engine refused a read", engine_error=str(exc)
            ) from exc

    async def _expand(self, page: list[int], *, neighbours: bool) -> GraphResult:
        if not page:
            return GraphResult(entities=[], relations=[])
        rows = await self.read(Statement(read_cypher.EXPAND.text, {"ids": page}))
        return shape(rows, page, self._registry(), neighbours=neighbours)

    async def _page(
        self, kind: str, limit: int, cursor: str | None, labels: list[str] | None, query: str | None
    ) -> tuple[list[int], str | None]:
        after = decode_cursor(cursor, kind)
        label_names = [normalize_identifier(label, "labels") for label in labels] if labels else None
        statement = read_cypher.page_of_ids(
            self._backend.dialect, after=after, limit=limit + 1, labels=label_names, query=query
        )
        ids = [row["id"] for row in await self.read(statement)]
        more = len(ids) > limit
        ids = ids[:limit]
        return ids, encode_cursor(kind, ids[-1]) if more else None

    async def read_graph(self, request: ReadGraphRequest) -> GraphResult:
        page, next_cursor = await self._page("read", request.limit, request.cursor, request.labels, None)
        result = await self._expand(page, neighbours=False)
        return result.model_copy(update={"next_cursor": next_cursor})

    async def search_nodes(self, request: SearchNodesRequest) -> GraphResult:
        page, next_cursor = await self._page("search", request.limit, request.cursor, request.labels, request.query)
        result = await self._expand(page, neighbours=True)
        return result.model_copy(update={"next_cursor": next_cursor})

    async def open_nodes(self, request: OpenNodesRequest) -> GraphResult:
        found = await self.find_by_names(request.names)
        return await self._expand(sorted({node_id for hits in found.values() for node_id, _ in hits}), neighbours=True)

    async def find_by_names(self, names: Iterable[str]) -> dict[str, list[tuple[int, list[str]]]]:
        """Each name's nodes (id, labels), looked up in every registered node label."""
        names = list(dict.fromkeys(names))
        statement = read_cypher.ids_by_name(self._registry().all_canonical_labels())
        if statement is None or not names:
            return {}
        found: dict[str, list[tuple[int, list[str]]]] = {}
        for row in await self.read(Statement(statement.text, {"names": names})):
            found.setdefault(row["name"], []).append((row["id"], row["labels"]))
        return found
