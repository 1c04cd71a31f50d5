"""The read tools: paged, bounded, read-only at the engine, in one result shape that serves both profiles.

A result is the official memory server's `{entities, relations}` with more in it: each entity keeps
`name`, `entityType` and `observations` and adds its `labels` and its other `properties` (provenance
included; with `provenance`, each value's claim, and a filter by it); each relation keeps `from`, `to`,
`relationType` and adds `properties`. `search_nodes` and `open_nodes` answer the matching entities and every
relation that touches one of them, and with `neighbors` (MemoryMesh's reads: on by default in the gate
profile, off in the memory profile) the entities at those relations' other ends too; `read_graph` answers
each relation with the page of its start entity, so a walk returns it once. Relations are bounded per entity
(100; `open_nodes` takes `relations_limit`); `truncated` names the entities that have more, and `open_nodes`
pages them with its cursor. A read that shows claims weighs them by their age where a half-life is set (Decay).
"""

import base64
import binascii
import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.claims import ClaimFilter, ValueProvenance, split_claims
from write_gate.core.clock import as_utc_text, utc_now
from write_gate.core.cypher import hierarchy as hierarchy_cypher
from write_gate.core.cypher import reads as read_cypher
from write_gate.core.cypher import substring_search
from write_gate.core.cypher.memory_writes import NameScope
from write_gate.core.cypher.statement import Statement
from write_gate.core.cypher.substring_search import NOT_READY
from write_gate.core.decay import parse_at, weigher
from write_gate.core.grams import GRAMS_FIELD, query_grams
from write_gate.core.history import REVISION_FIELD, SEQ_FIELD
from write_gate.core.identifiers import CREATED_FIELD, RESERVED_LABELS, normalize_identifier
from write_gate.core.identity import FOLD_PREFIX, KEY_FIELD, SEARCH_FIELD, fold, identity_key, keys_displayed_as
from write_gate.core.knowledge import (
    ARCHIVED_AT,
    ARCHIVED_BY,
    IMPORTANCE,
    MAX_IMPORTANCE,
    MIN_IMPORTANCE,
    TAGS,
    EntityFilter,
)
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import SchemaEntry, SchemaRegistry
from write_gate.core.stat_counts import DUE, STAT
from write_gate.core.values import unstorable
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend, Row
from write_gate.engines.errors import engine_failure, no_text_search
from write_gate.services.aliases import Alias, survivor_ids
from write_gate.services.off_loop import off_the_loop

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
DEFAULT_RELATIONS_LIMIT = 100
MAX_RELATIONS_LIMIT = 1000  # what a call may ask for at most
# open_nodes' bounds, so one call's cost and answer do not grow with what it asks: names per call (refused beyond),
# and entities per answer: at most OPEN_ENTITIES, and fewer when each may bring many relations (at most
# OPEN_RELATIONS_BUDGET // relations_limit), the rest paged by the cursor.
MAX_OPEN_NAMES = 1000
OPEN_ENTITIES = 200
OPEN_RELATIONS_BUDGET = 20_000
# Candidates a search takes from a label's trigram index at most (core/cypher/substring_search.py): reading and
# sorting them costs about 3 us each; a label with more is paged by the scan, which stops at its page.
CANDIDATE_CAP = 1000
# Entities a page expands per engine statement (issue 37's crowd): FalkorDB lets a write in only between read
# statements, and the gate parses each reply whole, so a page of 1,000 in one statement held writers for 100 ms and
# more; in statements of 100, one after another, a write waits for one short statement.
EXPAND_CHUNK = 100


def _storable(text: str) -> str:
    if unstorable(text):
        raise ValueError("contains a NUL character or a lone surrogate")
    return text


# Text an engine can take as a parameter (pydantic reports the field; the value is never echoed).
Text = Annotated[str, AfterValidator(_storable)]


class ReadRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Page size.")]
RelationsLimit = Annotated[int, Field(ge=1, le=MAX_RELATIONS_LIMIT, description="Relations per entity, at most.")]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page.")]
Labels = Annotated[list[str] | None, Field(description="Only nodes with one of these labels.")]


# Opt-in per-value provenance: given (even `{}`), each entity and relation shows its values' claims; each
# field given keeps only nodes with a value whose claim matches all of them. (No docstring: it would be
# advertised in every read tool's schema.)
class ProvenanceQuery(ReadRequest):
    # Optional, but advertised as their type only: a null is no filter, and costs every read tool bytes to say.
    agent: Text | SkipJsonSchema[None] = None
    source: Text | SkipJsonSchema[None] = None
    min_confidence: float | SkipJsonSchema[None] = None
    # A time, advertised as a plain string: JSON Schema's "date-time" format makes some clients' validators warn.
    since: Annotated[datetime, WithJsonSchema({"type": "string"})] | SkipJsonSchema[None] = None

    def claim_filter(self) -> ClaimFilter:
        since = as_utc_text(self.since) if self.since is not None else None
        return ClaimFilter(self.agent, self.source, self.min_confidence, since)


