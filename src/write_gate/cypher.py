"""Statement builders: pure functions from validated names to Cypher text plus parameters.

Every value travels as a parameter. The only names spliced into the text are labels,
relationship types and property keys that passed `identifiers.normalize_identifier`,
and they are backtick-quoted by `identifiers.quote`.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from write_gate.identifiers import quote

# Stamped on every write; the order is the order the SET clause lists them in.
PROVENANCE_FIELDS = ("confidence", "source", "extraction_method", "write_gate_version", "last_updated", "written_by")


# The search prefilter: each write appends the lower-cased text it wrote (label, string values) to the
# node's `_search`, so search_nodes can skip nodes that cannot match before running its exact test.
# Stale text only lets extra nodes through to that exact test; past the cap the node drops to exact
# tests alone (null), so the prefilter never hides a match.
SEARCH_FIELD = "_search"  # the gate's own; never shown to agents
SEARCH_SEPARATOR = "\x1f"
SEARCH_CAP = 8192


def search_text(label: str, *maps: Mapping[str, Any]) -> str:
    parts = [label]
    for values in maps:
        for value in values.values():
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, list):
                parts.extend(item for item in value if isinstance(item, str))
    return SEARCH_SEPARATOR + SEARCH_SEPARATOR.join(parts).lower()


def _search_update(var: str, text: str) -> str:
    """`var._search = ...` appending `text` (a parameter or row field) unless it is already there."""
    current = f"coalesce({var}._search, '')"
    return (
        f"{var}._search = CASE WHEN {current} CONTAINS {text} THEN {var}._search"
        f" WHEN size({current}) + size({text}) > {SEARCH_CAP} THEN null ELSE {current} + {text} END"
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
        return {name: getattr(self, name) for name in PROVENANCE_FIELDS}


def _key_pattern(keys: Mapping[str, Any], prefix: str) -> tuple[str, dict[str, Any]]:
    """`{`name`: $prefix_0}` with each value as a parameter."""
    params = {f"{prefix}_{i}": value for i, value in enumerate(keys.values())}
    text = ", ".join(f"{quote(key)}: ${prefix}_{i}" for i, key in enumerate(keys))
    return "{" + text + "}", params


def _stamp(var: str) -> str:
    return ", ".join(f"{var}.{name} = ${name}" for name in PROVENANCE_FIELDS)


@functools.lru_cache(maxsize=1024)
def _write_node_text(label: str, key_names: tuple[str, ...], remapped: bool) -> str:
    keys, _ = _key_pattern(dict.fromkeys(key_names), "key")
    sets = ["n += $properties", _stamp("n"), _search_update("n", "$search")]
    if remapped:
        sets.append("n._schema_remap_from = $remapped_from")
    # A full write makes a node real: it is no longer a stub left by merge_endpoints.
    sets.append("n._stub = null")
    return f"MERGE (n:{quote(label)} {keys})\nSET " + ",\n    ".join(sets) + "\nRETURN count(n) AS written"


def write_node(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
) -> Statement:
    # The text depends only on the statement's shape, so it is built once per shape.
    params = {f"key_{i}": value for i, value in enumerate(merge_keys.values())}
    if remapped_from is not None:
        params["remapped_from"] = remapped_from
    text = _write_node_text(label, tuple(merge_keys), remapped_from is not None)
    params["search"] = search_text(label, merge_keys, properties)
    return Statement(text, {**params, "properties": dict(properties), **provenance.params()})


def _relationship_set(
    properties: Mapping[str, Any], provenance: Provenance, remapped_from: str | None
) -> tuple[str, dict[str, Any]]:
    """The SET clause every relationship write ends with: its properties, then the provenance stamp."""
    sets = ["r += $properties", _stamp("r")]
    params: dict[str, Any] = {"properties": dict(properties), **provenance.params()}
    if remapped_from is not None:
        sets.append("r._schema_remap_from = $remapped_from")
        params["remapped_from"] = remapped_from
    return "SET " + ",\n    ".join(sets), params


@dataclass(frozen=True)
class Endpoint:
    label: str
    keys: Mapping[str, Any]


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
    from_keys, from_params = _key_pattern(start.keys, "from")
    to_keys, to_params = _key_pattern(end.keys, "to")
    if merge_endpoints:
        # Absent endpoints are created by their keys, flagged as stubs, and stamped like any write.
        lines = [
            f"MERGE (a:{quote(start.label)} {from_keys})",
            f"ON CREATE SET a._stub = true, {_stamp('a')}",
            f"MERGE (b:{quote(end.label)} {to_keys})",
            f"ON CREATE SET b._stub = true, {_stamp('b')}",
        ]
    else:
        lines = [f"MATCH (a:{quote(start.label)} {from_keys})", f"MATCH (b:{quote(end.label)} {to_keys})"]
    set_clause, params = _relationship_set(properties, provenance, remapped_from)
    lines += [
        f"MERGE (a)-[r:{quote(type_)}]->(b)",
        # Weight: 1.0 unless given; a new weight for an existing relationship is averaged with the old one.
        "ON CREATE SET r.weight = coalesce($weight, 1.0)",
        "ON MATCH SET r.weight = CASE WHEN $weight IS NULL THEN coalesce(r.weight, 1.0)"
        " ELSE (coalesce(r.weight, 1.0) + $weight) / 2 END",
        set_clause,
        "RETURN a._stub = true AS from_stub, b._stub = true AS to_stub, r.weight AS weight",
    ]
    params["weight"] = weight
    return Statement("\n".join(lines), {**from_params, **to_params, **params})


def endpoint_presence(start: Endpoint, end: Endpoint) -> Statement:
    """Read-only: after a fail_if_missing write matched nothing, say which endpoint is absent."""
    from_keys, from_params = _key_pattern(start.keys, "from")
    to_keys, to_params = _key_pattern(end.keys, "to")
    text = (
        f"OPTIONAL MATCH (a:{quote(start.label)} {from_keys})\n"
        "WITH count(a) AS from_found\n"
        f"OPTIONAL MATCH (b:{quote(end.label)} {to_keys})\n"
        "RETURN from_found, count(b) AS to_found"
    )
    return Statement(text, {**from_params, **to_params})


# --- the registry on the graph -------------------------------------------------------------

READ_REGISTRY = Statement(
    "MATCH (s:Schema {allowed: true})\n"
    "RETURN s.name AS label, s.required_properties AS required_properties, s.absorbs AS remaps_from,\n"
    "       s.kind AS kind, s.merge_keys AS merge_keys, s.property_types AS property_types,\n"
    "       s.fallback AS fallback, s.from_labels AS from_labels, s.to_labels AS to_labels,\n"
    "       s.description AS description, s.typed_tools AS typed_tools\n"
    "ORDER BY label"
)


def upsert_schema_entries(entries: list[Mapping[str, Any]]) -> Statement:
    """One statement for a whole file set, so a load is all or nothing on both engines."""
    return Statement(
        "UNWIND $entries AS entry\nMERGE (s:Schema {name: entry.name})\nSET s += entry", {"entries": entries}
    )


# --- migrations bookkeeping ----------------------------------------------------------------

APPLIED_MIGRATIONS = Statement("MATCH (m:WriteGateMigration) RETURN m.name AS name ORDER BY name")


def record_migration(name: str, applied_at: str) -> Statement:
    return Statement(
        "MERGE (m:WriteGateMigration {name: $name})\nSET m.applied_at = $applied_at",
        {"name": name, "applied_at": applied_at},
    )


# --- the memory profile's writes -------------------------------------------------------------


def create_relationship_if_absent(
    type_: str,
    start: Endpoint,
    end: Endpoint,
    properties: Mapping[str, Any],
    provenance: Provenance,
    remapped_from: str | None,
) -> Statement:
    """The official memory server's create: an existing (from, to, type) is left as it is, not updated."""
    from_keys, from_params = _key_pattern(start.keys, "from")
    to_keys, to_params = _key_pattern(end.keys, "to")
    set_clause, params = _relationship_set(properties, provenance, remapped_from)
    lines = [
        f"MATCH (a:{quote(start.label)} {from_keys})",
        f"MATCH (b:{quote(end.label)} {to_keys})",
        f"OPTIONAL MATCH (a)-[existing:{quote(type_)}]->(b)",
        "WITH a, b, existing WHERE existing IS NULL",
        f"CREATE (a)-[r:{quote(type_)}]->(b)",
        set_clause + ",\n    r.weight = 1.0",
        "RETURN count(r) AS created",
    ]
    return Statement("\n".join(lines), {**from_params, **to_params, **params})


