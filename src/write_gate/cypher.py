"""Statement builders: pure functions from validated names to Cypher text plus parameters.

Every value travels as a parameter. The only names spliced into the text are labels,
relationship types and property keys that passed `identifiers.normalize_identifier`,
and they are backtick-quoted by `identifiers.quote`.

Nodes are found by their identity property `_key` (see `identity`), never by raw key values.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from write_gate.identifiers import CHANGE_FIELDS, PROVENANCE_FIELDS, quote
from write_gate.identity import (
    FOLD_PREFIX,
    KEY_FIELD,
    LABEL_FOLD_FIELD,
    SEARCH_FIELD,
    SEPARATOR,
    fold,
    folded_properties,
    identity_key,
    label_fold,
)


@dataclass(frozen=True)
class Statement:
    text: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Provenance:
    confidence: float
    source: str
    extraction_method: str
    write_gate_version: str
    last_updated: str
    written_by: str  # the authenticated agent; never something the agent says in its arguments

    def params(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in PROVENANCE_FIELDS if name != "updated_by"}
        return {**values, "updated_by": self.written_by}


@dataclass(frozen=True)
class Endpoint:
    label: str
    keys: Mapping[str, Any]

    @property
    def key(self) -> str:
        return identity_key(self.keys)


# The node's search text: the join of its folded `_f_` lists, rebuilt by every write that changes them.
_SEPARATOR_LITERAL = "'\\n'"
assert SEPARATOR == "\n"  # the literal above is that character, written the way Cypher reads it


def refresh_search_text(var: str, carried: str | None = None) -> str:
    """`WITH ...` then `SET var._search = ...`. The WITH is needed: FalkorDB evaluates the properties of a
    node SET earlier in the same clause chain as they were before that SET, and sees them after a WITH."""
    folded = f"[k IN keys({var}) WHERE k STARTS WITH '{FOLD_PREFIX}']"
    joined = f"reduce(t = s, x IN properties({var})[k] | t + {_SEPARATOR_LITERAL} + coalesce(x, ''))"
    return f"WITH {carried or var}\nSET {var}.{SEARCH_FIELD} = reduce(s = '', k IN {folded} | {joined})"


def _stamp(var: str, source: str = "$", fields: tuple[str, ...] = PROVENANCE_FIELDS) -> str:
    """`n.confidence = $confidence, ...`, or from a row: `n.confidence = row.confidence, ...`."""
    return ", ".join(f"{var}.{name} = {source}{name}" for name in fields)


def identity_properties(label: str, keys: Mapping[str, Any]) -> dict[str, Any]:
    """Set when a node is created: its merge keys, their folded text, its label's."""
    return {**keys, **folded_properties(keys), LABEL_FOLD_FIELD: label_fold(label, None)}


def written_properties(label: str, properties: Mapping[str, Any], remapped_from: str | None) -> dict[str, Any]:
    """What a write sets besides the stamp: the properties, their folded text, and the label as written."""
    out = {**properties, **folded_properties(properties)}
    if remapped_from is not None:
        out[LABEL_FOLD_FIELD] = label_fold(label, remapped_from)
    return out


def stub_properties(label: str, keys: Mapping[str, Any]) -> dict[str, Any]:
    """A stub is created with nothing but its keys, so its whole search text is known here."""
    props = identity_properties(label, keys)
    texts = [text for name, values in props.items() if name.startswith(FOLD_PREFIX) for text in values]
    return {**props, SEARCH_FIELD: "".join(SEPARATOR + text for text in texts)}


# --- nodes ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _write_node_text(label: str, remapped: bool) -> str:
    sets = ["n += $properties", _stamp("n"), "n._stub = null"]
    if remapped:
        sets.append("n._schema_remap_from = $remapped_from")
    return (
        f"MERGE (n:{quote(label)} {{{KEY_FIELD}: $key}})\n"
        "ON CREATE SET n += $identity\n"
        "SET " + ",\n    ".join(sets) + "\n"
        f"{refresh_search_text('n')}\n"
        "RETURN count(n) AS written"
    )


def write_node(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
) -> Statement:
    # The text depends only on the label and whether it was remapped, so it is built once per shape.
    params: dict[str, Any] = {
        "key": identity_key(merge_keys),
        "identity": identity_properties(label, merge_keys),
        "properties": written_properties(label, properties, remapped_from),
        **provenance.params(),
    }
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    return Statement(_write_node_text(label, remapped_from is not None), params)


