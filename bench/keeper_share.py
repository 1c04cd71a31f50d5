"""The statistics keeper's backlog against an agent's writes (WRITE_GATE_STATS_SHARE, serving/paced_backend.py).

In process, embedded engine, one gate with no keeper of its own. For each share: N :Person nodes (and N/2
RELATED_TO) ingested through write_nodes / write_relationships, then one keeper round (`fold_once`) works off
their backlog while an agent loops `write_node` for a few seconds. Printed: the agent's p50 and p99 with no fold,
and during the round at each share, and how long the round took.

    uv run --group bench python bench/keeper_share.py [--nodes 50000] [--shares 1,0.5,0.25] [--seconds 8]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from scale import person_item, related_item

from write_gate.access.agents import Agent
from write_gate.core.model import WriteNodeRequest, WriteRelationshipRequest
from write_gate.services.batch import write_nodes, write_relationships
from write_gate.services.gate import Gate
from write_gate.serving import logs
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.serving.paced_backend import PacedBackend
from write_gate.serving.stats_keeper import fold_once

AGENT = Agent("bench")
BATCH = 10_000


async def grow(gate: Gate, start: int, end: int) -> None:
    for first in range(start, end, BATCH):
        items = [WriteNodeRequest.model_validate(person_item(i)) for i in range(first, min(end, first + BATCH))]
        assert (await write_nodes(gate, list(items), AGENT)).rejected == 0
    links = [
        WriteRelationshipRequest.model_validate(related_item(i, (i * 7919 + 1) % end)) for i in range(start, end, 2)
    ]
    for first in range(0, len(links), BATCH):
        assert (await write_relationships(gate, list(links[first : first + BATCH]), AGENT)).rejected == 0


async def agent_writes(gate: Gate, seconds: float, first: int) -> list[float]:
    """`write_node` of a new node, call after call, for `seconds`: each call's seconds."""
    took, until = [], time.monotonic() + seconds
    while time.monotonic() < until:
        request = WriteNodeRequest.model_validate(person_item(first + len(took)))
        started = time.perf_counter()
        await gate.write_node(request, AGENT)
        took.append(time.perf_counter() - started)
    return took


def line(what: str, took: list[float], extra: str = "") -> None:
    p99 = statistics.quantiles(took, n=100)[98]
    print(f"{what:<34} p50 {statistics.median(took) * 1000:7.2f} ms  p99 {p99 * 1000:8.2f} ms  {extra}", flush=True)


async def main(nodes: int, shares: list[float], seconds: float) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-keeper-")), stats_fold_seconds=0)
    async with open_gate(settings) as gate:
        assert gate.snapshot is not None
        await fold_once(gate.backend, gate.snapshot)  # the first walk of an empty graph
        await grow(gate, 0, nodes)
        await fold_once(gate.backend, gate.snapshot)
        line("no fold", await agent_writes(gate, seconds, 10_000_000))
        for i, share in enumerate(shares):
            await grow(gate, (i + 1) * nodes, (i + 2) * nodes)
            round_took: list[float] = []

            async def fold(share: float = share, round_took: list[float] = round_took) -> None:
                started = time.perf_counter()
                await fold_once(PacedBackend(gate.backend, share), gate.snapshot)  # type: ignore[arg-type]
                round_took.append(time.perf_counter() - started)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(fold)
                took = await agent_writes(gate, seconds, (i + 2) * 10_000_000)
            line(f"during the fold, share {share:g}", took, f"(the round: {round_took[0]:.1f} s)")


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--shares", default="1,0.5,0.25")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    anyio.run(main, args.nodes, [float(s) for s in args.shares.split(",")], args.seconds)