def create_node_if_name_absent(labels: list[str], name: str, write: Statement) -> Statement:
    """The memory profile's create: names are unique across labels, as in the official server. One statement
    checks every registered label (an index seek each) and writes only if the name is nowhere; so the
    check and the write are atomic, and it costs one round trip."""
    if not labels:
        return write
    lookups = [f"OPTIONAL MATCH (x{i}:{quote(label)} {{name: $existing_name}})" for i, label in enumerate(labels)]
    found = "coalesce(" + ", ".join(f"x{i}" for i in range(len(labels))) + ")"
    text = "\n".join([*lookups, f"WITH {found} AS existing", "WHERE existing IS NULL", write.text])
    return Statement(text, {**write.params, "existing_name": name})


def add_observations(label: str, name: str, contents: list[str], provenance: Provenance) -> Statement:
    """Appends the contents not already there, in order; returns what was added."""
    text = (
        f"MATCH (n:{quote(label)} {{name: $name}})\n"
        "WITH n, [o IN $contents WHERE NOT o IN coalesce(n.observations, [])] AS added\n"
        f"SET n.observations = coalesce(n.observations, []) + added, {_stamp('n')}, {_search_update('n', '$search')}\n"
        "RETURN added"
    )
    params = {"name": name, "contents": contents, "search": search_text(label, {"o": contents})}
    return Statement(text, {**params, **provenance.params()})


