"""The indexes and constraints a served graph needs, made again on a graph whose data came in without them (a
restore): the bundled migrations' own, then each registered label's identity and search-text index, as a schema
load makes them. Each is idempotent: one that exists is left."""

import json
from pathlib import Path

from write_gate.core.identity import KEY_FIELD
from write_gate.core.stat_counts import DUE
from write_gate.engines import GraphBackend
from write_gate.store.bundled import bundled
from write_gate.store.graph_registry import GraphRegistrySource
from write_gate.store.migrations import JsonMigration, discover


async def recreate_indexes(backend: GraphBackend, folder: Path | None = None) -> list[str]:
    """Returns what it made, as `Label.property` (and `Label:text` for a full-text index)."""
    made: list[str] = []
    beside: dict[tuple[str, str], bool] = {}  # made where the engine reads two ranges in one scan, unless dropped
    for migration in discover(folder or bundled("migrations")):
        if migration.path.suffix != ".json":
            continue
        spec = JsonMigration.model_validate(json.loads(migration.path.read_text(encoding="utf-8")))
        for label, prop in spec.indexes:
            await backend.ensure_index(label, prop)
            made.append(f"{label}.{prop}")
        for label, prop in spec.unique:
            await backend.ensure_unique(label, prop)
            made.append(f"{label}.{prop}")
        beside |= dict.fromkeys(spec.indexes_beside, True) | dict.fromkeys(spec.drop_indexes_beside, False)
    for (label, prop), kept in beside.items() if backend.dialect.two_ranges_in_one_scan else []:
        if kept:
            await backend.ensure_index(label, prop)
            made.append(f"{label}.{prop}")
    registry = await GraphRegistrySource(backend).load()
    for label in registry.all_canonical_labels():
        await backend.ensure_unique(label, KEY_FIELD)
        made.append(f"{label}.{KEY_FIELD}")
        if await backend.ensure_text_index(label):
            made.append(f"{label}:text")
        await backend.ensure_index(label, DUE)
        made.append(f"{label}.{DUE}")
    for type_ in registry.all_relationship_types():
        await backend.ensure_index(type_, DUE, relationship=True)
        made.append(f"{type_}.{DUE}")
    return made
