"""`find_duplicates` and `merge_entities`: entity resolution through the gate, deterministic (no model).

find_duplicates reads at most two windows of `page_size` nodes a call (name, identity and the shared key
properties; windows are consecutive pages of the labels' nodes in the engine's page order) and scores only the
pairs with a node in each (or within the one window) that blocking proposes (`core.resolution`); `next_cursor`
leads the walk through every window against itself and every later one, so a walk compares each pair once and no
call's work grows with the graph. merge_entities plans each merge from a read (`core.merging`), then runs it as
one statement that checks nothing moved since; if something did, it reads and plans again.
"""

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from write_gate.access.agents import Agent
from write_gate.core.cypher import resolution as cypher
from write_gate.core.cypher.aliases import ALIAS_FOLD, ALIAS_OF, node_id
from write_gate.core.cypher.history_writes import ChangeStamp
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import Policy, UnknownLabelPolicy, check_merge_keys, resolve_label
from write_gate.core.history import Subject
from write_gate.core.identifiers import normalize_identifier
from write_gate.core.identity import fold, identity_key
from write_gate.core.merge_history import End, MergeContext, held_open, merge_changes
from write_gate.core.merging import Conflict as MergeConflict
from write_gate.core.merging import Link, RelationshipPlan, combined, plan_relationships, union
from write_gate.core.model import ErrorCode, GateRejection, KeyValue
from write_gate.core.resolution import (
    DEFAULT_SHARED_PROPERTIES,
    DEFAULT_THRESHOLD,
    Node,
    Pair,
    duplicate_groups,
    find_pairs,
    groups_like_memory_mcp,
    keys_of,
    make_node,
)
from write_gate.core.values import clean_map
from write_gate.services.change_records import change_stamp
from write_gate.services.entities import locate_all
from write_gate.services.gate import Gate, new_id, read_to_write, run_write
from write_gate.services.hierarchy_rule import merge_breach
from write_gate.services.off_loop import off_the_loop
from write_gate.services.reads import Cursor, Entity, OpenNodesRequest, Text, decode_cursor, encode_cursor

# Nodes one find_duplicates call reads and blocks: its cost grows with these, not with the graph.
DEFAULT_PAGE_SIZE = 1000
MAX_PAGE_SIZE = 5000
MAX_LIMIT = 500
MAX_MERGED = 20
# A merge whose nodes keep changing under it is planned again, this many times at most.
MAX_ATTEMPTS = 4


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FindDuplicatesRequest(_Request):
    labels: Annotated[list[str] | None, Field(description="Default: every label.")] = None
    across_labels: Annotated[bool, Field(description="Also pair nodes of different labels.")] = False
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_THRESHOLD
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    shared_properties: Annotated[list[str], Field(description="Equal values mark a duplicate.", max_length=16)] = list(
        DEFAULT_SHARED_PROPERTIES
    )
    page_size: Annotated[
        int, Field(ge=1, le=MAX_PAGE_SIZE, description="Nodes in a window; a call reads at most two windows.")
    ] = DEFAULT_PAGE_SIZE
    cursor: Cursor = None


class NodeRef(BaseModel):
    label: str
    merge_keys: dict[str, Any]
    name: str


class SignalOut(BaseModel):
    signal: str
    score: float


class DuplicatePair(BaseModel):
    score: float
    nodes: list[NodeRef]
    signals: list[SignalOut]


class DuplicatesFound(BaseModel):
    status: Literal["found"] = "found"
    pairs: list[DuplicatePair]
    groups: list[list[str]] = Field(
        default_factory=list,
        description="memory-mcp's answer: the names of the pairs, joined where pairs share a node (the memory "
        "profile groups every pair that passes, as memory-mcp does, whatever limit cuts from pairs).",
    )
    nodes_scanned: int
    pairs_compared: int
    more: bool = Field(description="More pairs passed the threshold than limit allowed.")
    next_cursor: str | None = Field(
        default=None,
        description="Pass back as cursor, with the same labels, page_size and across_labels, for the next pair of "
        "windows; null at the end of the walk.",
    )


