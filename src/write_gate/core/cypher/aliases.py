"""Aliases: a node merged into another stays in the graph, marked with its survivor's label and `_key`, so
its identity still leads there. Writes refuse to land on one (`unless_alias`, in the write statement itself,
so a merge between a gate's look-up and its write cannot slip data onto an alias); the services then follow
the alias and write to the survivor. Reads skip aliases and show their survivors.
"""

from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import FOLD_PREFIX, KEY_FIELD

ALIAS_OF = "_alias_of"  # the survivor's `_key`
ALIAS_LABEL = "_alias_label"  # the survivor's label
# On the survivor: its aliases' names, folded, so search_nodes finds it by any of them.
ALIAS_FOLD = FOLD_PREFIX + "_alias"


def unless_alias(*variables: str, carried: tuple[str, ...] = ()) -> str:
    """The write path's one hook: carry on only with nodes that are not aliases (no row: nothing written).
    `carried`: other variables the statement still needs (a batch's `row`)."""
    conditions = " AND ".join(f"{var}.{ALIAS_OF} IS NULL" for var in variables)
    return f"WITH {', '.join((*carried, *variables))} WHERE {conditions}"


def not_alias(var: str) -> str:
    """The same test, for a WHERE a read already has."""
    return f"{var}.{ALIAS_OF} IS NULL"


def alias_target(label: str) -> Statement:
    """Read-only: whether the node of `key` is an alias, and of what. Parameters: `key`."""
    return Statement(
        f"MATCH (n:{quote(label)} {{{KEY_FIELD}: $key}})\n"
        f"RETURN n.{ALIAS_LABEL} AS label, n.{ALIAS_OF} AS key, properties(n) AS props"
    )


def node_id(label: str) -> Statement:
    """Read-only: a node's id by identity. Parameters: `key`."""
    return Statement(f"MATCH (n:{quote(label)} {{{KEY_FIELD}: $key}})\nRETURN id(n) AS id")
