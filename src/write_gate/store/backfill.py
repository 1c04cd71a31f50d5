"""Nodes written before identity keys existed get theirs: `_key`, their folded search text, and the
label's identity index; FalkorDB's old indexes on raw merge-key values, which miss strings edged with
white space, are dropped.

Two old nodes with one identity (the duplicates that those indexes let MERGE create) both stay: the
first keeps the identity, each other one gets a key of its own naming its node id, and the migration
logs them, so nothing is lost and an operator can merge them.
"""

import logging
from typing import Any

from write_gate.core.cypher.clauses import refresh_search_text
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import PROTECTED_FIELDS, quote
from write_gate.core.identity import KEY_FIELD, LABEL_FOLD_FIELD, folded_properties, identity_key, label_fold
from write_gate.core.registry import SchemaEntry
from write_gate.engines import BackendError, GraphBackend
from write_gate.store.graph_registry import GraphRegistrySource

logger = logging.getLogger(__name__)

BATCH = 500


def without_key(label: str) -> Statement:
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE n.{KEY_FIELD} IS NULL\n"
        "RETURN id(n) AS id, properties(n) AS props\nORDER BY id\nLIMIT $limit",
        {"limit": BATCH},
    )


def taken_keys(label: str, keys: list[str]) -> Statement:
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE n.{KEY_FIELD} IN $keys RETURN n.{KEY_FIELD} AS key", {"keys": keys}
    )


def set_backfilled(dialect: Dialect) -> Statement:
    """`$rows`: [{id, props}]: each node's identity and folded text, then its search text rebuilt."""
    return Statement(
        f"UNWIND $rows AS row\nMATCH (n) WHERE id(n) = row.id\nSET n += row.props\n{refresh_search_text('n', dialect)}"
    )


def identity_of(entry: SchemaEntry, node_id: int, props: dict[str, Any]) -> dict[str, Any]:
    names = entry.merge_keys or ("name",)
    if all(name in props for name in names):
        return {name: props[name] for name in names}
    return {"_node": node_id}  # no identity was ever written: a key of its own, so it stays reachable by reads


def backfilled(entry: SchemaEntry, props: dict[str, Any]) -> dict[str, Any]:
    agent_written = {k: v for k, v in props.items() if not k.startswith("_") and k not in PROTECTED_FIELDS}
    remapped = props.get("_schema_remap_from")
    return {**folded_properties(agent_written), LABEL_FOLD_FIELD: label_fold(entry.label, remapped)}


# FalkorDB's answer to a DROP INDEX of an index it does not hold.
NO_SUCH_INDEX = "no such index"


async def drop_index(backend: GraphBackend, label: str, prop: str) -> None:
    """An index that may not be there dropped: one on a raw merge-key value (identity lives in `_key`), or one no
    statement reads any more (migrations' `drop_indexes_beside`). Where the engine keeps its indexes
    (`Dialect.drop_index` is None), nothing is done; an index that is not there is done too, and any other failure
    of the engine is raised."""
    if (ddl := backend.dialect.drop_index(label, prop)) is None:
        return
    try:
        await backend.write(Statement(ddl))
    except BackendError as exc:
        if NO_SUCH_INDEX not in str(exc):
            raise


async def backfill_identity(backend: GraphBackend) -> int:
    """Every node of a registered label without `_key` gets one; returns how many."""
    registry = await GraphRegistrySource(backend).load()
    done = 0
    for label in registry.all_canonical_labels():
        entry = registry.get_entry(label)
        assert entry is not None
        await backend.ensure_unique(label, KEY_FIELD)
        for name in entry.merge_keys or ("name",):
            await drop_index(backend, label, name)
        while rows := await backend.read(without_key(label)):
            keys = {row["id"]: identity_key(identity_of(entry, row["id"], row["props"])) for row in rows}
            taken = {r["key"] for r in await backend.read(taken_keys(label, list(set(keys.values()))))}
            updates = []
            for row in rows:
                key = keys[row["id"]]
                if key in taken:
                    logger.warning(
                        "%s node %s duplicates the identity %s: kept under a key of its own", label, row["id"], key
                    )
                    key = identity_key({"_duplicate_of": key, "_node": row["id"]})
                taken.add(key)
                updates.append({"id": row["id"], "props": {KEY_FIELD: key, **backfilled(entry, row["props"])}})
            await backend.write(Statement(set_backfilled(backend.dialect).text, {"rows": updates}))
            done += len(updates)
    if done:
        logger.info("gave %d nodes written before identity keys their _key", done)
    return done
