"""The change records (`core.history`) that deletes and the memory profile's writes append, in the statement
that makes the change, so a change and its record land together or not at all.

Deletes build their records in Cypher, from the node or relationship as the statement matched it: a cascading
delete removes every relationship the node has when it runs, including one written after any read the service
could have made, so only the statement itself knows exactly what it deletes. The record maps are those of
`core.history.delete_changes` (tests compare the two): one per value not starting with `_`, its claim beside
it; a null in a map is not stored, so an absent claim or revision is left out, as there.

Writes whose `before` is known in Python (a create guarded by absence) pass `core.history` records as a
parameter (`append_changes`); the observations list, whose `before` only the statement sees, is recorded from
inside it (`observations_change`).

The records of one call share its `ChangeStamp`'s parameters: `change_id`, `at`, `agent`.
"""

from dataclasses import dataclass
from typing import Any

from write_gate.core.claims import CLAIM_PREFIX
from write_gate.core.history import CHANGE_LABEL, REVISION_FIELD, Op
from write_gate.core.identity import KEY_FIELD

_SHARED = "change_id: $change_id, at: $at, agent: $agent"


@dataclass(frozen=True)
class ChangeStamp:
    """One accepted call: its id (shared by its records), time and agent."""

    change_id: str
    at: str
    agent: str

    def params(self) -> dict[str, Any]:
        return {"change_id": self.change_id, "at": self.at, "agent": self.agent}


def append_changes(source: str = "$changes") -> str:
    """Append each record map of the list `source` as one change record."""
    return f"FOREACH (c IN {source} | CREATE (h:{CHANGE_LABEL}) SET h += c)"


def node_subject(var: str) -> str:
    return f"subject: 'node', label: labels({var})[0], key: {var}.{KEY_FIELD}"


def relationship_subject(var: str) -> str:
    start, end = f"startNode({var})", f"endNode({var})"
    return (
        f"subject: 'relationship', label: type({var}), from_label: labels({start})[0], from_key: {start}.{KEY_FIELD}, "
        f"to_label: labels({end})[0], to_key: {end}.{KEY_FIELD}"
    )


def _deleted(var: str, subject: str) -> str:
    """The list of a deleted node's or relationship's records: one per value it holds."""
    values = f"properties({var})"
    return (
        f"[k IN keys({var}) WHERE NOT k STARTS WITH '_' | {{{_SHARED}, op: '{Op.DELETE.value}', {subject}, "
        f"revision: {var}.{REVISION_FIELD}, property: k, before: {values}[k], "
        f"before_claim: {values}['{CLAIM_PREFIX}' + k]}}]"
    )


def deleted_node(var: str) -> str:
    return _deleted(var, node_subject(var))


def deleted_relationship(var: str) -> str:
    return _deleted(var, relationship_subject(var))


def deleted_relationships(list_var: str) -> str:
    """The records of every relationship in a list (those a cascading delete removes with its node)."""
    return f"reduce(acc = [], r IN {list_var} | acc + {deleted_relationship('r')})"


def node_deleted_with_relationships(var: str) -> list[str]:
    """Before `DETACH DELETE var`: the node's records and those of every relationship it has now (a loop once),
    appended."""
    return [
        f"OPTIONAL MATCH ({var})-[gone]-()",
        f"WITH {var}, collect(DISTINCT gone) AS gone",
        append_changes(f"{deleted_node(var)} + {deleted_relationships('gone')}"),
    ]


def nodes_deleted_with_relationships(list_var: str) -> list[str]:
    """Before deleting every node of a list: their records, and those of every relationship any of them has now,
    each once (one between two of them too)."""
    return [
        f"UNWIND {list_var} AS d",
        "OPTIONAL MATCH (d)-[gone]-()",
        f"WITH {list_var}, collect(DISTINCT gone) AS gone",
        append_changes(
            f"reduce(acc = [], d IN {list_var} | acc + {deleted_node('d')}) + {deleted_relationships('gone')}"
        ),
    ]


def observations_change(var: str, after: str) -> str:
    """A one-record list: the observations list as it is now (`before`, absent when there was none) and as
    `after` makes it, with the writer's `$claim`; its revision is the one the same statement sets."""
    return (
        f"[{{{_SHARED}, op: '{Op.SET.value}', {node_subject(var)}, "
        f"revision: {_next_revision(var)}, property: 'observations', "
        f"before: {var}.observations, after: {after}, before_claim: {var}.{CLAIM_PREFIX}observations, claim: $claim}}]"
    )


def property_change(var: str, prop: str, after: str) -> str:
    """A one-record list: the node's `prop` as it is now (`before`) and as `after` makes it (a gate-owned mark
    such as the archive's, which carries no claim); its revision is the one the same statement sets."""
    return (
        f"[{{{_SHARED}, op: '{Op.SET.value}', {node_subject(var)}, "
        f"revision: {_next_revision(var)}, property: '{prop}', before: {var}.{prop}, after: {after}}}]"
    )


def _next_revision(var: str) -> str:
    # As the gate's guard counts (core/cypher/records.py): no revision yet is revision 0.
    return f"coalesce({var}.{REVISION_FIELD}, 0) + 1"


def bump_revision(var: str) -> str:
    """A SET item: one more accepted write (`core.history.REVISION_FIELD`)."""
    return f"{var}.{REVISION_FIELD} = {_next_revision(var)}"