def _match(var: str, label: str, param: str) -> str:
    return f"MATCH ({var}:{quote(label)} {{{KEY_FIELD}: {param}}})"


def _merge_stub(var: str, label: str, key_param: str, stub_param: str, source: str = "$") -> list[str]:
    """Absent endpoints are created by their keys, flagged as stubs, and stamped like any write."""
    return [
        f"MERGE ({var}:{quote(label)} {{{KEY_FIELD}: {key_param}}})",
        f"ON CREATE SET {var} += {stub_param}, {var}._stub = true, {_stamp(var, source)}",
    ]


# --- relationships ----------------------------------------------------------------------------

_WEIGHT = [
    # Weight: 1.0 unless given; a new weight for an existing relationship is averaged with the old one.
    "ON CREATE SET {r}.weight = coalesce({w}, 1.0)",
    "ON MATCH SET {r}.weight = CASE WHEN {w} IS NULL THEN coalesce({r}.weight, 1.0)"
    " ELSE (coalesce({r}.weight, 1.0) + {w}) / 2 END",
]


def _relationship_set(remapped: bool, source: str = "$") -> str:
    """The SET clause every relationship write ends with: its properties, then the provenance stamp."""
    sets = [f"r += {source}properties", _stamp("r", source)]
    if remapped:
        sets.append(f"r._schema_remap_from = {source}remapped_from")
    return "SET " + ",\n    ".join(sets)


def write_relationship(
    type_: str,
    start: Endpoint,
    end: Endpoint,
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
    merge_endpoints: bool,
    weight: float | None = None,
) -> Statement:
    params: dict[str, Any] = {
        "from_key": start.key,
        "to_key": end.key,
        "properties": dict(properties),
        "weight": weight,
        **provenance.params(),
    }
    if merge_endpoints:
        lines = [
            *_merge_stub("a", start.label, "$from_key", "$from_stub"),
            *_merge_stub("b", end.label, "$to_key", "$to_stub"),
        ]
        params["from_stub"] = stub_properties(start.label, start.keys)
        params["to_stub"] = stub_properties(end.label, end.keys)
    else:
        lines = [_match("a", start.label, "$from_key"), _match("b", end.label, "$to_key")]
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    lines += [
        f"MERGE (a)-[r:{quote(type_)}]->(b)",
        *(line.format(r="r", w="$weight") for line in _WEIGHT),
        _relationship_set(remapped_from is not None),
        "RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight",
    ]
    return Statement("\n".join(lines), params)


def endpoint_presence(start: Endpoint, end: Endpoint) -> Statement:
    """Read-only: after a fail_if_missing write matched nothing, say which endpoint is absent."""
    text = (
        f"OPTIONAL MATCH (a:{quote(start.label)} {{{KEY_FIELD}: $from_key}})\n"
        "WITH count(a) AS from_found\n"
        f"OPTIONAL MATCH (b:{quote(end.label)} {{{KEY_FIELD}: $to_key}})\n"
        "RETURN from_found, count(b) AS to_found"
    )
    return Statement(text, {"from_key": start.key, "to_key": end.key})


# --- the registry on the graph -------------------------------------------------------------

READ_REGISTRY = Statement(
    "MATCH (s:Schema {allowed: true})\n"
    "RETURN s.name AS label, s.required_properties AS required_properties, s.absorbs AS remaps_from,\n"
    "       s.kind AS kind, s.merge_keys AS merge_keys, s.property_types AS property_types,\n"
    "       s.fallback AS fallback, s.from_labels AS from_labels, s.to_labels AS to_labels,\n"
    "       s.description AS description, s.typed_tools AS typed_tools,\n"
    "       s.additional_properties AS additional_properties\n"
    "ORDER BY label"
)


def upsert_schema_entries(entries: list[Mapping[str, Any]], changed_at: str) -> Statement:
    """One statement for a whole file set, so a load is all or nothing on both engines; it also moves the
    registry's version on, which every gate on the graph polls to notice the change."""
    return Statement(
        "UNWIND $entries AS entry\n"
        "MERGE (s:Schema {name: entry.name})\n"
        "SET s += entry\n"
        "WITH count(s) AS loaded\n"
        "MERGE (v:WriteGateRegistry {name: 'registry'})\n"
        "SET v.version = coalesce(v.version, 0) + 1, v.changed_at = $changed_at\n"
        "RETURN loaded, v.version AS version",
        {"entries": entries, "changed_at": changed_at},
    )