class NodeAddress(_Request):
    label: str
    merge_keys: dict[str, KeyValue]


# The same shape under its own name, so each schema is inlined where it is used (no `$defs`).
class MergedAddress(NodeAddress):
    pass


class MergeEntitiesRequest(_Request):
    """The gate's form (`survivor` and `merged`, each by label and merge keys) or memory-mcp's (`entityNames`,
    merged under `targetName`: one of them, another entity, or a new name given the first one's type)."""

    survivor: NodeAddress | None = None
    merged: Annotated[list[MergedAddress] | None, Field(min_length=1, max_length=MAX_MERGED)] = None
    entityNames: Annotated[  # noqa: N815
        list[Text] | None,
        Field(min_length=2, max_length=MAX_MERGED + 1, description="memory-mcp's form: entities by name"),
    ] = None
    targetName: Annotated[  # noqa: N815
        Text | None,
        Field(
            description="With entityNames: the name of the merged entity (default: the first); a name no entity "
            "has yet is created with the first one's type."
        ),
    ] = None

    @model_validator(mode="after")
    def _one_form(self) -> "MergeEntitiesRequest":
        gate_form = self.survivor is not None or self.merged is not None
        if self.entityNames is not None:
            if gate_form:
                raise ValueError("pass survivor and merged, or entityNames, not both")
        elif self.survivor is None or self.merged is None:
            raise ValueError("pass survivor and merged (by label and merge keys), or entityNames")
        if self.targetName is not None and self.entityNames is None:
            raise ValueError("targetName goes with entityNames")
        return self


class Conflict(BaseModel):
    label: str
    merge_keys: dict[str, Any]
    property: str
    survivor_value: Any
    merged_value: Any
    relationship: str | None = Field(default=None, description="TYPE:out|in, for a relationship's property.")
    # A node's value: held open (list_conflicts), for resolve_conflict to keep or replace with the merged one.
    conflict_id: str | None = None


class DroppedRelationship(BaseModel):
    type: str
    direction: Literal["out", "in"]


class MergedNode(BaseModel):
    label: str
    merge_keys: dict[str, Any]
    properties_copied: list[str]
    properties_combined: list[str] = Field(
        default_factory=list, description="Observations and tags joined, importance raised to the merged node's."
    )
    relationships_moved: int
    relationships_merged: int
    relationships_dropped: list[DroppedRelationship]


class EntitiesMerged(BaseModel):
    status: Literal["merged"] = "merged"
    survivor: NodeAddress
    merged: list[MergedNode]
    conflicts: list[Conflict] = Field(description="Differing values: the survivor's kept, the other on the alias.")
    # Answered only to memory-mcp's form: the gate's answers as it did.
    entity: Entity | None = Field(
        default=None,
        description="memory-mcp's form: the merged entity, as read after.",
        exclude_if=lambda value: value is None,
    )


# --- find_duplicates -------------------------------------------------------------------------


def _pair_out(pair: Pair) -> DuplicatePair:
    def ref(node: Node) -> NodeRef:
        return NodeRef(label=node.label, merge_keys=keys_of(node.key) or {}, name=node.name)

    return DuplicatePair(
        score=pair.score,
        nodes=[ref(pair.a), ref(pair.b)],
        signals=[SignalOut(signal=s.signal, score=s.score) for s in pair.signals],
    )


_CURSOR = "dups"


# A node as read: id, label, `_key`, name, shared key properties' values, observations, tags, created_at (these
# three read only for memory-mcp's score and groups).
type _Read = tuple[int, str, str, Any, dict[str, Any], Any, Any, Any]
# Where a window starts: a label, and the position in its page order after which its nodes come (engine id or
# `_key`; -1 or '' for the label's first node).
type _Start = tuple[str, int | str]


