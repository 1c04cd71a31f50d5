"""The change records (`core.history`) that deletes and the memory profile's writes append, in the statement
that makes the change, so a change and its record land together or not at all.

Deletes build their records in Cypher, from the node or relationship as the statement matched it: a cascading
delete removes every relationship the node has when it runs, including one written after any read the service
could have made, so only the statement itself knows exactly what it deletes. The record maps are those of
`core.history.delete_changes` (tests compare the two): one per subject, every value not starting with `_`,
its claim beside it; a null in a map is not stored, so an absent revision is left out, as there.

Writes whose `before` is known in Python (a create guarded by absence) pass `core.history` records as a
parameter (`append_changes`); the observations list, whose `before` only the statement sees, is recorded from
inside it (`observations_change`).

The records of one call share its `ChangeStamp`'s parameters: `change_id`, `at`, `agent`. Each record's `seq`
(core/cypher/change_order.py) is computed by the statement: a write computes it in a `WITH` before it changes
the subject (the records and the subject's `_seq` then take that one value); a delete computes each deleted
subject's from what it held.
"""

from dataclasses import dataclass, replace
from typing import Any

from write_gate.core.claims import CLAIM_PREFIX
from write_gate.core.cypher.change_order import keyed, next_seq, ordered, set_seq
from write_gate.core.cypher.stat_counts import dropped
from write_gate.core.history import (
    AFTER_VALUES,
    BEFORE_CLAIMS,
    BEFORE_VALUES,
    CHANGE_LABEL,
    PROPERTIES,
    REVISION_FIELD,
    Op,
)
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

    def restamped(self, at: str) -> "ChangeStamp":
        """The same change at `at`: a long call's later statement (services/call_stamps.py)."""
        return self if at == self.at else replace(self, at=at)


def append_changes(source: str = "$changes", seq: str | None = None) -> str:
    """Append each record map of the list `source` as one change record; `seq`, an expression for the records
    whose maps carry none of their own (a parameter's)."""
    sets = ordered("h", seq) if seq else keyed("h", "c.seq")
    return f"FOREACH (c IN {source} | CREATE (h:{CHANGE_LABEL}) SET h += c, {sets})"


def node_subject(var: str) -> str:
    return f"subject: 'node', label: labels({var})[0], key: {var}.{KEY_FIELD}"


def relationship_subject(var: str) -> str:
    start, end = f"startNode({var})", f"endNode({var})"
    return (
        f"subject: 'relationship', label: type({var}), from_label: labels({start})[0], from_key: {start}.{KEY_FIELD}, "
        f"to_label: labels({end})[0], to_key: {end}.{KEY_FIELD}"
    )


def _deleted(var: str, subject: str) -> str:
    """The list of a deleted node's or relationship's record (none when it held no value)."""
    values = f"properties({var})"
    names = f"[k IN keys({var}) WHERE NOT k STARTS WITH '_'"
    record = (
        f"{{{_SHARED}, op: '{Op.DELETE.value}', {subject}, revision: {var}.{REVISION_FIELD}, "
        f"seq: {next_seq([var])}, {PROPERTIES}: {names}], {BEFORE_VALUES}: {names} | [{values}[k]]], "
        f"{AFTER_VALUES}: {names} | []], {BEFORE_CLAIMS}: {names} | coalesce({values}['{CLAIM_PREFIX}' + k], [])]}}"
    )
    return f"[record IN [{record}] WHERE size(record.{PROPERTIES}) > 0]"


def deleted_node(var: str) -> str:
    return _deleted(var, node_subject(var))


def deleted_relationship(var: str) -> str:
    return _deleted(var, relationship_subject(var))


def append_deleted_relationships(list_var: str) -> str:
    """Append the records of every relationship in a list (those a cascading delete removes with its node), one
    relationship at a time: a list of them all grown in a `reduce` is copied at every step, which made deleting
    800 entities take 2.6 s (200: 0.2 s)."""
    return append_each(list_var, "r", deleted_relationship("r"))


