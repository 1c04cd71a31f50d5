"""The clauses of a guarded write: the revision guard, the next revision, and the records appended with it.

The records are created by the write's own statement, so a change and its history land together or not at
all; `FOREACH ... CREATE ... SET h += record` runs on both engines and creates nothing for an empty list. The
guard computes the change's `seq` from the subject's last one (core/cypher/change_order.py), and the write sets
it on the subject and on its record.
"""

from dataclasses import dataclass, field
from typing import Any

from write_gate.core.cypher.aliases import ALIAS_OF
from write_gate.core.cypher.change_order import next_seq, numbered, ordered, set_seq
from write_gate.core.cypher.clauses import refresh_search_text, stamp
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL, REVISION_FIELD
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Guard:
    """What a guarded write carries: the revision it read, and its records (core/guard.py builds them)."""

    revision: int
    fresh: bool = False  # the subject was absent when read: a relationship's weight starts, not averages
    changes: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    change_id: str = ""  # the write's, for records a statement builds itself (a typed write's replaced links)

    def params(self) -> dict[str, Any]:
        values = {"revision": self.revision, "fresh": self.fresh, "changes": self.changes, "conflicts": self.conflicts}
        return values | ({"change_id": self.change_id} if self.change_id else {})


def revision_guard(var: str, source: str = "$", carried: tuple[str, ...] = (), at: str | None = None) -> str:
    """Carry on only if the subject is still at the revision the write was decided on (absent counts as 0), with
    the `seq` of the change (`at`: its records' time, the provenance's `last_updated` unless given)."""
    at = at or f"{source}last_updated"
    return (
        f"WITH {', '.join((*carried, var))}, {next_seq([var], at)} AS seq\n"
        f"WHERE coalesce({var}.{REVISION_FIELD}, 0) = {source}revision"
    )


def next_revision(var: str, source: str = "$") -> str:
    """For the write's SET clause (after `revision_guard`): the revision, and the subject's last change."""
    return f"{var}.{REVISION_FIELD} = {source}revision + 1, {set_seq(var)}"


def append_records(source: str = "$") -> list[str]:
    """After `revision_guard` (its `seq` in scope)."""
    return [
        f"FOREACH (record IN {source}changes | CREATE (h:{CHANGE_LABEL}) SET h += record, {ordered('h', 'seq')})",
        f"FOREACH (record IN {source}conflicts | CREATE (h:{CONFLICT_LABEL})"
        f" SET h += record, {numbered('h', 'record.at')})",
    ]


def guarded_relationship_set(remapped: bool) -> list[str]:
    """After `MERGE (a)-[r:T]->(b)`: the guard, then the weight (started or averaged: after the guard, so a
    write that lost the race changes nothing), the properties, the stamp, the revision, the records."""
    weight = (
        "r.weight = CASE WHEN $fresh OR $weight IS NULL THEN coalesce(r.weight, $weight, 1.0)"
        " ELSE (coalesce(r.weight, 1.0) + $weight) / 2 END"
    )
    sets = [weight, "r += $properties", stamp("r"), next_revision("r")]
    if remapped:
        sets.append("r._schema_remap_from = $remapped_from")
    return [
        "ON CREATE SET r.created_at = $last_updated",
        revision_guard("r", carried=("a", "b")),
        "SET " + ",\n    ".join(sets),
        *append_records(),
    ]


# --- what a guarded write reads first (read-only) ---------------------------------------------------------


def current_nodes(label: str) -> Statement:
    """The stored properties of the nodes of `keys` that exist (aliases included: the caller follows them)."""
    return Statement(
        f"UNWIND $keys AS k\nMATCH (n:{quote(label)} {{{KEY_FIELD}: k}})\nRETURN k AS key, properties(n) AS props"
    )


