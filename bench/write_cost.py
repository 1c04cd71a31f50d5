"""What per-value provenance and the change history cost a write_node, at the engine, in one run.

    uv run python bench/write_cost.py [--calls 2000] [--properties 5]

Three ways to write the same node, alternated call by call on one embedded engine (machine load falls on
all three alike), each writing `--properties` values that change every call (a mix of creates and updates
over 500 nodes):

- plain: the write as it was before values had claims: MERGE, set the values and the node's stamp;
- claims: the same with one claim per value (`_p_<prop>`), unguarded;
- gate: what write_node does now: read the node, decide the conflict policies and the records
  (core/guard.py), then the guarded write that appends one WriteGateChange per changed value.

Prints each median and its ratio to plain; the MCP and gate layers are measured by write_node_latency.py.
"""

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

from write_gate.core.claims import is_claim
from write_gate.core.cypher.aliases import alias_target
from write_gate.core.cypher.statement import Provenance, Statement
from write_gate.core.cypher.writes import write_node
from write_gate.core.guard import guard_write
from write_gate.core.history import Subject
from write_gate.core.identity import identity_key
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings

PROVENANCE = Provenance(0.5, "bench", "manual", "0.1.0", "2026-01-01T00:00:00.000Z", "bench")


def without_claims(statement: Statement) -> Statement:
    params = dict(statement.params)
    for name in ("properties", "identity"):
        params[name] = {k: v for k, v in params[name].items() if not is_claim(k)}
    return Statement(statement.text, params)


async def gate_write(backend: GraphBackend, keys: dict[str, Any], properties: dict[str, Any]) -> None:
    key = identity_key(keys)
    rows = await backend.read(Statement(alias_target("Person").text, {"key": key}))
    current = rows[0]["props"] if rows else None
    guarded = guard_write(
        Subject.node("Person", key),
        current,
        properties,
        keys,
        PROVENANCE.value_claim(),
        lambda _prop: ConflictPolicy.LAST_WRITER_WINS,
        lambda claim: claim.confidence,
        change_id=uuid.uuid4().hex,
        new_id=lambda: uuid.uuid4().hex,
    )
    guard = guarded.as_guard(current is None)
    await backend.write(write_node("Person", keys, guarded.write, PROVENANCE, None, (), guard, dialect=backend.dialect))


async def write(backend: GraphBackend, variant: str, keys: dict[str, Any], values: dict[str, Any]) -> None:
    if variant == "gate":
        await gate_write(backend, keys, values)
        return
    statement = write_node("Person", keys, values, PROVENANCE, None, dialect=backend.dialect)
    await backend.write(without_claims(statement) if variant == "plain" else statement)


async def main(calls: int, properties: int) -> dict[str, float]:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-cost-"))
    backend = await open_backend(Settings(data_dir=data))
    await backend.ensure_index("Person", "_key")
    timings: dict[str, list[float]] = {"plain": [], "claims": [], "gate": []}
    warm_up = min(200, calls)
    try:
        for i in range(calls + warm_up):
            values = {f"v{j}": i * 10 + j for j in range(properties)}
            names = list(timings)
            for name in names[i % 3 :] + names[: i % 3]:  # each goes first in turn
                # Each variant its own 500 nodes, so each sees its own values change, as a real write would.
                keys = {"name": f"{name}{i % 500}"}
                start = time.perf_counter()
                await write(backend, name, keys, values)
                if i >= warm_up:
                    timings[name].append(time.perf_counter() - start)
        medians = {name: statistics.median(values) * 1000 for name, values in timings.items()}
        for name, median in medians.items():
            ratio = median / medians["plain"]
            print(f"write_node {name:<7} median {median:7.3f} ms   x{ratio:4.2f} of plain   n={len(timings[name])}")
        return medians
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--properties", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.properties)
