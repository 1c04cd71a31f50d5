"""The lossless backup: every node and relationship exactly as stored, out to JSON lines and back into an empty
graph. Not the gate's write path: a restore brings back what the gate once wrote (its provenance, claims,
history, registry), which no agent's write may assert. The file's form is core/backup_file.py's."""

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from itertools import groupby

from write_gate.core.backup_file import (
    BackupContents,
    end_line,
    header_line,
    node_line,
    relationship_line,
)
from write_gate.core.clock import utc_now
from write_gate.core.cypher.backup import (
    COUNT_NODES,
    node_page,
    relationship_page,
    restore_nodes,
    restore_relationships,
)
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.stat_counts import STAT_LABELS, uncounted
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.engines.errors import engine_failure
from write_gate.services import stat_counts
from write_gate.store.grams import backfill_grams
from write_gate.store.history_order import backfill_indexed_keys
from write_gate.store.indexes import recreate_indexes

PAGE_SIZE = 5000
BATCH_SIZE = 1000


async def _pages(
    backend: GraphBackend, page: Statement, page_size: int, position: str = "id"
) -> AsyncIterator[list[dict]]:
    """Pages of `page_size` nodes by engine id; `position` is the column holding each row's node id (a node may
    give several rows, one per relationship)."""
    cursor = -1
    while True:
        rows = await backend.read(Statement(page.text, {"cursor": cursor, "limit": page_size}))
        if rows:
            yield rows
        if len({row[position] for row in rows}) < page_size:
            return
        cursor = rows[-1][position]


async def dump(backend: GraphBackend, page_size: int = PAGE_SIZE) -> AsyncIterator[str]:
    """The file's lines, header to end line. A relationship written while the dump runs, to a node the node pages
    had passed, is left out (the end line counts what the file holds); stop writers for an exact copy. An engine
    that fails midway is a refusal (engine_failure), never a file that ends early."""
    try:
        async for line in _lines(backend, page_size):
            yield line
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "backup") from exc


async def _lines(backend: GraphBackend, page_size: int) -> AsyncIterator[str]:
    yield header_line(backend.dialect.name, utc_now())
    positions: dict[int, int] = {}
    by_id = backend.dialect.pages_by_id
    async for rows in _pages(backend, node_page(by_id), page_size):
        for row in rows:
            if any(label in STAT_LABELS for label in row["labels"]):
                continue  # the statistics' own nodes: a restore counts afresh
            positions[row["id"]] = len(positions)
            yield node_line(positions[row["id"]], row["labels"], uncounted(row["props"]))
    relationships = 0
    async for rows in _pages(backend, relationship_page(by_id), page_size, position="from_id"):
        for row in rows:
            if row["id"] is None:  # a node with no outgoing relationship
                continue
            start, end = positions.get(row["from_id"]), positions.get(row["to_id"])
            if start is not None and end is not None:
                relationships += 1
                yield relationship_line(start, end, row["type"], uncounted(row["props"]))
    yield end_line(len(positions), relationships)


@dataclass
class Restored:
    nodes: int = 0
    relationships: int = 0
    indexes: list[str] = field(default_factory=list)


def _chunks[T](items: list[T], size: int) -> Iterable[list[T]]:
    return (items[i : i + size] for i in range(0, len(items), size))


async def ensure_empty(backend: GraphBackend) -> None:
    rows = await backend.read(COUNT_NODES)
    held = rows[0]["nodes"] if rows else 0
    if held:
        raise GateRejection(
            ErrorCode.RESTORE_TARGET_NOT_EMPTY,
            f"the target graph holds {held} nodes: a restore writes into an empty graph only; nothing was written",
            nodes=held,
        )


async def restore(
    backend: GraphBackend,
    contents: BackupContents,
    batch_size: int = BATCH_SIZE,
    advance: Callable[[int], None] = lambda _n: None,
) -> Restored:
    """Into an empty graph (else RESTORE_TARGET_NOT_EMPTY, nothing written): nodes by label set, relationships
    by type, each batch one UNWIND statement; then the indexes the gate serves with."""
    try:
        return await _restore(backend, contents, batch_size, advance)
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "restore") from exc


async def _restore(
    backend: GraphBackend, contents: BackupContents, batch_size: int, advance: Callable[[int], None]
) -> Restored:
    await ensure_empty(backend)
    restored = Restored()
    engine_ids: dict[int, int] = {}
    by_labels = sorted(range(len(contents.nodes)), key=lambda i: contents.nodes[i].labels)
    for labels, group in groupby(by_labels, key=lambda i: contents.nodes[i].labels):
        statement = restore_nodes(labels)
        for chunk in _chunks(list(group), batch_size):
            rows = [{"pos": i, "props": contents.nodes[i].properties} for i in chunk]
            for row in await backend.write(Statement(statement.text, {"rows": rows})):
                engine_ids[row["pos"]] = row["id"]
            restored.nodes += len(chunk)
            advance(len(chunk))
    rels = sorted(contents.relationships, key=lambda r: r.type)
    for type_, same_type in groupby(rels, key=lambda r: r.type):
        statement = restore_relationships(type_)
        for rel_chunk in _chunks(list(same_type), batch_size):
            rows = [{"from": engine_ids[r.start], "to": engine_ids[r.end], "props": r.properties} for r in rel_chunk]
            [row] = await backend.write(Statement(statement.text, {"rows": rows}))
            restored.relationships += row["created"]
            advance(len(rel_chunk))
    restored.indexes = await recreate_indexes(backend)
    await backfill_grams(backend)  # a backup made before the substring index holds no trigrams
    await backfill_indexed_keys(backend)  # nor one made before `seq_k1` its change records' keys as indexed
    await stat_counts.forget(backend)  # what a gate counted of the empty graph: the restored one is walked afresh
    return restored