async def _window(
    gate: Gate, labels: list[str], shared: list[str], size: int, start: _Start, content: bool
) -> tuple[list[_Read], _Start | None]:
    """A window: at most `size` nodes, label after label (as `labels` lists them), each label in its engine's page
    order (engine id or `_key`: `Dialect.pages_by_id`), from `start` on; and where the next window starts, if a
    node is left. One more row than there is room for is asked, so a next window always holds a node."""
    by_id = gate.backend.dialect.pages_by_id
    first: int | str = -1 if by_id else ""
    nodes: list[_Read] = []
    for label in labels[labels.index(start[0]) :]:
        after = start[1] if label == start[0] else first
        room = size - len(nodes)
        statement = cypher.candidates(label, shared, by_id=by_id, resume=after != first, content=content)
        rows = await gate.reader.read(Statement(statement.text, {"after": after, "limit": room + 1}))
        for row in rows[:room]:
            values = dict(zip(shared, row["shared"] or [], strict=False))
            content_values = (row.get("observations"), row.get("tags"), row.get("created"))
            nodes.append((row["id"], label, row["key"], row["name"], values, *content_values))
            after = row["id"] if by_id else row["key"]
        if len(rows) > room:
            return nodes, (label, after)
    return nodes, None


def _windows(gate: Gate, labels: list[str], request: FindDuplicatesRequest) -> tuple[_Start, _Start]:
    """The cursor's two windows' starts (the first window's twice without a cursor): window i, then window j, at
    or after it. A cursor is refused unless it is one, for these labels, this page_size and across_labels."""
    by_id = gate.backend.dialect.pages_by_id
    if request.cursor is None:
        return (labels[0], -1 if by_id else ""), (labels[0], -1 if by_id else "")
    place = int if by_id else str
    position = decode_cursor(request.cursor, _CURSOR, il=str, ia=place, jl=str, ja=place, p=int, x=int) or {}
    i, j = (position["il"], position["ia"]), (position["jl"], position["ja"])
    if i[0] not in labels or j[0] not in labels or (labels.index(j[0]), j[1]) < (labels.index(i[0]), i[1]):
        raise GateRejection(
            ErrorCode.INVALID_INPUT, "cursor is not a find_duplicates cursor for these labels", field="cursor"
        )
    if position["p"] != request.page_size or position["x"] != int(request.across_labels):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            "a find_duplicates cursor goes on with the page_size and across_labels of the call that answered it",
            field="cursor",
        )
    return i, j


