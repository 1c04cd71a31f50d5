"""What metrics and tracing cost a write_node call, in process through a real MCP client session.

    uv run python bench/telemetry_cost.py [--calls 2000]

Three servers on one embedded engine, each on its own graph: nothing on (as stdio serves by default, and as a gate
nobody watches: the console adds nothing to the call path), Prometheus metrics on (as HTTP serves by default), and
metrics plus OpenTelemetry tracing to an in-memory exporter. Calls alternate server by server, so machine load
falls on all alike; the medians and their ratios to "off" are printed (ratios inside one run are what to quote).
"""

import argparse
import shutil
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Metrics, Telemetry, Tracing
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server


def arguments(i: int) -> dict:
    return {
        "label": "Person",
        "merge_keys": {"name": f"p{i % 500}"},
        "properties": {"age": i},
        "source": "bench",
        "extraction_method": "api",
    }


async def main(calls: int) -> None:
    logs.configure("WARNING")
    data = Path(tempfile.mkdtemp(prefix="wg-bench-telemetry-"))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    variants = {
        "off": Telemetry(),
        "metrics": Telemetry(Metrics()),
        "metrics+traces": Telemetry(Metrics(), Tracing.from_providers(provider)),
    }
    timings: dict[str, list[float]] = {name: [] for name in variants}
    try:
        clients = {}
        async with AsyncExitStack() as stack:
            for name, telemetry in variants.items():
                settings = Settings(data_dir=data, graph_name=f"bench_{name.replace('+', '_')}")
                backend = await open_backend(settings)
                await migrate(backend)
                await backend.close()
                server = build_server(settings, auto_migrate=False, telemetry=telemetry)
                clients[name] = await stack.enter_async_context(Client(server))
            for i in range(calls + 200):
                for name, client in clients.items():
                    start = time.perf_counter()
                    result = await client.call_tool("write_node", arguments(i))
                    elapsed = time.perf_counter() - start
                    assert not result.is_error, result.structured_content
                    if i >= 200:  # warm-up
                        timings[name].append(elapsed)
                exporter.clear()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    base = statistics.median(timings["off"])
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:>15}: median {median * 1000:.3f} ms over {len(values)} calls, {median / base:.3f}x off")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    anyio.run(main, parser.parse_args().calls)