def delete_observations(label: str, name: str, observations: list[str], last_updated: str) -> Statement:
    text = (
        f"MATCH (n:{quote(label)} {{name: $name}})\n"
        "SET n.observations = [o IN coalesce(n.observations, []) WHERE NOT o IN $observations],\n"
        "    n.last_updated = $last_updated"
    )
    return Statement(text, {"name": name, "observations": observations, "last_updated": last_updated})


def delete_nodes(ids: list[int], names: list[str]) -> Statement:
    """Cascading delete by id, guarded by name: an id reused since the lookup deletes nothing."""
    return Statement(
        "UNWIND $ids AS i\nMATCH (n) WHERE id(n) = i AND n.name IN $names\nDETACH DELETE n",
        {"ids": ids, "names": names},
    )


def delete_relationship(type_: str, start: Endpoint, end: Endpoint) -> Statement:
    from_keys, from_params = _key_pattern(start.keys, "from")
    to_keys, to_params = _key_pattern(end.keys, "to")
    text = f"MATCH (a:{quote(start.label)} {from_keys})-[r:{quote(type_)}]->(b:{quote(end.label)} {to_keys})\nDELETE r"
    return Statement(text, {**from_params, **to_params})


# --- typed tools (generated from registry entries with property definitions) ------------------


@dataclass(frozen=True)
class Link:
    """A relationship property's write: from the node to the target named by the property's value."""

    type: str
    target: Endpoint


def typed_write(
    label: str,
    merge_keys: Mapping[str, Any],
    properties: Mapping[str, Any],
    provenance: Provenance,
    links: list[Link],
    *,
    create: bool,
    merge_endpoints: bool,
) -> Statement:
    """One statement for the node and its relationship properties, so a failed part leaves nothing behind:
    targets are matched first (no target, no row, no write); each link replaces the node's previous
    relationship of that type."""
    lines: list[str] = []
    params: dict[str, Any] = {}
    for i, link in enumerate(links):
        keys, key_params = _key_pattern(link.target.keys, f"to{i}")
        params |= key_params
        if merge_endpoints:
            lines += [
                f"MERGE (t{i}:{quote(link.target.label)} {keys})",
                f"ON CREATE SET t{i}._stub = true, {_stamp(f't{i}')}",
            ]
        else:
            lines.append(f"MATCH (t{i}:{quote(link.target.label)} {keys})")
    node_keys, key_params = _key_pattern(merge_keys, "key")
    params |= key_params
    lines += [
        f"{'MERGE' if create else 'MATCH'} (n:{quote(label)} {node_keys})",
        f"SET n += $properties, {_stamp('n')}, {_search_update('n', '$search')}, n._stub = null",
    ]
    carried = ", ".join(["n", *(f"t{i}" for i in range(len(links)))])
    for i, link in enumerate(links):
        lines += [
            f"WITH {carried}",
            f"OPTIONAL MATCH (n)-[old{i}:{quote(link.type)}]->(x{i}) WHERE id(x{i}) <> id(t{i})",
            f"WITH {carried}, collect(old{i}) AS stale{i}",
            f"FOREACH (o IN stale{i} | DELETE o)",
            f"MERGE (n)-[r{i}:{quote(link.type)}]->(t{i})",
            f"ON CREATE SET r{i}.weight = 1.0",
            f"SET {_stamp(f'r{i}')}",
        ]
    lines.append("RETURN count(n) AS written")
    params["search"] = search_text(label, merge_keys, properties)
    return Statement("\n".join(lines), {**params, "properties": dict(properties), **provenance.params()})


