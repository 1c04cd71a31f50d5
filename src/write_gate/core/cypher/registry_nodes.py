"""The registry on the graph (`:Schema` nodes and the version node) and the migrations' bookkeeping."""

from collections.abc import Mapping
from typing import Any

from write_gate.core.cypher.statement import Statement

READ_REGISTRY = Statement(
    "MATCH (s:Schema {allowed: true})\n"
    "RETURN s.name AS label, s.required_properties AS required_properties, s.absorbs AS remaps_from,\n"
    "       s.kind AS kind, s.merge_keys AS merge_keys, s.property_types AS property_types,\n"
    "       s.fallback AS fallback, s.from_labels AS from_labels, s.to_labels AS to_labels,\n"
    "       s.description AS description, s.typed_tools AS typed_tools,\n"
    "       s.additional_properties AS additional_properties, s.undeclared_properties AS undeclared_properties,\n"
    "       s.conflict_policy AS conflict_policy, s.half_life_days AS half_life_days, s.embed AS embed\n"
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


def registering(names: list[str]) -> Statement:
    """Read-only: how many allowed `:Schema` nodes name or absorb any of `names` (lower case), whatever their
    letter case or leading `:` (as `entries_from_rows` reads them). A registry of tens of entries is read whole."""
    return Statement(
        "MATCH (s:Schema {allowed: true})\n"
        "WHERE toLower(replace(s.name, ':', '')) IN $names\n"
        "   OR any(a IN coalesce(s.absorbs, []) WHERE toLower(replace(a, ':', '')) IN $names)\n"
        "RETURN count(s) AS found",
        {"names": names},
    )


def defined_schema_entries(names: list[str]) -> Statement:
    """Read-only: which of these names the registry defines outright (not only implied by a seed-format file;
    an entry written before `derived` was kept counts as defined)."""
    return Statement(
        "MATCH (s:Schema) WHERE s.name IN $names AND coalesce(s.derived, false) = false\n"
        "RETURN s.name AS name ORDER BY name",
        {"names": names},
    )


# Who wrote a registry entry (`origin` on its :Schema node): a migration's load of the bundled schemas, or an
# operator's `schema load`. An entry written before `origin` was kept has none, and counts as bundled.
BUNDLED, OPERATOR = "bundled", "operator"


def operator_schema_entries(names: list[str]) -> Statement:
    """Read-only: which of these names an operator's `schema load` wrote (a migration's load leaves them)."""
    return Statement(
        f"MATCH (s:Schema) WHERE s.name IN $names AND s.origin = '{OPERATOR}'\nRETURN s.name AS name ORDER BY name",
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


APPLIED_MIGRATIONS = Statement("MATCH (m:WriteGateMigration) RETURN m.name AS name ORDER BY name")


def record_migration(name: str, applied_at: str) -> Statement:
    return Statement(
        "MERGE (m:WriteGateMigration {name: $name})\nSET m.applied_at = $applied_at",
        {"name": name, "applied_at": applied_at},
    )