async def find_duplicates(gate: Gate, request: FindDuplicatesRequest, memory_mcp: bool = False) -> DuplicatesFound:
    """One call of a walk over pairs of windows (consecutive pages of the labels' nodes): window i against itself,
    then against each later window j (those past window i's last label skipped unless `across_labels`), then
    window i+1 against itself, and so on; each pair of nodes is compared in exactly one call of the walk. With
    `memory_mcp` (the memory profile), pairs are scored as memory-mcp scores them: name, type, observations and
    tags weighed (`core.entity_similarity`), no shared properties."""
    registry = gate.registry
    labels = (
        sorted({normalize_identifier(label, "labels") for label in request.labels})
        if request.labels
        else registry.all_canonical_labels()
    )
    shared = sorted({normalize_identifier(p, "shared_properties") for p in request.shared_properties})
    if memory_mcp:
        shared = []
    if not labels:
        return DuplicatesFound(pairs=[], nodes_scanned=0, pairs_compared=0, more=False)
    i, j = _windows(gate, labels, request)
    size = request.page_size
    window_i, after_i = await _window(gate, labels, shared, size, i, memory_mcp)
    window_j, after_j = (window_i, after_i) if j == i else await _window(gate, labels, shared, size, j, memory_mcp)
    if j != i:  # nodes deleted since the cursor was answered stretch window i: a node is never paired with itself
        in_i = {node[0] for node in window_i}
        window_j = [node for node in window_j if node[0] not in in_i]
    # The next call: window i against the window after j, unless none is left or (labels apart) it starts past
    # window i's last label; then the window after i against itself.
    last = labels.index(window_i[-1][1]) if window_i else -1
    if after_j is not None and (request.across_labels or labels.index(after_j[0]) <= last):
        following: tuple[_Start, _Start] | None = (i, after_j)
    else:
        following = None if after_i is None else (after_i, after_i)

    def score() -> tuple[list[Pair], int, list[list[str]]]:
        nodes = [make_node(*node) for node in window_i]
        others = None if j == i else [make_node(*node) for node in window_j]
        # memory-mcp's groups are of every pair that passes (a group cut at `limit` pairs would leave duplicates
        # out without a word, and compress_graph would not merge them); `limit` bounds the pairs answered.
        every = len(nodes) * (len(nodes) if others is None else len(others))
        pairs, compared = find_pairs(
            nodes,
            others=others,
            across_labels=request.across_labels,
            threshold=request.threshold,
            limit=max(every, request.limit + 1) if memory_mcp else request.limit + 1,
            memory_mcp=memory_mcp,
        )
        answered = pairs[: request.limit]
        if memory_mcp:  # memory-mcp's groups: greedy, in insertion order (not the pairs' transitive closure)
            groups = groups_like_memory_mcp(pairs, [*nodes, *(others or ())], request.across_labels)
        else:
            groups = duplicate_groups(answered)
        return pairs, compared, groups

    scanned = len(window_i) + (0 if j == i else len(window_j))
    # Blocking and scoring is pure CPU (a rapidfuzz call per proposed pair): off the loop once it is large.
    pairs, compared, groups = await off_the_loop(score, scanned)
    next_cursor = None
    if following is not None:
        (il, ia), (jl, ja) = following
        next_cursor = encode_cursor(_CURSOR, il=il, ia=ia, jl=jl, ja=ja, p=size, x=int(request.across_labels))
    answered = pairs[: request.limit]
    return DuplicatesFound(
        pairs=[_pair_out(p) for p in answered],
        groups=groups,
        nodes_scanned=scanned,
        pairs_compared=compared,
        more=len(pairs) > request.limit,
        next_cursor=next_cursor,
    )


# --- merge_entities --------------------------------------------------------------------------

_STRICT = Policy(unknown_labels=UnknownLabelPolicy.REJECT)


def _address(gate: Gate, address: NodeAddress, what: str) -> tuple[str, dict[str, Any]]:
    """A registered label (absorbed drifts and case variants resolve; nothing falls back) and its merge keys."""
    entry = resolve_label(address.label, gate.registry, _STRICT).entry
    keys, _ = clean_map(address.merge_keys, f"{what}.merge_keys", gate.policy.limits)
    check_merge_keys(entry, keys, f"{what}.merge_keys")
    return entry.label, keys


async def _state(gate: Gate, label: str, keys: dict[str, Any], what: str) -> tuple[int, dict[str, Any]]:
    rows = await gate.reader.read(Statement(cypher.node_state(label).text, {"key": identity_key(keys)}))
    if not rows:
        raise GateRejection(
            ErrorCode.ENDPOINT_NOT_FOUND, f"{what} not found: no :{label} with these merge keys", missing=[what]
        )
    return rows[0]["id"], rows[0]["props"]


def _not_alias(props: dict[str, Any], what: str, reason: str) -> None:
    if props.get(ALIAS_OF) is not None:
        raise GateRejection(ErrorCode.INVALID_INPUT, f"{what} is already merged into another node", reason=reason)


# What creates the merged entity when memory-mcp's targetName is a new name: its name and label.
CreateEntity = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True)
class _ByNames:
    survivor: NodeAddress
    merged: list[MergedAddress]
    create: bool = False  # the survivor is a new name: created (with the first one's type) before the merges