ShowProvenance = Annotated[
    ProvenanceQuery | SkipJsonSchema[None],
    Field(description="Show each value's claim; its fields filter by it."),
]


IncludeArchived = Annotated[bool, Field(description="Archived entities too.")]
# MemoryMesh's neighbour-inclusive reads (with_neighbours, below): the gate profile's default, the memory profile's
# on request.
Neighbors = Annotated[bool, Field(description="Each match's neighbours (the other ends of its relations) too.")]


class ReadGraphRequest(ReadRequest):
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None
    labels: Labels = None
    provenance: ShowProvenance = None
    includeArchived: IncludeArchived = False  # noqa: N815 - memory-mcp's argument names


# Seed 004's filters (memory-mcp's argument names): advertised as their types only, as ProvenanceQuery's fields.
# The constraints sit on the inner type, so the schema says them as minItems / minimum / maximum.
# An empty list filters nothing, as memory-mcp reads it (a filter is active only with a tag in it).
TagsFilter = Annotated[
    list[Text] | SkipJsonSchema[None],
    AfterValidator(lambda tags: tags or None),
    Field(description="Any of these tags."),
]
ImportanceBound = Annotated[float, Field(ge=MIN_IMPORTANCE, le=MAX_IMPORTANCE)] | SkipJsonSchema[None]


class SearchNodesRequest(ReadRequest):
    query: Annotated[Text, Field(description="Case-insensitive substring of a name, label or text property.")]
    labels: Labels = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor = None
    provenance: ShowProvenance = None
    tags: TagsFilter = None
    minImportance: ImportanceBound = None  # noqa: N815
    maxImportance: ImportanceBound = None  # noqa: N815
    includeArchived: IncludeArchived = False  # noqa: N815
    neighbors: Neighbors = False

    def entity_filter(self) -> EntityFilter:
        tags = tuple(self.tags) if self.tags is not None else None
        return EntityFilter(tags, self.minImportance, self.maxImportance)


class OpenNodesRequest(ReadRequest):
    names: Annotated[list[Text], Field(description="Exact, case-sensitive entity names.")]
    relations_limit: RelationsLimit = DEFAULT_RELATIONS_LIMIT
    cursor: Annotated[str | None, Field(description="next_cursor of the last answer: more relations.")] = None
    provenance: ShowProvenance = None
    includeArchived: IncludeArchived = False  # noqa: N815
    neighbors: Neighbors = False


# The gate profile's search_nodes and open_nodes: with neighbours unless asked not to (the memory profile keeps the
# official server's answers: services/memory.py).
class NeighbourSearchRequest(SearchNodesRequest):
    neighbors: Neighbors = True


class NeighbourOpenRequest(OpenNodesRequest):
    neighbors: Neighbors = True


# Only in an answer that asked for provenance: by default the answer is the one it always was.
Claims = Annotated[dict[str, ValueProvenance] | None, Field(default=None, exclude_if=lambda v: v is None)]


# memory-mcp's (seed 004): an entity's tags and importance beside its name, where it has them (also in properties).
Tags = Annotated[list[str] | None, Field(default=None, exclude_if=lambda v: v is None)]
Importance = Annotated[float | None, Field(default=None, exclude_if=lambda v: v is None)]
# memory-mcp's parent's name, on the memory profile's reads of an entity that has one (`Reader.expand`'s
# `parent_type`); left out otherwise, so an entity without a parent answers as the official server's does.
ParentId = Annotated[str | None, Field(default=None, exclude_if=lambda v: v is None)]


class Entity(BaseModel):
    name: str | None
    entityType: str  # noqa: N815 - the official memory server's field name
    observations: list[str] = Field(default_factory=list)
    parentId: ParentId = None  # noqa: N815
    tags: Tags = None
    importance: Importance = None
    labels: list[str]
    properties: dict[str, Any] = Field(default_factory=dict)
    provenance: Claims = None


class Relation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str  # noqa: N815
    properties: dict[str, Any] = Field(default_factory=dict)
    # MemoryMesh's combineWeights: the strongest weight among this answer's relations with the same start and
    # end (parallel relations of different types); a relation without a weight counts as 1.0.
    combined_weight: float = 1.0
    provenance: Claims = None


class GraphResult(BaseModel):
    entities: list[Entity]
    relations: list[Relation]
    next_cursor: str | None = Field(default=None, description="Pass back as cursor for the next page; null at the end.")
    truncated: list[str] = Field(
        default_factory=list, description="Entities with more relations: open_nodes pages them."
    )


# --- cursors ---------------------------------------------------------------------------------


def encode_cursor(kind: str, **position: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps({"k": kind, **position}).encode()).decode().rstrip("=")


