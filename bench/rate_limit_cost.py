"""What an agent's write rate limit costs a `write_node`, measured in one run: the same writes by an agent without
a limit and by one with `max_writes_per_minute` (high enough never to refuse), interleaved call by call through
in-process MCP clients on the embedded engine, so the ratio of the medians is the limit's cost.

    uv run python bench/rate_limit_cost.py [--calls 400]

Since issue 26 (item 5) the limit is a token bucket in the graph (one more statement per write of a limited
agent, so every gate on the graph counts together); before, it was a bucket in the gate's memory.
"""

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.access.agents import AgentsFile, Grant
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server


def person(i: int) -> dict:
    return {
        "label": "Person",
        "merge_keys": {"name": f"p{i % 200}"},  # a mix of creates and updates
        "properties": {"age": i},
        "source": "bench",
        "extraction_method": "manual",
    }


async def main(calls: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-rate-"))
    agents = AgentsFile(data / "agents.toml", {})
    agents.add("free", Grant())
    agents.add("limited", Grant(max_writes_per_minute=10_000_000))
    agents.save()
    settings = Settings(data_dir=data, agents_file=agents.path)  # the defaults: embedded engine, appendfsync always
    backend = await open_backend(settings)
    await migrate(backend)
    timings: dict[str, list[float]] = {"free": [], "limited": []}
    try:
        async with (
            Client(build_server(settings.model_copy(update={"agent": "free"}), auto_migrate=False)) as free,
            Client(build_server(settings.model_copy(update={"agent": "limited"}), auto_migrate=False)) as limited,
        ):
            for i in range(calls):
                for name, client in (("free", free), ("limited", limited)):
                    start = time.perf_counter()
                    result = await client.call_tool("write_node", person(i))
                    timings[name].append(time.perf_counter() - start)
                    assert not result.is_error, result.structured_content
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)
    medians = {name: statistics.median(t) * 1000 for name, t in timings.items()}
    for name, median in medians.items():
        print(f"write_node, agent {name:<8} median {median:7.3f} ms   n={len(timings[name])}")
    print(f"limited / free: {medians['limited'] / medians['free']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    logs.configure("WARNING")
    anyio.run(main, parser.parse_args().calls)
    sys.exit(0)