async def _by_names(gate: Gate, names: list[str], target: str | None) -> _ByNames:
    """memory-mcp's form: each name's entity (ENTITY_NOT_FOUND, or INVALID_INPUT for a name under several
    labels) merged into the target's: one of them (default: the first), another entity of that name, or, where
    no entity has it, a new one of the first one's type (seed 004: `name: targetName || entityNames[0]`,
    `entityType: first.entityType`)."""
    target = names[0] if target is None else target
    if len(set(names)) < len(names):
        raise GateRejection(
            ErrorCode.INVALID_INPUT, "an entity is named twice", reason="same_node", field="entityNames"
        )
    located = dict(zip(names, await locate_all(gate, names, field="entityNames"), strict=True))
    merged = [MergedAddress(label=at.label, merge_keys=at.keys) for name, at in located.items() if name != target]
    if target in located:
        at = located[target]
        return _ByNames(NodeAddress(label=at.label, merge_keys=at.keys), merged)
    try:
        [at] = await locate_all(gate, [target], field="targetName")
    except GateRejection as exc:
        if exc.rejected.error_code is not ErrorCode.ENTITY_NOT_FOUND:
            raise
        return _ByNames(NodeAddress(label=located[names[0]].label, merge_keys={"name": target}), merged, True)
    return _ByNames(NodeAddress(label=at.label, merge_keys=at.keys), merged)


@dataclass(frozen=True)
class _Resolved:
    survivor_label: str
    survivor_keys: dict[str, Any]
    targets: list[tuple[str, dict[str, Any]]]
    create: bool  # the survivor is a new entity, made before the merges


async def _resolved(gate: Gate, request: MergeEntitiesRequest) -> _Resolved:
    """The survivor's and each merged node's label and merge keys (names located), checked before anything is
    merged, so nothing half-happens: registered labels, no node named twice or merged into itself."""
    create = False
    if request.entityNames is not None:
        by_names = await _by_names(gate, request.entityNames, request.targetName)
        request = request.model_copy(update={"survivor": by_names.survivor, "merged": by_names.merged})
        create = by_names.create
    assert request.survivor is not None and request.merged is not None  # one form or the other (_one_form)
    survivor_label, survivor_keys = _address(gate, request.survivor, "survivor")
    targets = [_address(gate, address, f"merged[{i}]") for i, address in enumerate(request.merged)]
    seen = {(survivor_label, identity_key(survivor_keys))}
    for i, (label, keys) in enumerate(targets):
        if (label, identity_key(keys)) in seen:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "a node is named twice (or merged into itself)",
                reason="same_node",
                field=f"merged[{i}]",
            )
        seen.add((label, identity_key(keys)))
    return _Resolved(survivor_label, survivor_keys, targets, create)


async def _hierarchy_breach(gate: Gate, nodes: list[tuple[str, dict[str, Any]]]) -> GateRejection | None:
    """Whether merging these nodes (label, keys; the survivor first) would break the hierarchy
    (services/hierarchy_rule.merge_breach)."""
    ids = []
    for label, keys in nodes:
        rows = await read_to_write(gate.backend, Statement(node_id(label).text, {"key": identity_key(keys)}))
        ids += [row["id"] for row in rows]
    reading = functools.partial(read_to_write, gate.backend)
    return await merge_breach(reading, gate.policy.hierarchy_type, ids) if ids else None


