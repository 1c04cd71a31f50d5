"""Change records written before the order was decided by the write get their `seq`: their `at`, as a reader
sorted them then (core/history.py); and records written before the feed's windows their `seq_n`
(core/feed_windows.py), as do conflicts and safe retries' records (their `at`'s, for the prunes' windows); and
change records written before the keys of a millisecond their `seq_k` (each the first item of its statement:
they keep the order they had, by `change_id` within their `seq`), and their key as the index reads it (`seq_k1`).
In chunks, so one migration never holds a huge transaction."""

import logging

from write_gate.core.cypher.change_order import keyed, numbered
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL
from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.engines import GraphBackend

logger = logging.getLogger(__name__)

CHUNK = 10_000

BACKFILL_SEQ = Statement(
    f"MATCH (h:{CHANGE_LABEL}) WHERE h.seq IS NULL\nWITH h LIMIT {CHUNK}\nSET h.seq = h.at\nRETURN count(h) AS done"
)


async def backfill_change_order(backend: GraphBackend) -> int:
    """Every change record without `seq` gets its `at`; returns how many."""
    done = 0
    while True:
        rows = await backend.write(BACKFILL_SEQ)
        count = rows[0]["done"] if rows else 0
        done += count
        if count < CHUNK:
            break
    if done:
        logger.info("gave %d change records their order (seq)", done)
    return done


def number_seq(by_id: bool, label: str = CHANGE_LABEL, ordered_by: str = "seq") -> Statement:
    """A chunk of `label`'s records after engine id `$after`, in id order (FalkorDB's label scan by id is in that
    order already, and stops at the chunk: sorting would read every record left), so each chunk reads its own;
    each gets its `ordered_by` as a number, and a change record its key in its millisecond too."""
    sets = keyed("h", f"h.{ordered_by}") if label == CHANGE_LABEL else numbered("h", f"h.{ordered_by}")
    return _chunk_set(by_id, label, sets)


def _chunk_set(by_id: bool, label: str, sets: str) -> Statement:
    """`sets` on the chunk of `label`'s records after engine id `$after`, in id order (as `number_seq` says)."""
    ordered = "" if by_id else "ORDER BY id(h) "
    return Statement(
        f"MATCH (h:{label}) WHERE id(h) > $after\nWITH h {ordered}LIMIT {CHUNK}\n"
        f"SET {sets}\nRETURN count(h) AS done, max(id(h)) AS last"
    )


async def _in_chunks(backend: GraphBackend, statement: Statement) -> int:
    """Run a `number_seq` statement chunk after chunk to the last record; returns how many it numbered."""
    done, after = 0, -1
    while True:
        rows = await backend.write(Statement(statement.text, {"after": after}))
        count = rows[0]["done"] if rows else 0
        done += count
        if count < CHUNK:
            return done
        after = rows[0]["last"]


async def backfill_feed_windows(backend: GraphBackend) -> int:
    """Every change record gets its `seq_n` (and `seq_k`), and every conflict and safe retries' record its `at`'s;
    returns how many records."""
    done = 0
    for label, ordered_by in ((CHANGE_LABEL, "seq"), (CONFLICT_LABEL, "at"), (IDEMPOTENCY_LABEL, "at")):
        done += await _in_chunks(backend, number_seq(backend.dialect.pages_by_id, label, ordered_by))
    if done:
        logger.info("numbered %d change, conflict and safe retries' records for their windows (seq_n)", done)
    return done


def index_keys(by_id: bool) -> Statement:
    """A chunk of change records after engine id `$after`, in id order (as `number_seq`): each gets its key as the
    index reads it (core/feed_windows.SEQ_KEY_INDEXED)."""
    return _chunk_set(by_id, CHANGE_LABEL, f"h.{SEQ_KEY_INDEXED} = h.{SEQ_KEY} + 1")


async def backfill_indexed_keys(backend: GraphBackend) -> int:
    """Every change record gets `seq_k1`, its `seq_k` + 1, which the keyed windows read (a record written before
    it, or restored from a backup made before it); returns how many."""
    done = await _in_chunks(backend, index_keys(backend.dialect.pages_by_id))
    if done:
        logger.info("gave %d change records their keys as the index reads them (seq_k1)", done)
    return done


async def backfill_change_keys(backend: GraphBackend) -> int:
    """Every change record gets its `seq_k` (and its `seq_n` again: the same number); returns how many."""
    done = await _in_chunks(backend, number_seq(backend.dialect.pages_by_id))
    if done:
        logger.info("gave %d change records their keys in their millisecond (seq_k)", done)
    return done
