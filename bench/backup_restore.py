"""The lossless backup and its restore against graph size, on the embedded engine.

    uv run python bench/backup_restore.py [--nodes 10000] [--relationships 20000]

The graph is written through the gate's batches (`write_nodes`, `write_relationships`, 5,000 a call): Persons
with two observations and an age, each relationship a KNOWS with a weight, so every node and relationship carries
what the gate stores (provenance, value claims, `_key`, search text), plus the registry, migrations and the
history records of every write. Then `dump` to a file and `restore` into an empty graph on the same engine,
each timed; the restored graph is checked to hold as many nodes and relationships.
"""

import argparse
import tempfile
import time
from pathlib import Path

import anyio

from write_gate.access.agents import Agent
from write_gate.core.backup_file import check_backup
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import WriteNodeRequest, WriteRelationshipRequest
from write_gate.interchange.backup import dump, restore
from write_gate.services.batch import write_nodes, write_relationships
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend, open_gate
from write_gate.serving.config import Settings

PROV = {"source": "bench", "extraction_method": "api"}
COUNT = Statement("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS rels")


def person(i: int) -> WriteNodeRequest:
    props = {"age": 20 + i % 60, "observations": [f"likes topic{i % 997}", f"met in city{i % 10}"]}
    return WriteNodeRequest(label="Person", merge_keys={"name": f"person {i:07d}"}, properties=props, **PROV)


def knows(i: int, nodes: int) -> WriteRelationshipRequest:
    """Distinct pairs, none a loop: round i // nodes links each node to the one that many places on, plus one."""
    a = i % nodes
    b = (a + 1 + i // nodes) % nodes
    return WriteRelationshipRequest(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": f"person {a:07d}"},
        to_label="Person",
        to_keys={"name": f"person {b:07d}"},
        weight=0.5,
        **PROV,
    )


async def grow(settings: Settings, nodes: int, relationships: int) -> None:
    async with open_gate(settings) as gate:
        for first in range(0, nodes, 5000):
            batch = [person(i) for i in range(first, min(nodes, first + 5000))]
            assert (await write_nodes(gate, batch, Agent("bench"))).rejected == 0
        pairs = [knows(i, nodes) for i in range(relationships)]
        for first in range(0, relationships, 5000):
            assert (await write_relationships(gate, pairs[first : first + 5000], Agent("bench"))).rejected == 0


async def main(nodes: int, relationships: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="wg-bench-"))
    source = Settings(data_dir=folder / "data", embedded_fsync="everysec", graph_name="source")
    await grow(source, nodes, relationships)
    file = folder / "graph.backup.jsonl"
    backend = await open_backend(source)
    try:
        [before] = await backend.read(COUNT)
        started = time.perf_counter()
        with file.open("w", encoding="utf-8") as out:
            async for line in dump(backend):
                out.write(line)
        backed_up = time.perf_counter() - started
    finally:
        await backend.close()
    target = source.model_copy(update={"graph_name": "restored"})
    backend = await open_backend(target)
    try:
        started = time.perf_counter()
        with file.open(encoding="utf-8") as lines:
            contents = check_backup(lines)
        checked = time.perf_counter() - started
        restored = await restore(backend, contents)
        restored_in = time.perf_counter() - started
        [after] = await backend.read(COUNT)
    finally:
        await backend.close()
    assert after == before, (before, after)
    size = file.stat().st_size / 1e6
    print(
        f"graph: {before['nodes']:,} nodes (with registry and history records) and {before['rels']:,} relationships; "
        f"backup file {size:.1f} MB"
    )
    print(f"backup:  {backed_up:6.2f} s  ({before['nodes'] / backed_up:,.0f} nodes/s)")
    print(
        f"restore: {restored_in:6.2f} s  (file checked in {checked:.2f} s; {len(restored.indexes)} indexes and "
        f"constraints made again)"
    )


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--relationships", type=int, default=20_000)
    args = parser.parse_args()
    anyio.run(main, args.nodes, args.relationships)