def defined_schema_entries(names: list[str]) -> Statement:
    """Read-only: which of these names the registry defines outright (not only implied by a seed-format file;
    an entry written before `derived` was kept counts as defined)."""
    return Statement(
        "MATCH (s:Schema) WHERE s.name IN $names AND coalesce(s.derived, false) = false\n"
        "RETURN s.name AS name ORDER BY name",
        {"names": names},
    )


# The highest: two concurrent first loads on Memgraph, before migration 0005's constraint, could make two nodes.
REGISTRY_VERSION = Statement("MATCH (v:WriteGateRegistry {name: 'registry'}) RETURN max(v.version) AS version")

# Keeps the newest version node and deletes any other, so Memgraph can create the unique constraint on it.
COLLAPSE_REGISTRY_VERSIONS = Statement(
    "MATCH (v:WriteGateRegistry {name: 'registry'})\n"
    "WITH v ORDER BY coalesce(v.version, 0) DESC\n"
    "WITH collect(v) AS found\n"
    "UNWIND found[1..] AS extra\n"
    "DELETE extra"
)


# --- migrations bookkeeping ----------------------------------------------------------------

APPLIED_MIGRATIONS = Statement("MATCH (m:WriteGateMigration) RETURN m.name AS name ORDER BY name")


def record_migration(name: str, applied_at: str) -> Statement:
    return Statement(
        "MERGE (m:WriteGateMigration {name: $name})\nSET m.applied_at = $applied_at",
        {"name": name, "applied_at": applied_at},
    )


# --- the memory profile's writes -------------------------------------------------------------
# Its entities are found by name (`reads.Reader.find_by_names`) and then addressed by id, guarded by
# the name: an id the engine reused since the lookup matches nothing.

_BY_ID = "MATCH (n) WHERE id(n) = $id AND n.name = $name"


