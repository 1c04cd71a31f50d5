"""Change records written before the order was decided by the write get their `seq`: their `at`, as a reader
sorted them then (core/history.py). In chunks, so one migration never holds a huge transaction."""

import logging

from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL
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