async def merge_entities(
    gate: Gate, request: MergeEntitiesRequest, agent: Agent, create: CreateEntity | None = None
) -> EntitiesMerged:
    """`create` makes the entity a new targetName names (the tool's writer, as create_entities writes); without
    one (compress_graph, which keeps a group's first name), a new name is refused."""
    by_names = request.entityNames is not None
    resolved = await _resolved(gate, request)
    survivor_label, survivor_keys, targets = resolved.survivor_label, resolved.survivor_keys, resolved.targets
    agent.grant.check_labels([survivor_label, *(label for label, _ in targets)])
    # Before anything is merged or created (a new survivor has no links, but takes the merged nodes' all).
    if refusal := await _hierarchy_breach(gate, [(survivor_label, survivor_keys), *targets]):
        raise refusal
    if resolved.create:
        if create is None:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "targetName must name an entity here: this merge keeps one, under its own name",
                field="targetName",
                reason="not_an_entity",
            )
        await create(str(survivor_keys["name"]), survivor_label)
    merged: list[MergedNode] = []
    conflicts: list[Conflict] = []
    change = change_stamp(agent.id, gate.stamp(agent).now)
    for i, (label, keys) in enumerate(targets):
        outcome, found = await _merge_one(
            gate, agent, change, survivor_label, survivor_keys, label, keys, f"merged[{i}]"
        )
        merged.append(outcome)
        conflicts += found
    survivor = NodeAddress(label=survivor_label, merge_keys=survivor_keys)
    entity = None
    if by_names and "name" in survivor_keys:  # memory-mcp answers the merged entity
        opened = await gate.reader.open_nodes(OpenNodesRequest(names=[str(survivor_keys["name"])]))
        entity = next((e for e in opened.entities if e.entityType == survivor_label), None)
    return EntitiesMerged(survivor=survivor, merged=merged, conflicts=conflicts, entity=entity)


async def preview_merge(gate: Gate, request: MergeEntitiesRequest, agent: Agent) -> list[MergedNode]:
    """What merge_entities would answer for each merged node, planned from the graph as it is, writing nothing
    (compress_graph's dry run). Each is planned against the survivor as it is now, not as the merges before it
    in the same call would leave it, so a relationship between two merged nodes is counted under each."""
    resolved = await _resolved(gate, request)
    survivor_label, survivor_keys, targets = resolved.survivor_label, resolved.survivor_keys, resolved.targets
    agent.grant.check_labels([survivor_label, *(label for label, _ in targets)])
    # Refused as merge_entities refuses it: a dry run says where the run itself would stop.
    if refusal := await _hierarchy_breach(gate, [(survivor_label, survivor_keys), *targets]):
        raise refusal
    previews = []
    for i, (label, keys) in enumerate(targets):
        planned = await _planned(gate, survivor_label, survivor_keys, label, keys, f"merged[{i}]")
        agent.grant.check_types(planned.relationships.types)
        previews.append(_outcome(planned, label, keys))
    return previews


@dataclass(frozen=True)
class _Planned:
    """A merge as planned from one read: both nodes' ids and properties, the merged node's relationships (and
    their other ends), and what the merge does with them and with the properties."""

    survivor_id: int
    survivor_props: dict[str, Any]
    merged_id: int
    merged_props: dict[str, Any]
    links: dict[int, Link]
    ends: dict[int, End]
    relationships: RelationshipPlan
    fill: dict[str, Any]
    node_conflicts: list[MergeConflict]
    combined_values: dict[str, Any]


async def _planned(
    gate: Gate, survivor_label: str, survivor_keys: dict[str, Any], label: str, keys: dict[str, Any], what: str
) -> _Planned:
    survivor_id, survivor_props = await _state(gate, survivor_label, survivor_keys, "survivor")
    _not_alias(survivor_props, "survivor", "survivor_is_alias")
    merged_id, merged_props = await _state(gate, label, keys, what)
    _not_alias(merged_props, what, "already_merged")
    rows = await gate.reader.read(Statement(cypher.LINKS.text, {"merged_id": merged_id, "survivor_id": survivor_id}))
    links = {
        row["id"]: Link(row["id"], row["type"], row["outgoing"], row["other"], row["props"], row["twin"])
        for row in rows
    }
    ends = {row["id"]: End(row["other_label"], row["other_key"]) for row in rows}
    fill, node_conflicts = union(survivor_props, merged_props)
    return _Planned(
        survivor_id,
        survivor_props,
        merged_id,
        merged_props,
        links,
        ends,
        plan_relationships(list(links.values()), survivor_id, merged_id),
        fill,
        list(node_conflicts),
        combined(survivor_props, merged_props),
    )