def create_relationship_if_absent(
    type_: str,
    start: Endpoint,
    end: Endpoint,
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
) -> Statement:
    """The official memory server's create: an existing (from, to, type) is left as it is, not updated."""
    lines = [
        _match("a", start.label, "$from_key"),
        _match("b", end.label, "$to_key"),
        f"OPTIONAL MATCH (a)-[existing:{quote(type_)}]->(b)",
        "WITH a, b, existing WHERE existing IS NULL",
        f"CREATE (a)-[r:{quote(type_)}]->(b)",
        _relationship_set(remapped_from is not None) + ",\n    r.weight = 1.0",
        "RETURN count(r) AS created",
    ]
    params: dict[str, Any] = {
        "from_key": start.key,
        "to_key": end.key,
        "properties": dict(properties),
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
    atomic, and it costs one round trip."""
    lookups = [
        f"OPTIONAL MATCH (x{i}:{quote(label)} {{{KEY_FIELD}: $name_key}})"
        for i, label in enumerate(scope.keyed_by_name)
    ]
    offset = len(lookups)
    lookups += [
        f"OPTIONAL MATCH (x{offset + i}:{quote(label)}) WHERE x{offset + i}.name = $name"
        for i, label in enumerate(scope.other)
    ]
    if not lookups:
        return write
    found = "coalesce(" + ", ".join(f"x{i}" for i in range(len(lookups))) + ")"
    text = "\n".join([*lookups, f"WITH {found} AS existing", "WHERE existing IS NULL", write.text])
    return Statement(text, {**write.params, "name": name, "name_key": identity_key({"name": name})})


def add_observations(node_id: int, name: str, contents: list[str], last_updated: str, updated_by: str) -> Statement:
    """Appends the contents not already there, in order (with their folded text); returns what was added (no
    row when nothing was). An appended observation changes the node, it does not re-state its claim: only
    the change is stamped."""
    text = (
        f"{_BY_ID}\n"
        "WITH n, [i IN range(0, size($contents) - 1) WHERE NOT $contents[i] IN coalesce(n.observations, [])] AS new\n"
        "WHERE size(new) > 0\n"  # nothing new: nothing changes, not even the stamp (a repeat is a no-op)
        "SET n.observations = coalesce(n.observations, []) + [i IN new | $contents[i]],\n"
        f"    n.{FOLD_PREFIX}observations = coalesce(n.{FOLD_PREFIX}observations, []) + [i IN new | $folded[i]],\n"
        f"    {_stamp('n', fields=CHANGE_FIELDS)}\n"
        f"{refresh_search_text('n', 'n, new')}\n"
        "RETURN [i IN new | $contents[i]] AS added"
    )
    params = {
        "id": node_id,
        "name": name,
        "contents": contents,
        "folded": [fold(c) for c in contents],
        "last_updated": last_updated,
        "updated_by": updated_by,
    }
    return Statement(text, params)


def delete_observations(
    node_id: int, name: str, observations: list[str], last_updated: str, updated_by: str
) -> Statement:
    text = (
        f"{_BY_ID}\n"
        f"WITH n, coalesce(n.observations, []) AS obs, coalesce(n.{FOLD_PREFIX}observations, []) AS folded\n"
        "WITH n, obs, folded, [i IN range(0, size(obs) - 1) WHERE NOT obs[i] IN $observations] AS keep\n"
        "WHERE size(keep) < size(obs)\n"
        "SET n.observations = [i IN keep | obs[i]],\n"
        f"    n.{FOLD_PREFIX}observations = [i IN keep | folded[i]],\n"
        f"    {_stamp('n', fields=CHANGE_FIELDS)}\n"
        f"{refresh_search_text('n')}"
    )
    params = {
        "id": node_id,
        "name": name,
        "observations": observations,
        "last_updated": last_updated,
        "updated_by": updated_by,
    }
    return Statement(text, params)


def _types_guard(var: str, allowed_types: list[str] | None) -> list[str]:
    """A delete removes the node's relationships too: only if the agent may write every one of their types."""
    if allowed_types is None:
        return []
    return [
        f"OPTIONAL MATCH ({var})-[rel]-()",
        f"WITH {var}, collect(DISTINCT type(rel)) AS types",
        "WHERE all(t IN types WHERE t IN $allowed_types)",
    ]


def delete_nodes(ids: list[int], names: list[str], allowed_types: list[str] | None) -> Statement:
    """Cascading delete by id, guarded by name (an id reused since the lookup deletes nothing) and by the
    agent's relationship-type grant (`allowed_types`, None for any)."""
    lines = [
        "UNWIND $ids AS i",
        "MATCH (n) WHERE id(n) = i AND n.name IN $names",
        *_types_guard("n", allowed_types),
        "DETACH DELETE n",
        "RETURN count(*) AS deleted",
    ]
    params: dict[str, Any] = {"ids": ids, "names": names}
    if allowed_types is not None:
        params["allowed_types"] = allowed_types
    return Statement("\n".join(lines), params)


def delete_relationship(type_: str, start_id: int, start_name: str, end_id: int, end_name: str) -> Statement:
    text = (
        f"MATCH (a)-[r:{quote(type_)}]->(b)\n"
        "WHERE id(a) = $from_id AND a.name = $from_name AND id(b) = $to_id AND b.name = $to_name\n"
        "DELETE r"
    )
    return Statement(text, {"from_id": start_id, "from_name": start_name, "to_id": end_id, "to_name": end_name})


# --- typed tools (generated from registry entries with property definitions) ------------------


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
) -> Statement:
    """One statement for the node and its relationship properties, so a failed part leaves nothing behind:
    what must exist is matched before anything is written (an update's node, then fail_if_missing
    targets: no match, no row, no write). Each link's type is replaced as a set: relationships of that type
    to other nodes are deleted, those to its targets merged (weight as write_relationship's). Returns
    `written` (0 when nothing was), `weights` (one list: each relationship's weight, link by link) and `stubs`
    (one list: each distinct target's stub flag, in first-named order)."""
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
            lines += _merge_stub(f"t{i}", endpoint.label, f"$to{i}_key", f"$to{i}_stub")
            params[f"to{i}_stub"] = stub_properties(endpoint.label, endpoint.keys)
        else:
            lines.append(_match(f"t{i}", endpoint.label, f"$to{i}_key"))
    if create:
        lines += [f"MERGE {node}", "ON CREATE SET n += $identity"]
        params["identity"] = identity_properties(label, merge_keys)
    carried = ["n", *(f"t{i}" for i in range(len(index)))]
    lines += [f"SET n += $properties, {_stamp('n')}, n._stub = null", refresh_search_text("n", ", ".join(carried))]
    made: list[str] = []
    for g, link in enumerate(links):
        targets = [f"t{index[(t.label, t.key)]}" for t in link.targets]
        keep = "[" + ", ".join(f"id({t})" for t in targets) + "]"
        lines += [
            f"WITH {', '.join(carried)}",
            f"OPTIONAL MATCH (n)-[old{g}:{quote(link.type)}]->(x{g}) WHERE NOT id(x{g}) IN {keep}",
            f"WITH {', '.join(carried)}, collect(old{g}) AS stale{g}",
            f"FOREACH (o IN stale{g} | DELETE o)",
        ]
        for target in targets:
            r = f"r{len(made)}"
            lines += [
                f"MERGE (n)-[{r}:{quote(link.type)}]->({target})",
                *(line.format(r=r, w="$weight") for line in _WEIGHT),
                f"SET {_stamp(r)}",
            ]
            made.append(r)
            carried.append(r)
    weights = ", ".join(f"{r}.weight" for r in made)
    stubs = ", ".join(f"t{i}._stub = true" for i in range(len(index)))
    lines.append(f"RETURN count(n) AS written, collect([{weights}]) AS weights, collect([{stubs}]) AS stubs")
    params |= {
        "properties": written_properties(label, properties, None),
        **provenance.params(),
    }
    return Statement("\n".join(lines), params)


