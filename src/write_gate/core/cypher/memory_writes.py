"""The memory profile's writes. Its entities are found by name (`services.reads.Reader.find_by_names`) and
then addressed by id, guarded by the name: an id the engine reused since the lookup matches nothing.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from write_gate.core.claims import claim_name
from write_gate.core.cypher.change_order import next_seq, set_seq
from write_gate.core.cypher.clauses import (
    match_node,
    refresh_search_text,
    relationship_properties,
    relationship_set,
    stamp,
    types_guard,
)
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.embeddings import drop_vectors_of
from write_gate.core.cypher.hierarchy import keeping_one_parent
from write_gate.core.cypher.history_writes import (
    ChangeStamp,
    append_changes,
    bump_revision,
    deleted_relationship,
    nodes_deleted_with_relationships,
    observations_change,
)
from write_gate.core.cypher.stat_counts import dropped
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.grams import GRAMS_FIELD
from write_gate.core.history import REVISION_FIELD
from write_gate.core.identifiers import CHANGE_FIELDS, quote
from write_gate.core.identity import (
    FOLD_PREFIX,
    KEY_FIELD,
    SEARCH_FIELD,
    fold,
    identity_key,
)

_BY_ID = "MATCH (n) WHERE id(n) = $id AND n.name = $name"
# The observations list is one value: whoever last changed it is its claim's agent.
_OBSERVATIONS_CLAIM = claim_name("observations")


def create_relationship_if_absent(
    type_: str,
    start: Endpoint,
    end: Endpoint,
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    changes: list[dict[str, Any]],
    weight: float = 1.0,
    *,
    hierarchy: bool = False,
) -> Statement:
    """The official memory server's create: an existing (from, to, type) is left as it is, not updated. A new
    one is new, so its `changes` (`core.history.set_changes` from nothing) are known before it runs. `weight`:
    MemoryMesh's add_edges gives one. `hierarchy`: the type is the hierarchy's, created only where it keeps one
    parent per child and no cycle (core/cypher/hierarchy.keeping_one_parent)."""
    lines = [
        match_node("a", start.label, "$from_key"),
        match_node("b", end.label, "$to_key"),
        *(keeping_one_parent("a", "b", type_) if hierarchy else []),
        f"OPTIONAL MATCH (a)-[existing:{quote(type_)}]->(b)",
        "WITH a, b, existing WHERE existing IS NULL",
        f"CREATE (a)-[r:{quote(type_)}]->(b)",
        relationship_set(remapped_from is not None)
        + ",\n    r.weight = $weight, r.created_at = $last_updated, r._rev = 1, r._seq = $last_updated",
        append_changes(),
        "RETURN count(r) AS created",
    ]
    params: dict[str, Any] = {
        "from_key": start.key,
        "to_key": end.key,
        "properties": relationship_properties(properties, provenance),
        "changes": changes,
        "weight": weight,
        **provenance.params(),
    }
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    return Statement("\n".join(lines), params)


@dataclass(frozen=True)
class NameScope:
    """Where a name can live: labels identified by `name` alone are looked up by `_key`, others by `name`."""

    keyed_by_name: tuple[str, ...]
    other: tuple[str, ...]


def create_node_if_name_absent(scope: NameScope, name: str, write: Statement) -> Statement:
    """The memory profile's create: names are unique across labels, as in the official server. One statement
    checks every registered label and writes only if the name is nowhere; so the check and the write are
    atomic, and it costs one round trip. `write` is `create_node`'s: the node is new, so what it holds and its
    record (`core.history.set_changes` from nothing) are known before it runs."""
    lookups = [
        f"OPTIONAL MATCH (x{i}:{quote(label)} {{{KEY_FIELD}: $name_key}})"
        for i, label in enumerate(scope.keyed_by_name)
    ]
    offset = len(lookups)
    lookups += [
        f"OPTIONAL MATCH (x{offset + i}:{quote(label)}) WHERE x{offset + i}.name = $name"
        for i, label in enumerate(scope.other)
    ]
    # With no label registered there is nothing to look in: one row goes ahead.
    found = "coalesce(" + ", ".join(f"x{i}" for i in range(len(lookups))) + ")" if lookups else "null"
    text = "\n".join([*lookups, f"WITH {found} AS existing", NAME_ABSENT, write.text])
    return Statement(text, {**write.params, "name": name, "name_key": identity_key({"name": name})})


# Where a memory create's look-up has found the name nowhere (services/embeddings.py adds its vectors after it).
NAME_ABSENT = "WHERE existing IS NULL"


@functools.lru_cache(maxsize=256)
def create_node(label: str, remapped: bool) -> Statement:
    """A node the statement has found absent (`create_node_if_name_absent`), created with everything it holds
    (`$identity`, `$values`, `$extra`, its search text `$search` and trigrams `$grams`, the provenance stamp,
    revision 1 and its first change's `seq`, its `at`) and its record (`$changes`, one record). A CREATE, not a
    MERGE: the look-up before it has just found no node of this identity (on Memgraph, a create racing it meets the
    `_key` constraint, and the retried statement then finds the node). `remapped`: its label as written,
    `$remapped_from`. Returns `written`."""
    remap = ", n._schema_remap_from = $remapped_from" if remapped else ""
    return Statement(
        f"CREATE (n:{quote(label)} {{{KEY_FIELD}: $key}})\n"
        "SET n += $identity, n += $values, n += $extra, "
        f"n.{SEARCH_FIELD} = $search, n.{GRAMS_FIELD} = $grams, {stamp('n')}, n.{REVISION_FIELD} = 1, "
        f"{set_seq('n', '$last_updated')}{remap}\n"
        f"{append_changes()}\n"
        "RETURN true AS written"
    )


def add_observations(
    node_id: int,
    name: str,
    contents: list[str],
    change: ChangeStamp,
    updated_by: str,
    claim: list[Any],
    dialect: Dialect,
) -> Statement:
    """Appends the contents not already there, in order (with their folded text); returns what was added (no
    row when nothing was). An appended observation changes the node, it does not re-state its claim: only
    the change is stamped on the node, and the observations value gets this writer's `claim`. The list before
    and after is recorded (`history_writes`), and the node's revision moves."""
    after = "coalesce(n.observations, []) + [i IN new | $contents[i]]"
    text = (
        f"{_BY_ID}\n"
        "WITH n, [i IN range(0, size($contents) - 1) WHERE NOT $contents[i] IN coalesce(n.observations, [])] AS new,\n"
        f"     {next_seq(['n'])} AS seq\n"
        "WHERE size(new) > 0\n"  # nothing new: nothing changes, not even the stamp (a repeat is a no-op)
        f"{append_changes(observations_change('n', after))}\n"
        f"SET n.observations = {after},\n"
        f"    n.{FOLD_PREFIX}observations = coalesce(n.{FOLD_PREFIX}observations, []) + [i IN new | $folded[i]],\n"
        f"    n.{_OBSERVATIONS_CLAIM} = $claim,\n"
        f"    {bump_revision('n')},\n"
        f"    {stamp('n', fields=CHANGE_FIELDS)}\n"
        f"{refresh_search_text('n', dialect, 'n, new')}\n"
        "RETURN [i IN new | $contents[i]] AS added"
    )
    params = {
        "id": node_id,
        "name": name,
        "contents": contents,
        "folded": [fold(c) for c in contents],
        "last_updated": change.at,
        "updated_by": updated_by,
        "claim": claim,
        **change.params(),
    }
    return Statement(text, params)


def delete_observations(
    node_id: int,
    name: str,
    observations: list[str],
    change: ChangeStamp,
    updated_by: str,
    claim: list[Any],
    dialect: Dialect,
) -> Statement:
    """Removes the observations given; the list before and after is recorded, as add_observations does."""
    after = "[i IN keep | obs[i]]"
    text = (
        f"{_BY_ID}\n"
        f"WITH n, coalesce(n.observations, []) AS obs, coalesce(n.{FOLD_PREFIX}observations, []) AS folded\n"
        "WITH n, obs, folded, [i IN range(0, size(obs) - 1) WHERE NOT obs[i] IN $observations] AS keep,\n"
        f"     {next_seq(['n'])} AS seq\n"
        "WHERE size(keep) < size(obs)\n"
        f"{append_changes(observations_change('n', after))}\n"
        f"SET n.observations = {after},\n"
        f"    n.{FOLD_PREFIX}observations = [i IN keep | folded[i]],\n"
        f"    n.{_OBSERVATIONS_CLAIM} = $claim,\n"
        f"    {bump_revision('n')},\n"
        f"    {stamp('n', fields=CHANGE_FIELDS)}\n"
        f"{refresh_search_text('n', dialect)}"
    )
    params = {
        "id": node_id,
        "name": name,
        "observations": observations,
        "last_updated": change.at,
        "updated_by": updated_by,
        "claim": claim,
        **change.params(),
    }
    return Statement(text, params)


def delete_nodes(
    found: list[tuple[int, str]], allowed_types: list[str] | None, change: ChangeStamp, *, vectors: bool = False
) -> Statement:
    """Cascading delete by id, each guarded by its name (an id reused since the lookup deletes nothing) and by the
    agent's relationship-type grant (`allowed_types`, None for any). Every value deleted is recorded: the
    nodes are gathered first, so a relationship between two of them is recorded once. `vectors`: their embedding
    vectors are deleted with them (embeddings on)."""
    lines = [
        "UNWIND $found AS found",
        # Bound first: FalkorDB seeks an id given as a variable, and scans every node for `id(n) = found[0]`.
        "WITH found[0] AS i, found[1] AS name",
        "MATCH (n) WHERE id(n) = i AND n.name = name",
        *types_guard("n", allowed_types),
        *nodes_deleted_with_relationships("n", "doomed"),
        "WITH doomed",
        *(drop_vectors_of("doomed") if vectors else []),
        "UNWIND doomed AS n",
        "DETACH DELETE n",
        "RETURN count(*) AS deleted",
    ]
    params: dict[str, Any] = {"found": [[node_id, name] for node_id, name in found], **change.params()}
    if allowed_types is not None:
        params["allowed_types"] = allowed_types
    return Statement("\n".join(lines), params)


def delete_relationship(
    type_: str, start_id: int, start_name: str, end_id: int, end_name: str, change: ChangeStamp
) -> Statement:
    text = (
        f"MATCH (a)-[r:{quote(type_)}]->(b)\n"
        "WHERE id(a) = $from_id AND a.name = $from_name AND id(b) = $to_id AND b.name = $to_name\n"
        f"{append_changes(deleted_relationship('r'))}\n"
        f"{dropped('[r]')}\n"
        "WITH r, r.weight AS weight\n"  # read before the delete: answered (mesh delete_edges) with the edge gone
        "DELETE r\n"
        "RETURN count(*) AS deleted, collect(weight) AS weights"
    )
    ids = {"from_id": start_id, "from_name": start_name, "to_id": end_id, "to_name": end_name}
    return Statement(text, {**ids, **change.params()})