def typed_delete(label: str, merge_keys: Mapping[str, Any]) -> Statement:
    keys, params = _key_pattern(merge_keys, "key")
    return Statement(f"MATCH (n:{quote(label)} {keys})\nDETACH DELETE n\nRETURN count(*) AS deleted", params)


def count_matching(endpoint: Endpoint) -> Statement:
    """Read-only: how many nodes an endpoint's label and keys match (to explain a write that matched none)."""
    keys, params = _key_pattern(endpoint.keys, "key")
    return Statement(f"MATCH (n:{quote(endpoint.label)} {keys})\nRETURN count(n) AS count", params)


def stub_flag(endpoint: Endpoint) -> Statement:
    keys, params = _key_pattern(endpoint.keys, "key")
    return Statement(f"MATCH (n:{quote(endpoint.label)} {keys})\nRETURN n._stub = true AS stub", params)


# --- batches: one UNWIND statement per label (or relationship type and endpoint shape) -------------


def write_nodes_batch(label: str, key_names: list[str]) -> str:
    """Rows carry `keys` (in key_names order), `properties`, the provenance fields and `remapped_from`
    (null when not remapped, which leaves an earlier breadcrumb alone)."""
    keys = ", ".join(f"{quote(k)}: row.keys[{i}]" for i, k in enumerate(key_names))
    stamp = ", ".join(f"n.{name} = row.{name}" for name in PROVENANCE_FIELDS)
    return (
        "UNWIND $rows AS row\n"
        f"MERGE (n:{quote(label)} {{{keys}}})\n"
        f"SET n += row.properties, {stamp}, {_search_update('n', 'row.search')},\n"
        "    n._schema_remap_from = coalesce(row.remapped_from, n._schema_remap_from), n._stub = null"
    )


def write_relationships_batch(
    type_: str, from_label: str, from_keys: list[str], to_label: str, to_keys: list[str], merge_endpoints: bool
) -> str:
    start = ", ".join(f"{quote(k)}: row.from_keys[{i}]" for i, k in enumerate(from_keys))
    end = ", ".join(f"{quote(k)}: row.to_keys[{i}]" for i, k in enumerate(to_keys))
    stamp = lambda var: ", ".join(f"{var}.{name} = row.{name}" for name in PROVENANCE_FIELDS)  # noqa: E731
    if merge_endpoints:
        lines = [
            f"MERGE (a:{quote(from_label)} {{{start}}})",
            f"ON CREATE SET a._stub = true, {stamp('a')}",
            f"MERGE (b:{quote(to_label)} {{{end}}})",
            f"ON CREATE SET b._stub = true, {stamp('b')}",
        ]
    else:
        lines = [f"MATCH (a:{quote(from_label)} {{{start}}})", f"MATCH (b:{quote(to_label)} {{{end}}})"]
    return "\n".join(
        [
            "UNWIND $rows AS row",
            *lines,
            f"MERGE (a)-[r:{quote(type_)}]->(b)",
            "ON CREATE SET r.weight = coalesce(row.weight, 1.0)",
            "ON MATCH SET r.weight = CASE WHEN row.weight IS NULL THEN coalesce(r.weight, 1.0)"
            " ELSE (coalesce(r.weight, 1.0) + row.weight) / 2 END",
            f"SET r += row.properties, {stamp('r')},",
            "    r._schema_remap_from = coalesce(row.remapped_from, r._schema_remap_from)",
            "RETURN row.i AS i, r.weight AS weight, a._stub = true AS from_stub, b._stub = true AS to_stub",
        ]
    )