def append_each(list_var: str, var: str, records: str) -> str:
    """Append, for each `var` of the list `list_var`, the records of the list expression `records`."""
    return f"FOREACH ({var} IN {list_var} | {append_changes(records)})"


def node_deleted_with_relationships(var: str) -> list[str]:
    """Before `DETACH DELETE var`: the node's records and those of every relationship it has now (a loop once),
    appended."""
    return [
        f"OPTIONAL MATCH ({var})-[gone]-()",
        f"WITH {var}, collect(DISTINCT gone) AS gone",
        append_changes(deleted_node(var)),
        append_deleted_relationships("gone"),
        dropped(f"[{var}] + gone"),
    ]


def nodes_deleted_with_relationships(var: str, list_var: str) -> list[str]:
    """Gather the nodes matched as `var` into the list `list_var` and, before deleting them, append their records
    and those of every relationship any of them has now, each once (one between two of them too). Both are
    gathered in one aggregation with no grouping key: grouped by the list of nodes, each row hashed the whole
    list, and deleting 3,200 entities took 3 s."""
    return [
        f"OPTIONAL MATCH ({var})-[gone]-()",
        f"WITH collect(DISTINCT {var}) AS {list_var}, collect(DISTINCT gone) AS gone",
        append_each(list_var, "d", deleted_node("d")),
        append_deleted_relationships("gone"),
        dropped(f"{list_var} + gone"),
    ]


def observations_change(var: str, after: str, seq: str = "seq") -> str:
    """A one-record list: the observations list as it is now (`before`, none when there was none) and as `after`
    makes it, with the writer's `$claim`; its revision and `seq` are the ones the same statement sets."""
    return (
        f"[{{{_SHARED}, op: '{Op.SET.value}', {node_subject(var)}, revision: {_next_revision(var)}, seq: {seq}, "
        f"{PROPERTIES}: ['observations'], {BEFORE_VALUES}: [{_wrapped(f'{var}.observations')}], "
        f"{AFTER_VALUES}: [[{after}]], {BEFORE_CLAIMS}: [coalesce({var}.{CLAIM_PREFIX}observations, [])], "
        "claim: $claim}]"
    )


def property_change(var: str, prop: str, after: str, seq: str = "seq") -> str:
    """A one-record list: the node's `prop` as it is now (`before`) and as `after` makes it (a gate-owned mark
    such as the archive's, which carries no claim); its revision and `seq` are the ones the same statement sets."""
    return (
        f"[{{{_SHARED}, op: '{Op.SET.value}', {node_subject(var)}, revision: {_next_revision(var)}, seq: {seq}, "
        f"{PROPERTIES}: ['{prop}'], {BEFORE_VALUES}: [{_wrapped(f'{var}.{prop}')}], "
        f"{AFTER_VALUES}: [{_wrapped(after)}], {BEFORE_CLAIMS}: [[]]}}]"
    )


def _wrapped(value: str) -> str:
    """As `core.history.wrapped`: [] for none, else [value]."""
    return f"CASE WHEN {value} IS NULL THEN [] ELSE [{value}] END"


def _next_revision(var: str) -> str:
    # As the gate's guard counts (core/cypher/records.py): no revision yet is revision 0.
    return f"coalesce({var}.{REVISION_FIELD}, 0) + 1"


def bump_revision(var: str, seq: str = "seq") -> str:
    """SET items: one more accepted write (`core.history.REVISION_FIELD`), its change the subject's last."""
    return f"{var}.{REVISION_FIELD} = {_next_revision(var)}, {set_seq(var, seq)}"


def with_seq(carried: str, *subjects: str) -> str:
    """`WITH carried, <the change's seq> AS seq`: before a write to `subjects` that records its change."""
    return f"WITH {carried}, {next_seq(subjects)} AS seq"