def _outcome(planned: _Planned, label: str, keys: dict[str, Any]) -> MergedNode:
    plan = planned.relationships
    return MergedNode(
        label=label,
        merge_keys=keys,
        properties_copied=[k for k in planned.fill if not k.startswith("_")],
        properties_combined=sorted(k for k in planned.combined_values if not k.startswith("_")),
        relationships_moved=plan.moved,
        relationships_merged=plan.merged,
        relationships_dropped=[DroppedRelationship(type=t, direction=d) for t, d in plan.dropped],
    )


async def _merge_one(
    gate: Gate,
    agent: Agent,
    change: ChangeStamp,
    survivor_label: str,
    survivor_keys: dict[str, Any],
    label: str,
    keys: dict[str, Any],
    what: str,
) -> tuple[MergedNode, list[Conflict]]:
    for _ in range(MAX_ATTEMPTS):
        planned = await _planned(gate, survivor_label, survivor_keys, label, keys, what)
        plan, links, fill = planned.relationships, planned.links, planned.fill
        survivor_props, merged_props = planned.survivor_props, planned.merged_props
        survivor_id, merged_id = planned.survivor_id, planned.merged_id
        node_conflicts, combined_values = planned.node_conflicts, planned.combined_values
        agent.grant.check_types(plan.types)
        alias_text = [fold(v) for v in keys.values() if isinstance(v, str)] + list(merged_props.get(ALIAS_FOLD) or [])
        params: dict[str, Any] = {
            "survivor_key": identity_key(survivor_keys),
            "merged_key": identity_key(keys),
            "seen": [cypher.fingerprint(link.id, link.properties.get("last_updated")) for link in links.values()],
            "alias_text": alias_text,
            "survivor_label": survivor_label,
            "last_updated": change.at,
            "updated_by": agent.id,
            **{f"fill_{i}": value for i, value in enumerate(fill.values())},
            **{f"combined_{i}": value for i, value in enumerate(combined_values.values())},
            **{f"was_{i}": survivor_props.get(key) for i, key in enumerate(combined_values)},
        }
        ctx = MergeContext(
            change.change_id,
            change.at,
            change.agent,
            End(survivor_label, identity_key(survivor_keys)),
            End(label, identity_key(keys)),
        )
        moved = [(link, planned.ends[i]) for i, link in links.items()]
        params["changes"] = merge_changes(ctx, fill, moved, survivor_id, merged_id, combined_values, survivor_props)
        held = held_open(
            Subject.node(survivor_label, identity_key(survivor_keys)),
            survivor_props,
            merged_props,
            node_conflicts,
            change.change_id,
            change.at,
            new_id,
            identity=survivor_keys.keys(),
        )
        params["conflicts"] = [record for record, _ in held.values()]
        statement = cypher.merge_into(
            survivor_label,
            label,
            plan.groups,
            list(fill),
            gate.backend.dialect,
            vectors=gate.embeddings is not None,
            combined=list(combined_values),
        )
        if await run_write(gate.backend, Statement(statement.text, params)):
            found = [
                Conflict(
                    label=label,
                    merge_keys=keys,
                    property=c.property,
                    survivor_value=c.survivor,
                    merged_value=c.merged,
                    conflict_id=held[c.property][1] if c.property in held else None,
                )
                for c in node_conflicts
            ] + [
                Conflict(
                    label=label,
                    merge_keys=keys,
                    property=c.property,
                    survivor_value=c.survivor,
                    merged_value=c.merged,
                    relationship=f"{c.type}:{c.direction}",
                )
                for c in plan.conflicts
            ]
            return _outcome(planned, label, keys), found
    raise GateRejection(
        ErrorCode.INVALID_INPUT, f"{what} kept changing while it was being merged; try again", reason="busy"
    )