def typed_delete(label: str, merge_keys: Mapping[str, Any], allowed_types: list[str] | None) -> Statement:
    lines = [
        _match("n", label, "$key"),
        *_types_guard("n", allowed_types),
        "DETACH DELETE n",
        "RETURN count(*) AS deleted",
    ]
    params: dict[str, Any] = {"key": identity_key(merge_keys)}
    if allowed_types is not None:
        params["allowed_types"] = allowed_types
    return Statement("\n".join(lines), params)


def relationship_types_of(endpoint: Endpoint) -> Statement:
    """Read-only: the types of a node's relationships (to explain a delete the grant refused)."""
    text = f"{_match('n', endpoint.label, '$key')}\nMATCH (n)-[r]-()\nRETURN DISTINCT type(r) AS type ORDER BY type"
    return Statement(text, {"key": endpoint.key})


def count_matching(endpoint: Endpoint) -> Statement:
    """Read-only: how many nodes an endpoint's label and keys match (to explain a write that matched none)."""
    return Statement(f"{_match('n', endpoint.label, '$key')}\nRETURN count(n) AS count", {"key": endpoint.key})


# --- batches: one UNWIND statement per label (or relationship type and endpoint shape) -------------


def write_nodes_batch(label: str) -> str:
    """Rows carry `key`, `identity`, `properties`, the provenance fields and `remapped_from` (null when not
    remapped, which leaves an earlier breadcrumb alone)."""
    return (
        "UNWIND $rows AS row\n"
        f"MERGE (n:{quote(label)} {{{KEY_FIELD}: row.key}})\n"
        "ON CREATE SET n += row.identity\n"
        f"SET n += row.properties, {_stamp('n', 'row.')},\n"
        "    n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from), n._stub = null\n"
        f"{refresh_search_text('n')}"
    )


def write_relationships_batch(type_: str, from_label: str, to_label: str, merge_endpoints: bool) -> str:
    if merge_endpoints:
        lines = [
            *_merge_stub("a", from_label, "row.from_key", "row.from_stub", "row."),
            *_merge_stub("b", to_label, "row.to_key", "row.to_stub", "row."),
        ]
    else:
        lines = [_match("a", from_label, "row.from_key"), _match("b", to_label, "row.to_key")]
    return "\n".join(
        [
            "UNWIND $rows AS row",
            *lines,
            f"MERGE (a)-[r:{quote(type_)}]->(b)",
            *(line.format(r="r", w="row.weight") for line in _WEIGHT),
            f"SET r += row.properties, {_stamp('r', 'row.')},",
            "    r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from)",
            "RETURN row.i AS i, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub",
        ]
    )
