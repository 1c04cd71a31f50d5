"""Typed tools' statements (generated from registry entries with property definitions)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import (
    WEIGHT,
    identity_properties,
    match_node,
    merge_stub,
    refresh_search_text,
    stamp,
    stub_properties,
    types_guard,
    written_properties,
)
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.embeddings import drop_vectors_of
from write_gate.core.cypher.hierarchy import not_below
from write_gate.core.cypher.history_writes import (
    ChangeStamp,
    append_deleted_relationships,
    node_deleted_with_relationships,
)
from write_gate.core.cypher.records import Guard, append_records, next_revision, revision_guard
from write_gate.core.cypher.stat_counts import dropped
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import (
    KEY_FIELD,
    identity_key,
)


@dataclass(frozen=True)
class Link:
    """A relationship type the write sets: the node's relationships of `type` become exactly those to `targets`
    (one per item of an array property; none clears them), each merged, the others deleted."""

    type: str
    targets: tuple[Endpoint, ...]


def distinct_targets(links: list[Link]) -> list[Endpoint]:
    """Each target once, in the order the links first name it: `typed_write`'s `t0, t1, ...` and its `stubs`."""
    return list({(t.label, t.key): t for link in links for t in link.targets}.values())


def typed_write(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    links: list[Link],
    *,
    create: bool,
    merge_endpoints: bool,
    weight: float | None = None,
    property_remaps: Sequence[str] = (),
    change: ChangeStamp,
    guard: Guard | None = None,
    dialect: Dialect,
    hierarchy: str | None = None,
) -> Statement:
    """One statement for the node and its relationship properties, so a failed part leaves nothing behind:
    what must exist is matched before anything is written (an update's node, then fail_if_missing
    targets: no match, no row, no write). Each link's type is replaced as a set: relationships of that type
    to other nodes are deleted, those to its targets merged (weight as write_relationship's). The node or a
    target that is an alias writes nothing (the service follows it and writes again). Returns
    `written` (0 when nothing was), `weights` (one list: each relationship's weight, link by link) and `stubs`
    (one list: each distinct target's stub flag, in first-named order). `guard`: as write_node's (the node's
    revision, its records); a relationship a link replaces is recorded as deleted (`history_writes`), under
    `change`, in the same statement. `hierarchy`: the hierarchy's type, given where a link of it names one target
    (its parent): written only where that target is not one of the node's descendants (no row: nothing written)."""
    lines: list[str] = []
    params: dict[str, Any] = {"key": identity_key(merge_keys), "weight": weight}
    node = f"(n:{quote(label)} {{{KEY_FIELD}: $key}})"
    if not create:
        lines.append(f"MATCH {node}")  # first: a missing node must not leave stub targets behind
    # One variable per distinct target, however many links name it (two MERGEs of one new key would race).
    index: dict[tuple[str, str], int] = {}
    for i, endpoint in enumerate(distinct_targets(links)):
        index[(endpoint.label, endpoint.key)] = i
        params[f"to{i}_key"] = endpoint.key
        if merge_endpoints:
            lines += merge_stub(f"t{i}", endpoint.label, f"$to{i}_key", f"$to{i}_stub")
            params[f"to{i}_stub"] = stub_properties(endpoint.label, endpoint.keys, provenance, endpoint.remapped_from)
        else:
            lines.append(match_node(f"t{i}", endpoint.label, f"$to{i}_key"))
    if hierarchy is not None:
        [parent] = next(link.targets for link in links if link.type == hierarchy)
        bound = [*([] if create else ["n"]), *(f"t{i}" for i in range(len(index)))]
        if create:  # the node yet to be merged: the one of its key, where there is one
            lines.append(f"OPTIONAL MATCH (hierarchy_child:{quote(label)} {{{KEY_FIELD}: $key}})")
        child = "hierarchy_child" if create else "n"
        lines += not_below(child, f"t{index[(parent.label, parent.key)]}", hierarchy, bound)
    if create:
        lines += [f"MERGE {node}", "ON CREATE SET n += $identity"]
        params["identity"] = identity_properties(label, merge_keys, provenance)
    carried = ["n", *(f"t{i}" for i in range(len(index)))]
    lines.append(unless_alias(*carried))
    sets = f"SET n += $properties, {stamp('n')}, n._stub = null"
    if guard is not None:
        params |= guard.params()
        lines += [revision_guard("n", carried=tuple(carried[1:])), f"{sets}, {next_revision('n')}", *append_records()]
    else:
        lines.append(sets)
    lines.append(refresh_search_text("n", dialect, ", ".join(carried)))
    made: list[str] = []
    for g, link in enumerate(links):
        targets = [f"t{index[(t.label, t.key)]}" for t in link.targets]
        keep = "[" + ", ".join(f"id({t})" for t in targets) + "]"
        lines += [
            f"WITH {', '.join(carried)}",
            f"OPTIONAL MATCH (n)-[old{g}:{quote(link.type)}]->(x{g}) WHERE NOT id(x{g}) IN {keep}",
            f"WITH {', '.join(carried)}, collect(old{g}) AS stale{g}",
            append_deleted_relationships(f"stale{g}"),
            dropped(f"stale{g}"),
            f"FOREACH (o IN stale{g} | DELETE o)",
        ]
        for target in targets:
            r = f"r{len(made)}"
            lines += [
                f"MERGE (n)-[{r}:{quote(link.type)}]->({target})",
                *(line.format(r=r, w="$weight", now="$last_updated") for line in WEIGHT),
                f"SET {stamp(r)}",
            ]
            made.append(r)
            carried.append(r)
    weights = ", ".join(f"{r}.weight" for r in made)
    stubs = ", ".join(f"t{i}._stub = true" for i in range(len(index)))
    lines.append(f"RETURN count(n) AS written, collect([{weights}]) AS weights, collect([{stubs}]) AS stubs")
    params |= {
        "properties": written_properties(properties, provenance, property_remaps),
        **provenance.params(),
    }
    if links:  # only a link can delete a relationship
        params |= change.params()
    return Statement("\n".join(lines), params)


def typed_delete(
    label: str,
    merge_keys: Mapping[str, Any],
    allowed_types: list[str] | None,
    change: ChangeStamp,
    *,
    vectors: bool = False,
) -> Statement:
    """Deletes the node and its relationships, recording every value they held (`history_writes`); `vectors`: its
    embedding vectors too (embeddings on)."""
    lines = [
        match_node("n", label, "$key"),
        *types_guard("n", allowed_types),
        *node_deleted_with_relationships("n"),
        *(["WITH [n] AS doomed", *drop_vectors_of("doomed"), "UNWIND doomed AS n"] if vectors else []),
        "DETACH DELETE n",
        "RETURN count(*) AS deleted",
    ]
    params: dict[str, Any] = {"key": identity_key(merge_keys), **change.params()}
    if allowed_types is not None:
        params["allowed_types"] = allowed_types
    return Statement("\n".join(lines), params)


def relationship_types_of(endpoint: Endpoint) -> Statement:
    """Read-only: the types of a node's relationships (to explain a delete the grant refused)."""
    text = f"{match_node('n', endpoint.label, '$key')}\nMATCH (n)-[r]-()\nRETURN DISTINCT type(r) AS type ORDER BY type"
    return Statement(text, {"key": endpoint.key})


def count_matching(endpoint: Endpoint) -> Statement:
    """Read-only: how many nodes an endpoint's label and keys match (to explain a write that matched none)."""
    return Statement(f"{match_node('n', endpoint.label, '$key')}\nRETURN count(n) AS count", {"key": endpoint.key})