def _holds(value: Any, kind: type) -> bool:
    """A cursor's field as this server writes one: of its type (never a boolean for a number), an integer within the
    engines' 64 bits, text an engine stores (a forged cursor's NUL reached the engine as an INTERNAL_ERROR)."""
    if not isinstance(value, kind) or isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return not isinstance(value, str) or not unstorable(value)


def decode_cursor(cursor: str | None, kind: str, **shape: type) -> dict[str, Any] | None:
    """The position a cursor holds, checked field by field against `shape`; None for no cursor."""
    if cursor is None:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if data["k"] == kind and all(_holds(data[name], kind_) for name, kind_ in shape.items()):
            return data
    except (ValueError, TypeError, KeyError, binascii.Error):
        pass
    raise GateRejection(ErrorCode.INVALID_INPUT, f"cursor is not a {kind} cursor from this server", field="cursor")


def open_window(page: Sequence[int], position: Mapping[str, Any] | None, relations_limit: int) -> tuple[list[int], int]:
    """open_nodes' entities for this answer: those after the cursor's `e` (an entity id; -1 from the start, and in
    a cursor from before entities were paged), at most OPEN_ENTITIES and OPEN_RELATIONS_BUDGET // relations_limit;
    and that `e`."""
    start = position.get("e", -1) if position is not None else -1
    if not isinstance(start, int) or isinstance(start, bool):
        raise GateRejection(ErrorCode.INVALID_INPUT, "cursor is not an open cursor from this server", field="cursor")
    size = max(1, min(OPEN_ENTITIES, OPEN_RELATIONS_BUDGET // relations_limit))
    return [i for i in page if i > start][:size], start


async def read_text_search(backend: GraphBackend, statement: Statement) -> list[Row] | None:
    """A read through the engine's text search: its rows, or None when the engine has none (Memgraph before 3.6
    without its flag); any other failure is the engine's."""
    try:
        return await backend.read(statement)
    except BackendError as exc:
        if no_text_search(exc):
            return None
        raise engine_failure(exc, "read") from exc
    except BackendUnavailable as exc:
        raise engine_failure(exc, "read") from exc


# --- shaping (pure) ----------------------------------------------------------------------------

# Shown elsewhere (name, observations) or the gate's own bookkeeping (identity, search text and its trigrams,
# revision and the order of its changes, the archive's marks, the statistics' mark and count).
_HIDDEN = (
    "name",
    "observations",
    KEY_FIELD,
    SEARCH_FIELD,
    GRAMS_FIELD,
    REVISION_FIELD,
    SEQ_FIELD,
    ARCHIVED_AT,
    ARCHIVED_BY,
    DUE,
    STAT,
)


def answered(expanded: "Expanded", next_cursor: str | None) -> "GraphResult":
    """A page's answer: its entities and relations in the order they were created (`created_at`, then the id
    order they come in), the matches ahead of the neighbours after them, and the cursor after it. As the memory
    servers list a graph: ids alone put a node written after a delete in the deleted one's place, where FalkorDB
    gives it the freed id. What has no `created_at` (written around the gate) comes first."""

    def created(item: "Entity | Relation") -> str:
        at = item.properties.get(CREATED_FIELD)
        return at if isinstance(at, str) else ""

    result, lead = expanded.result, len(expanded.ids)
    entities = sorted(result.entities[:lead], key=created) + sorted(result.entities[lead:], key=created)
    relations = sorted(result.relations, key=created)
    return result.model_copy(update={"entities": entities, "relations": relations, "next_cursor": next_cursor})


def display_name(props: Mapping[str, Any]) -> str | None:
    """Its `name`, or else its identity written `key=value,...`."""
    name = props.get("name")
    if isinstance(name, str):
        return name
    key = props.get(KEY_FIELD)
    if isinstance(key, str):
        try:
            keys = json.loads(key)
        except ValueError:
            return None
        return ",".join(f"{k}={v}" for k, v in keys.items()) if isinstance(keys, dict) else None
    return None


@dataclass(frozen=True)
class Decay:
    """What a read that shows claims needs to weigh them: the registry's half-lives by label and type, the
    gate's by extraction method, and the moment the read ran (the gate's clock)."""

    registry: SchemaRegistry
    by_method: Mapping[str, float]
    now: datetime

    def _weigh(self, entry: SchemaEntry | None) -> Callable[[ValueProvenance], float]:
        return weigher(entry.half_life_days if entry is not None else None, self.by_method, self.now)

    def of_node(self, labels: Sequence[str]) -> Callable[[ValueProvenance], float]:
        """The half-life of the node's first registered label, else each claim's method's."""
        entries = (self.registry.get_entry(label) for label in labels)
        return self._weigh(next((e for e in entries if e is not None), None))

    def of_relationship(self, type_: str) -> Callable[[ValueProvenance], float]:
        return self._weigh(self.registry.get_relationship(type_))


def _weighed(
    claims: dict[str, ValueProvenance], weigh: Callable[[ValueProvenance], float] | None
) -> dict[str, ValueProvenance]:
    """Each claim with its effective confidence beside the stored one (no decay: the same number). A claim
    whose time does not read as one (damaged around the gate) is shown without it, never guessed."""
    if weigh is None:
        return claims
    weighed = {}
    for prop, claim in claims.items():
        try:
            weighed[prop] = claim.model_copy(update={"effective_confidence": weigh(claim)})
        except ValueError:
            weighed[prop] = claim
    return weighed


def to_entity(
    labels: Sequence[str],
    props: Mapping[str, Any],
    show_claims: bool = False,
    weigh: Callable[[ValueProvenance], float] | None = None,
) -> Entity:
    props, claims = split_claims(props, parse=show_claims)
    observations = props.get("observations")
    listed = isinstance(observations, list) and all(isinstance(o, str) for o in observations)
    rest = {k: v for k, v in props.items() if k not in _HIDDEN and not k.startswith(FOLD_PREFIX)}
    if "observations" in props and not listed:
        rest["observations"] = observations  # not a list of strings: keep it visible, unaltered
    tags, importance = props.get(TAGS), props.get(IMPORTANCE)
    return Entity(
        name=display_name(props),
        entityType=labels[0] if labels else "",
        observations=observations if listed else [],
        tags=tags if isinstance(tags, list) and all(isinstance(t, str) for t in tags) else None,
        importance=importance if isinstance(importance, int | float) and not isinstance(importance, bool) else None,
        labels=list(labels),
        properties=rest,
        provenance=_weighed(claims, weigh) if show_claims else None,
    )


def to_relation(
    start: str,
    end: str,
    type_: str,
    props: Mapping[str, Any],
    combined_weight: float,
    show_claims: bool,
    weigh: Callable[[ValueProvenance], float] | None = None,
) -> Relation:
    plain, claims = split_claims(props, parse=show_claims)
    return Relation(
        from_=start,
        to=end,
        relationType=type_,
        properties={k: v for k, v in plain.items() if k not in (REVISION_FIELD, SEQ_FIELD, DUE, STAT)},
        combined_weight=combined_weight,
        provenance=_weighed(claims, weigh) if show_claims else None,
    )


def weight_of(props: Mapping[str, Any]) -> float:
    """A relation's weight; 1.0 (seed 000's default) when it has none."""
    weight = props.get("weight")
    return float(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else 1.0


def combined_weights(relations: Iterable[tuple[int, int, Mapping[str, Any]]]) -> dict[tuple[int, int], float]:
    """(start id, end id, properties) -> for each start and end, the strongest weight between them (MemoryMesh's
    combineWeights: the max over parallel relations). Direction counts: A->B and B->A are not parallel."""
    combined: dict[tuple[int, int], float] = {}
    for start, end, props in relations:
        combined[(start, end)] = max(combined.get((start, end), 0.0), weight_of(props))
    return combined


@dataclass(frozen=True)
class Expanded:
    result: GraphResult
    resume_after: int | None  # where the next page of relations starts (the truncated entities' last one)
    ids: tuple[int, ...] = ()  # the entities' node ids, in their order (a node deleted meanwhile is not there)
    stored: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # each one's properties, as stored
    neighbour_ids: tuple[int, ...] = ()  # the neighbours' (with_neighbours), after them, in their order


def shape(rows: Iterable[Row], page: Sequence[int], show_claims: bool = False, decay: Decay | None = None) -> Expanded:
    """Rows of read_cypher.expand -> the page's entities (in page order) and the relations they touch; with
    `decay`, each claim shown has its effective confidence."""
    nodes: dict[int, tuple[list[str], dict[str, Any]]] = {}
    more: set[int] = set()
    names: dict[int, str | None] = {}
    rels: dict[int, tuple[str, int, int, dict[str, Any]]] = {}
    last: dict[int, int] = {}  # each entity's highest relation id answered
    for row in rows:
        node_id = row["id"]
        nodes[node_id] = (row["labels"], row["props"])
        names[node_id] = display_name(row["props"])
        if row["more"]:
            more.add(node_id)
        if row["rid"] is None:
            continue
        names.setdefault(row["mid"], display_name({"name": row["mname"], KEY_FIELD: row["mkey"]}))
        end = row["mid"] if row["rstart"] == node_id else node_id
        rels[row["rid"]] = (row["rtype"], row["rstart"], end, row["rprops"] or {})
        last[node_id] = max(last.get(node_id, -1), row["rid"])

    def name_of(node_id: int) -> str:
        name = names.get(node_id)
        return name if name is not None else f"#{node_id}"  # "" is a name

    listed = [i for i in page if i in nodes]
    truncated = [i for i in listed if i in more]
    combined = combined_weights((start, end, props) for rtype, start, end, props in rels.values())
    result = GraphResult(
        entities=[to_entity(*nodes[i], show_claims, decay.of_node(nodes[i][0]) if decay else None) for i in listed],
        relations=[
            to_relation(
                name_of(start),
                name_of(end),
                rtype,
                props,
                combined[(start, end)],
                show_claims,
                decay.of_relationship(rtype) if decay else None,
            )
            for _rid, (rtype, start, end, props) in sorted(rels.items())
        ],
        truncated=[name_of(i) for i in truncated],
    )
    # Nothing is skipped when the next page starts after the lowest of the truncated entities' last ids
    # (another entity's relations may then come again).
    resume = min((last[i] for i in truncated if i in last), default=None)
    return Expanded(result, resume, tuple(listed), {i: nodes[i][1] for i in listed})


# --- neighbours (pure) ----------------------------------------------------------------------------


def with_neighbours(
    expanded: Expanded,
    rows: Iterable[Row],
    show_claims: bool,
    decay: Decay | None,
    admits: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Expanded:
    """MemoryMesh's neighbour-inclusive answer (seed 000, tests 14.3): after the page's entities, the entity at the
    other end of each relation answered (rows of read_cypher.expand with `neighbours`), once each, in relation
    order. The relations stay those touching the page, so a neighbour's own other relations are not followed;
    they are bounded as the relations are (per entity), so a hub adds at most a page of neighbours. With
    `admits` (a filtered search's test), a neighbour that fails it is not listed: its relation names it, as the
    official answer does (memory-mcp's filtered search answers only what passes)."""
    page = set(expanded.ids)
    found: dict[int, Entity] = {}
    for row in sorted((row for row in rows if row["rid"] is not None), key=lambda row: row["rid"]):
        other, labels = row["mid"], row["mlabels"]
        if other in page or other in found or not RESERVED_LABELS.isdisjoint(labels):
            continue
        if admits is not None and not admits(row["mprops"]):
            continue
        found[other] = to_entity(labels, row["mprops"], show_claims, decay.of_node(labels) if decay else None)
    entities = [*expanded.result.entities, *found.values()]
    result = expanded.result.model_copy(update={"entities": entities})
    return replace(expanded, result=result, neighbour_ids=tuple(found))


def first_parents(links: Iterable[tuple[int, int, Any]]) -> dict[int, str]:
    """Each child's parent's name from (child id, parent id, parent's name) links; of two parents (written around
    the tools), the one get_parent answers (the lower id). A nameless parent names none."""
    parents: dict[int, str] = {}
    for child, _parent, name in sorted(links, key=lambda link: (link[0], link[1])):
        if child not in parents and isinstance(name, str):
            parents[child] = name
    return parents


def parents_expanded(rows: Iterable[Row], parent_type: str) -> tuple[dict[int, str], set[int]]:
    """What an expand's rows (read_cypher.expand) say of the page's parents: the parents' names their links
    answered, and the entities whose links were not all answered (`more`), whose parent may be among the rest."""
    rows = list(rows)
    links = [
        (row["id"], row["mid"], row["mname"])
        for row in rows
        if row["rtype"] == parent_type and row["rstart"] == row["id"] and row["mid"] is not None
    ]
    return first_parents(links), {row["id"] for row in rows if row["more"]}


def with_parents(expanded: Expanded, parents: Mapping[int, str]) -> Expanded:
    """Each entity (the page's, then the neighbours') with its parent's name (memory-mcp's `parentId`) where it
    has one; one without keeps no such key."""
    ids = [*expanded.ids, *expanded.neighbour_ids]
    entities = [
        entity.model_copy(update={"parentId": parents[node_id]}) if node_id in parents else entity
        for entity, node_id in zip(expanded.result.entities, ids, strict=True)
    ]
    return replace(expanded, result=expanded.result.model_copy(update={"entities": entities}))


# --- the reader ---------------------------------------------------------------------------------


def claims_asked(query: ProvenanceQuery | None) -> tuple[ClaimFilter | None, bool]:
    """The filter a read asked for, and whether it asked to see claims at all."""
    return (query.claim_filter(), True) if query is not None else (None, False)


@dataclass(frozen=True)
class Named:
    """What a look-up by name found: each name's nodes (id, labels), and the aliases among them."""

    found: dict[str, list[tuple[int, list[str]]]]
    aliases: list[Alias]


# How long a label's density decides how its pages resume before it is counted again.
DENSITY_SECONDS = 10.0


class Reader:
    def __init__(
        self,
        backend: GraphBackend,
        registry: Callable[[], SchemaRegistry],
        half_life_by_method: Mapping[str, float] | None = None,
    ) -> None:
        self._backend = backend
        self._registry = registry  # read at each call: a refresh swaps the snapshot
        # WRITE_GATE_DECAY_HALF_LIFE_DAYS, for claims whose label or type names no half-life.
        self._half_life_by_method = dict(half_life_by_method or {})
        # A label's node count and the graph's, when last read (monotonic seconds): which scan resumes a page in
        # it (read_cypher.resume_by_own_scan). A stale pair only costs a page a slower scan, never a wrong answer.
        self._density: dict[str, tuple[float, int, int]] = {}

    async def _resume_by_own_scan(self, label: str, limit: int) -> bool:
        known = self._density.get(label)
        if known is None or time.monotonic() - known[0] > DENSITY_SECONDS:
            [in_label] = await self.read(read_cypher.label_count(label))
            [in_graph] = await self.read(read_cypher.NODE_COUNT)
            known = self._density[label] = (time.monotonic(), in_label["count"], in_graph["count"])
        return read_cypher.resume_by_own_scan(known[1], known[2], limit)

    def _decay(self) -> Decay:
        return Decay(self._registry(), self._half_life_by_method, parse_at(utc_now()))

    async def read(self, statement: Statement) -> list[Row]:
        try:
            return await self._backend.read(statement)
        except (BackendUnavailable, BackendError) as exc:
            raise engine_failure(exc, "read") from exc

    async def expand(
        self,
        page: list[int],
        relations_limit: int,
        *,
        outgoing_only: bool,
        after_relation: int = -1,
        show_claims: bool = False,
        include_archived: bool = False,
        neighbours: bool = False,
        neighbour_filter: EntityFilter | None = None,
        parent_type: str | None = None,
    ) -> Expanded:
        """Archived entities in `page`, and relations to archived ones, only with `include_archived`; with
        `neighbours`, the entities at the other ends of the relations answered too, from the same statement
        (only those `neighbour_filter` admits, when it is active); with `parent_type` (the hierarchy's type, for
        the memory profile), each entity with its parent's name (`parentId`), one more read per chunk."""
        if not page:
            return Expanded(GraphResult(entities=[], relations=[]), None)
        statement = read_cypher.expand(outgoing_only, neighbours=neighbours)
        params = {"after": after_relation, "per_node": relations_limit, "include_archived": include_archived}
        rows: list[Row] = []
        for chunk in itertools.batched(page, EXPAND_CHUNK):  # each node's rows are its own: the same rows in all
            rows += await self.read(Statement(statement.text, {"ids": list(chunk), **params}))
        decay = self._decay() if show_claims else None
        admits = neighbour_filter.admits if neighbour_filter is not None and neighbour_filter.active else None

        def shaped() -> Expanded:
            expanded = shape(rows, page, show_claims, decay)
            return with_neighbours(expanded, rows, show_claims, decay, admits) if neighbours else expanded

        expanded = await off_the_loop(shaped, len(rows))  # a large page is shaped off the loop (services/off_loop)
        if parent_type is None:
            return expanded
        # The parent link is among the relations the expand answered, unless an entity's were cut (`more`) or
        # began past an earlier page (`after_relation`); only those, and the neighbours (whose own relations are
        # not read), are asked in one more statement: a page with none costs no round trip.
        parents, cut = parents_expanded(rows, parent_type)
        unsure = [i for i in expanded.ids if i not in parents and (i in cut or after_relation >= 0)]
        unsure += expanded.neighbour_ids
        statement = hierarchy_cypher.parent_names(parent_type)
        for chunk in itertools.batched(unsure, EXPAND_CHUNK):
            asked = {"ids": list(chunk), "include_archived": include_archived}
            read = await self.read(Statement(statement.text, asked))
            parents |= first_parents((row["id"], row["parent"], row["name"]) for row in read)
        return with_parents(expanded, parents)

    def labels_to_read(self, requested: list[str] | None) -> list[str]:
        if requested:
            # System labels (the registry, history, saved searches) hold no entities: no read shows their nodes.
            return sorted({normalize_identifier(label, "labels") for label in requested} - RESERVED_LABELS)
        return self._registry().all_canonical_labels()

    async def with_matching_claims(self, ids: list[int], provenance: ProvenanceQuery | None) -> list[int]:
        """Of `ids` (sorted), those that pass the read's claim filter (all of them where it sets none)."""
        claims, _show = claims_asked(provenance)
        if not ids or claims is None or not claims.active:
            return ids
        matching = Statement(read_cypher.IDS_WITH_MATCHING_CLAIMS.text, {"ids": ids, **claims.params()})
        return sorted(row["id"] for row in await self.read(matching))

    def page_start(self, label: str) -> str:
        """A search cursor that starts at `label`'s first node (as a page that ended with the label before it)."""
        return encode_cursor("search", l=label, a=-1 if self._backend.dialect.pages_by_id else "")

    async def _page(
        self,
        kind: str,
        limit: int,
        cursor: str | None,
        labels: list[str] | None,
        query: str | None,
        claims: ClaimFilter | None = None,
        knowledge: EntityFilter | None = None,
        include_archived: bool = False,
    ) -> tuple[list[int], str | None]:
        """Up to `limit` node ids, label after label (sorted), each label in its engine's page order (engine id
        or `_key`: `Dialect.pages_by_id`); the cursor holds the label and the last position answered. One more
        row than the page is asked for, so the cursor is null exactly when nothing is left."""
        by_id = self._backend.dialect.pages_by_id
        position = decode_cursor(cursor, kind, l=str, a=int if by_id else str)
        names = self.labels_to_read(labels)
        if position is not None:
            names = [label for label in names if label >= position["l"]]
        filtered = claims is not None and claims.active
        narrowed = knowledge is not None and knowledge.active
        if not names:
            return [], None
        resume = position is not None and names[0] == position["l"]
        after: int | str = position["a"] if resume and position is not None else (-1 if by_id else "")
        params: dict[str, Any] = {"limit": limit + 1}
        if query is not None:
            params["query"] = fold(query)
        if filtered and claims is not None:
            params |= claims.params()
        if narrowed and knowledge is not None:
            params |= knowledge.params()
        flags = {"filtered": filtered, "knowledge": narrowed, "include_archived": include_archived}
        rows: list[Row] = []
        scanned = names
        grams = query_grams(params["query"]) if query is not None else []
        if grams and (found := await self._from_grams(names, grams, {**params, "after": after}, flags)) is not None:
            rows, scanned = found
        if scanned:
            # Only the page's first label starts after the cursor, and only it is scanned by id from there
            # (page_of_labels: a label scan by id walks every id past its bound).
            resumes = resume and scanned[0] == names[0]
            own_scan = by_id and resumes and await self._resume_by_own_scan(names[0], limit + 1)
            statement = read_cypher.page_of_labels(
                tuple(scanned), searching=query is not None, by_id=by_id, resume=resumes, own_scan=own_scan, **flags
            )
            assert statement is not None
            more = await self.read(Statement(statement.text, {**params, "after": after} if resumes else params))
            rows += [{**row, "part": names.index(scanned[row["part"]])} for row in more]
        rows.sort(key=lambda row: row["part"])  # label after label; stable, so each keeps its page order
        ids: list[int] = []
        last: tuple[str, int | str] | None = None
        for row in rows:
            if len(ids) == limit:
                return ids, encode_cursor(kind, l=last[0], a=last[1]) if last else None
            ids.append(row["id"])
            last = (names[row["part"]], row["key"])
        return ids, None

    async def _from_grams(
        self, names: list[str], grams: list[str], params: dict[str, Any], flags: dict[str, bool]
    ) -> tuple[list[Row], list[str]] | None:
        """A search page's rows from the labels' trigram indexes, and the labels that had more candidates than
        the cap (to be paged by the scan); None where an index cannot answer completely (the search scans)."""
        dialect = self._backend.dialect
        indexed = substring_search.gram_page(dialect, tuple(names), **flags)
        assert indexed is not None
        statement = Statement(
            indexed.text, {**params, "grams": dialect.gram_query(grams), "cap": CANDIDATE_CAP, "guarded": names}
        )
        # The page comes with the indexes' state (one statement, not two reads: a third of a search's time); it is
        # kept only where every index answered completely.
        rows = await read_text_search(self._backend, statement)
        if rows is None or any(row["part"] == NOT_READY for row in rows):
            return None
        overflowed = {row["part"] for row in rows if row["id"] is None}
        return [row for row in rows if row["id"] is not None], [n for i, n in enumerate(names) if i in overflowed]

    async def read_graph(
        self, request: ReadGraphRequest, *, relations_limit: int | None = None, parent_type: str | None = None
    ) -> GraphResult:
        """`relations_limit` overrides the request's bound (an export walks every relation); `parent_type`: see
        `expand`."""
        claims, show = claims_asked(request.provenance)
        archived = request.includeArchived
        page, next_cursor = await self._page(
            "read", request.limit, request.cursor, request.labels, None, claims, include_archived=archived
        )
        expanded = await self.expand(
            sorted(page),  # in id order: `answered`'s order among entities created in one millisecond
            relations_limit or DEFAULT_RELATIONS_LIMIT,
            outgoing_only=True,
            show_claims=show,
            include_archived=archived,
            parent_type=parent_type,
        )
        return answered(expanded, next_cursor)

    async def search_nodes(self, request: SearchNodesRequest, parent_type: str | None = None) -> GraphResult:
        page, next_cursor = await self.search_page(request)
        return await self.search_answer(request, page, next_cursor, parent_type)

    async def search_page(self, request: SearchNodesRequest, *, whole: bool = False) -> tuple[list[int], str | None]:
        """The node ids of a search's page, and the cursor after it; with `whole`, of its labels' every node (the
        filters still apply), in the same order and under the same cursors, for a caller that judges them itself."""
        claims, _show = claims_asked(request.provenance)
        return await self._page(
            "search",
            request.limit,
            request.cursor,
            request.labels,
            None if whole else request.query,
            claims,
            request.entity_filter(),
            include_archived=request.includeArchived,
        )

    async def search_answer(
        self, request: SearchNodesRequest, page: list[int], next_cursor: str | None, parent_type: str | None = None
    ) -> GraphResult:
        """A search's answer for the nodes `page`: them, the relations touching them, their neighbours if asked;
        `parent_type`: see `expand`."""
        _claims, show = claims_asked(request.provenance)
        expanded = await self.expand(
            sorted(page),  # in id order, as read_graph's page
            DEFAULT_RELATIONS_LIMIT,
            outgoing_only=False,
            show_claims=show,
            include_archived=request.includeArchived,
            neighbours=request.neighbors,
            neighbour_filter=request.entity_filter(),
            parent_type=parent_type,
        )
        return answered(expanded, next_cursor)

    async def open_nodes(self, request: OpenNodesRequest, parent_type: str | None = None) -> GraphResult:
        """`parent_type`: see `expand`."""
        if len(request.names) > MAX_OPEN_NAMES:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"open_nodes takes at most {MAX_OPEN_NAMES} names per call; open the rest in further calls",
                field="names",
                limit=MAX_OPEN_NAMES,
                given=len(request.names),
            )
        position = decode_cursor(request.cursor, "open", r=int)
        named = await self.named(request.names)
        page = sorted({node_id for hits in named.found.values() for node_id, _ in hits})
        gone: set[int] = set()  # aliases whose survivor was deleted: their names lead to no entity
        survivors = await survivor_ids(self.read, self._registry(), named.aliases, gone)  # an alias opens its survivor
        page = sorted({survivors.get(node_id, node_id) for node_id in page if node_id not in gone})
        _claims, show = claims_asked(request.provenance)
        page = await self.with_matching_claims(page, request.provenance)
        after = position["r"] if position is not None else -1
        window, entities_after = open_window(page, position, request.relations_limit)
        expanded = await self.expand(
            window,
            request.relations_limit,
            outgoing_only=False,
            after_relation=after,
            show_claims=show,
            include_archived=request.includeArchived,
            neighbours=request.neighbors,
            parent_type=parent_type,
        )
        resume = expanded.resume_after
        if resume is not None:  # the window's entities have more relations: the same window again, further on
            next_cursor: str | None = encode_cursor("open", r=resume, e=entities_after)
        elif window and window[-1] != page[-1]:  # more entities: the next window, from its first relation
            next_cursor = encode_cursor("open", r=-1, e=window[-1])
        else:
            next_cursor = None
        return answered(expanded, next_cursor)

    async def relationship_types(self, ids: list[int]) -> list[str]:
        rows = await self.read(Statement(read_cypher.RELATIONSHIP_TYPES_OF.text, {"ids": ids}))
        return [row["type"] for row in rows]

    def name_scope(self) -> NameScope:
        registry = self._registry()
        keyed: list[str] = []
        other: list[str] = []
        for label in registry.all_canonical_labels():
            entry = registry.get_entry(label)
            (keyed if entry is not None and entry.merge_keys == ("name",) else other).append(label)
        return NameScope(tuple(keyed), tuple(other))

    async def find_by_names(self, names: Iterable[str]) -> dict[str, list[tuple[int, list[str]]]]:
        """Each name's nodes (id, labels), looked up in every registered node label."""
        return (await self.named(names)).found

    async def named(self, names: Iterable[str]) -> Named:
        """Each name's nodes (id, labels), looked up in every registered node label, and which of them are
        aliases (of what), from the same statement."""
        names = list(dict.fromkeys(names))
        scope = self.name_scope()
        # A node with no `name` is named by its merge keys (`title=Launch`, display_name): found by its `_key`.
        displayed = {key: name for name in names if "=" in name for key in keys_displayed_as(name)}
        statement = read_cypher.ids_by_name(
            list(scope.keyed_by_name), list(scope.other), displayed=bool(displayed and scope.other)
        )
        if statement is None or not names:
            return Named({}, [])
        params = {"names": names, "name_keys": [identity_key({"name": name}) for name in names]}
        if displayed and scope.other:
            params["displayed_keys"] = list(displayed)
        wanted = set(names)
        found: dict[str, list[tuple[int, list[str]]]] = {}
        aliases: dict[int, Alias] = {}  # by id: a node with two registered labels is found twice
        for row in await self.read(Statement(statement.text, params)):
            name = row["name"] if row["name"] in wanted else displayed.get(row["key"])
            if name is None or (row["id"], row["labels"]) in found.get(name, []):
                continue  # found by its name and by its keys: once
            found.setdefault(name, []).append((row["id"], row["labels"]))
            if row["alias_key"] is not None:
                aliases[row["id"]] = Alias(row["id"], row["alias_label"], row["alias_key"])
        return Named(found, list(aliases.values()))