def relationship_properties(type_: str, from_label: str, to_label: str) -> Statement:
    """The stored properties of the relationships of `type_` between the endpoint pairs of `pairs` (those that
    have one). Parameters: `pairs`, each `{from_key, to_key}`."""
    return Statement(
        "UNWIND $pairs AS p\n"
        f"MATCH (a:{quote(from_label)} {{{KEY_FIELD}: p.from_key}})-[r:{quote(type_)}]->"
        f"(b:{quote(to_label)} {{{KEY_FIELD}: p.to_key}})\n"
        "RETURN p.from_key AS from_key, p.to_key AS to_key, properties(r) AS props"
    )


def current_relationship(type_: str, from_label: str, to_label: str) -> Statement:
    """Whether each endpoint exists and is an alias, and the relationship's stored properties (null: none).
    Parameters: `from_key`, `to_key`."""
    return Statement(
        f"OPTIONAL MATCH (a:{quote(from_label)} {{{KEY_FIELD}: $from_key}})\n"
        f"OPTIONAL MATCH (b:{quote(to_label)} {{{KEY_FIELD}: $to_key}})\n"
        f"OPTIONAL MATCH (a)-[r:{quote(type_)}]->(b)\n"
        f"RETURN a IS NOT NULL AS from_found, b IS NOT NULL AS to_found, a.{ALIAS_OF} AS from_alias,\n"
        f"       b.{ALIAS_OF} AS to_alias, CASE WHEN r IS NULL THEN null ELSE properties(r) END AS props"
    )


# --- resolve_conflict ------------------------------------------------------------------------------------

# Read-only: one conflict record. Parameters: `conflict_id`.
CONFLICT_BY_ID = Statement(
    f"MATCH (c:{CONFLICT_LABEL} {{conflict_id: $conflict_id}})\nRETURN properties(c) AS conflict LIMIT 1"
)

_RESOLVED = "c.status = 'resolved', c.picked = $picked, c.resolved_by = $resolved_by, c.resolved_at = $resolved_at"
_OPEN_CONFLICT = f"MATCH (c:{CONFLICT_LABEL} {{conflict_id: $conflict_id}}) WHERE c.status = 'open'"

# Picking the current value changes no data: the conflict is closed. Parameters: `conflict_id`, `picked`,
# `resolved_by`, `resolved_at`.
KEEP_CURRENT = Statement(f"{_OPEN_CONFLICT}\nSET {_RESOLVED}\nRETURN count(c) AS resolved")


def take_incoming_on_node(label: str, dialect: Dialect) -> Statement:
    """The held value written with its own claim, guarded by the node's revision and by the conflict still
    being open (two resolvers racing: one wins), the conflict closed and the change recorded, in one statement.
    Parameters: `key`, `properties`, `revision`, `changes` (`conflicts` unused: empty), and KEEP_CURRENT's."""
    return Statement(
        f"{_OPEN_CONFLICT}\n"
        f"MATCH (n:{quote(label)} {{{KEY_FIELD}: $key}})\n"
        f"{revision_guard('n', carried=('c',), at='$resolved_at')}\n"
        f"SET n += $properties, {next_revision('n')},\n    {_RESOLVED}\n"
        + "\n".join(append_records())
        + f"\n{refresh_search_text('n', dialect)}\nRETURN count(n) AS resolved"
    )


def take_incoming_on_relationship(type_: str, from_label: str, to_label: str) -> Statement:
    """As `take_incoming_on_node`, for a relationship. Parameters: `from_key`, `to_key` besides."""
    return Statement(
        f"{_OPEN_CONFLICT}\n"
        f"MATCH (a:{quote(from_label)} {{{KEY_FIELD}: $from_key}})-[r:{quote(type_)}]->"
        f"(b:{quote(to_label)} {{{KEY_FIELD}: $to_key}})\n"
        f"{revision_guard('r', carried=('c',), at='$resolved_at')}\n"
        f"SET r += $properties, {next_revision('r')},\n    {_RESOLVED}\n"
        + "\n".join(append_records())
        + "\nRETURN count(r) AS resolved"
    )
