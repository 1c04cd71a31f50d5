"""Nodes written before the substring index (migration 0014), or restored from a backup made before it, get their
trigrams (`_grams`, `core.grams`), cut here from their search text; then each registered label's full-text index
holds them. In chunks by engine id (FalkorDB) or `_key` (Memgraph), so each chunk reads its own nodes."""

import logging

from write_gate.core.cypher.reads import position_after
from write_gate.core.cypher.statement import Statement
from write_gate.core.grams import GRAMS_FIELD, grams_text
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD, SEARCH_FIELD
from write_gate.engines import GraphBackend
from write_gate.store.graph_registry import GraphRegistrySource

logger = logging.getLogger(__name__)

CHUNK = 2000


def without_grams(label: str, by_id: bool) -> Statement:
    """The next chunk of the label's nodes with search text and no trigrams, after `$after` in page order."""
    position = "id(n)" if by_id else f"n.{KEY_FIELD}"
    ordered = "" if by_id else f"ORDER BY {position} "  # FalkorDB's scan by id is in id order already
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE {position_after('n', by_id, '$after')}"
        f" AND n.{GRAMS_FIELD} IS NULL AND n.{SEARCH_FIELD} IS NOT NULL\n"
        f"WITH n {ordered}LIMIT {CHUNK}\n"
        f"RETURN id(n) AS id, n.{SEARCH_FIELD} AS text, {position} AS position"
    )


# `$rows`: [{id, text, grams}]. A node whose text changed since it was read keeps what its write gave it.
SET_GRAMS = Statement(
    "UNWIND $rows AS row\n"
    f"MATCH (n) WHERE id(n) = row.id AND n.{SEARCH_FIELD} = row.text\n"
    f"SET n.{GRAMS_FIELD} = row.grams\n"
    "RETURN count(n) AS done"
)


async def backfill_grams(backend: GraphBackend) -> int:
    """Every registered label's nodes without trigrams get theirs; returns how many."""
    by_id = backend.dialect.pages_by_id
    registry = await GraphRegistrySource(backend).load()
    done = 0
    for label in registry.all_canonical_labels():
        statement = without_grams(label, by_id)
        after: int | str = -1 if by_id else ""
        while rows := await backend.read(Statement(statement.text, {"after": after})):
            updates = [{"id": r["id"], "text": r["text"], "grams": grams_text(r["text"])} for r in rows]
            written = await backend.write(Statement(SET_GRAMS.text, {"rows": updates}))
            done += written[0]["done"] if written else 0
            if len(rows) < CHUNK:
                break
            after = rows[-1]["position"]
    if done:
        logger.info("gave %d nodes their trigrams for the substring search", done)
    return done


async def index_grams(backend: GraphBackend) -> None:
    """Migration 0014: the trigrams, then each registered label's full-text indexes (its trigrams' included)."""
    await backfill_grams(backend)
    registry = await GraphRegistrySource(backend).load()
    for label in registry.all_canonical_labels():
        await backend.ensure_text_index(label)
