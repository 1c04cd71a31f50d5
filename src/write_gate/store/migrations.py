"""Versioned migrations from `migrations/`, applied in name order, each once, recorded in the graph.

A migration is either JSON, whose operations each dialect compiles (indexes and unique
constraints differ between engines), or `.cypher`: portable statements separated by `;`.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from write_gate.core.clock import utc_now
from write_gate.core.cypher import stat_counts as stat_cypher
from write_gate.core.cypher.registry_nodes import APPLIED_MIGRATIONS, COLLAPSE_REGISTRY_VERSIONS, record_migration
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.stat_counts import META_KEY, STAT_LABELS
from write_gate.engines import GraphBackend
from write_gate.store.backfill import backfill_identity, drop_index
from write_gate.store.bundled import bundled
from write_gate.store.grams import index_grams
from write_gate.store.history_order import (
    backfill_change_keys,
    backfill_change_order,
    backfill_feed_windows,
    backfill_indexed_keys,
)
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.store.text_indexes import index_search_text


class JsonMigration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""
    # Fold duplicate registry version nodes into one before a unique constraint on it is created.
    collapse_registry_versions: bool = False
    indexes: list[tuple[str, str]] = Field(default_factory=list)
    # Indexes a statement reads only beside another's range, in the same scan: made where the engine reads two
    # ranges in one scan (FalkorDB), left out where its planner could take one alone (Memgraph; dialect.py).
    indexes_beside: list[tuple[str, str]] = Field(default_factory=list)
    unique: list[tuple[str, str]] = Field(default_factory=list)
    # Indexes an earlier migration made beside another's range that no statement reads any more: each costs every
    # write of its label an entry. Dropped where `indexes_beside` made them; gone already is done.
    drop_indexes_beside: list[tuple[str, str]] = Field(default_factory=list)
    # Folders or files under the schemas directory, loaded like `write-gate schema load`.
    load_schemas: list[str] = Field(default_factory=list)
    # Give nodes written before identity keys existed their `_key` (see backfill.py).
    backfill_identity: bool = False
    # Index every registered label's search text for the ranked search (see text_indexes.py).
    text_indexes: bool = False
    # Give change records written before the write decided their order their `seq` (see history_order.py).
    backfill_change_order: bool = False
    # Give change records written before the feed's windows their `seq_n` (see history_order.py).
    backfill_feed_windows: bool = False
    # Give change records written before the keys of a millisecond their `seq_k` (see history_order.py).
    backfill_change_keys: bool = False
    # Give every change record its key as the index reads it, `seq_k1` (see history_order.py).
    backfill_indexed_keys: bool = False
    # Give every node its trigrams and index them for the substring search (see grams.py).
    gram_indexes: bool = False
    # Give the statistics' one `_StatMeta` node its key, before a unique constraint on it is created; where more than
    # one was made (first folds at once), every statistics node goes, and the next fold counts the graph afresh.
    key_statistics_meta: bool = False


@dataclass(frozen=True)
class Migration:
    name: str
    path: Path


def discover(folder: Path) -> list[Migration]:
    files = sorted(p for p in folder.iterdir() if p.suffix in (".json", ".cypher"))
    return [Migration(p.stem, p) for p in files]


async def _apply(backend: GraphBackend, migration: Migration, schemas_dir: Path) -> None:
    if migration.path.suffix == ".cypher":
        for text in migration.path.read_text(encoding="utf-8").split(";"):
            if text.strip():
                await backend.write(Statement(text.strip()))
        return
    spec = JsonMigration.model_validate(json.loads(migration.path.read_text(encoding="utf-8")))
    if spec.collapse_registry_versions:
        await backend.write(COLLAPSE_REGISTRY_VERSIONS)
    if spec.key_statistics_meta:
        await key_statistics_meta(backend)
    for label, prop in spec.indexes:
        await backend.ensure_index(label, prop)
    for label, prop in spec.indexes_beside if backend.dialect.two_ranges_in_one_scan else []:
        await backend.ensure_index(label, prop)
    for label, prop in spec.unique:
        await backend.ensure_unique(label, prop)
    for label, prop in spec.drop_indexes_beside if backend.dialect.two_ranges_in_one_scan else []:
        await drop_index(backend, label, prop)
    if spec.load_schemas:
        await load_into_graph(backend, read_sources([schemas_dir / p for p in spec.load_schemas]), bundled=True)
    if spec.backfill_identity:
        await backfill_identity(backend)
    if spec.text_indexes:
        await index_search_text(backend)
    if spec.backfill_change_order:
        await backfill_change_order(backend)
    if spec.backfill_feed_windows:
        await backfill_feed_windows(backend)
    if spec.backfill_change_keys:
        await backfill_change_keys(backend)
    if spec.backfill_indexed_keys:
        await backfill_indexed_keys(backend)
    if spec.gram_indexes:
        await index_grams(backend)


async def key_statistics_meta(backend: GraphBackend) -> None:
    """One `_StatMeta`, keyed: several (each with its own cursors) cannot be told apart, so all the statistics are
    forgotten, as after a restore, and counted again by the next fold's walk."""
    [row] = await backend.read(Statement(f"MATCH (m:{quote(stat_cypher.META_LABEL)}) RETURN count(m) AS n"))
    if row["n"] > 1:
        for label in STAT_LABELS:
            await backend.write(stat_cypher.forget(label))
    await backend.write(Statement(f"MATCH (m:{quote(stat_cypher.META_LABEL)}) SET m.k = $key", {"key": META_KEY}))


async def migrate(backend: GraphBackend, folder: Path | None = None, schemas_dir: Path | None = None) -> list[str]:
    """Apply what has not been applied; return the names applied now."""
    folder = folder or bundled("migrations")
    schemas_dir = schemas_dir or bundled("schemas")
    done = {row["name"] for row in await backend.read(APPLIED_MIGRATIONS)}
    applied = []
    for migration in discover(folder):
        if migration.name in done:
            continue
        await _apply(backend, migration, schemas_dir)
        await backend.write(record_migration(migration.name, utc_now()))
        applied.append(migration.name)
    return applied
