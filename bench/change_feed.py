"""What the change feed costs against history size, on the embedded engine.

    uv run python bench/change_feed.py [--changes 5000] [--batch 500]

Writes `--changes` Persons (one change of two records each: name and age) through write_nodes, `--batch` a call,
so each call's items share one stamp, as a batch's do. Then times changes_since through the MCP client: a first
page of 50, a page of 50 from the start of the middle batch's millisecond (a cursor every build reads), every
change by pages of 500, a caught-up poll; and the change watcher's poll statement alone.
"""

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.core.cypher.change_feed import changed_areas
from write_gate.core.cypher.statement import Statement
from write_gate.services.reads import encode_cursor
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server

BATCH = 500


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


async def _call(client: Client, args: dict) -> tuple[dict, float]:
    start = time.perf_counter()
    result = await client.call_tool("changes_since", args)
    assert not result.is_error and result.structured_content is not None, result.structured_content
    return result.structured_content, time.perf_counter() - start


async def main(changes: int, batch: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-feed-"))
    settings = Settings(data_dir=data, change_settle_seconds=0)
    backend = await open_backend(settings)
    try:
        await migrate(backend)
        async with Client(build_server(settings, auto_migrate=False)) as client:
            for first in range(0, changes, batch):
                items = [
                    {"label": "Person", "merge_keys": {"name": f"P{i}"}, "properties": {"age": i % 90}}
                    | {"source": "bench", "extraction_method": "manual"}
                    for i in range(first, min(changes, first + batch))
                ]
                result = await client.call_tool("write_nodes", {"items": items})
                assert not result.is_error, result.structured_content
            page, took = await _call(client, {"limit": 50})
            print(f"changes_since, first page of 50 over {changes} changes: {_ms(took)}")
            stamps = await backend.read(
                Statement("MATCH (h:WriteGateChange) RETURN DISTINCT h.seq AS seq ORDER BY seq")
            )
            inside = encode_cursor("changes", s=stamps[len(stamps) // 2]["seq"], c="")
            took = sorted([(await _call(client, {"limit": 50, "cursor": inside}))[1] for _ in range(21)])[10]
            print(f"changes_since, a page of 50 inside a batch of {batch} (median of 21): {took * 1000:.2f} ms")
            pages, total, read = 0, 0.0, len(page["changes"])
            cursor = page["next_cursor"]
            while page["more"]:
                page, took = await _call(client, {"limit": BATCH, "cursor": cursor})
                cursor, pages, total, read = page["next_cursor"], pages + 1, total + took, read + len(page["changes"])
            assert read == changes, (read, changes)
            print(f"changes_since, the rest by pages of {BATCH}: {pages} pages, {_ms(total / max(pages, 1))} a page")
            _, took = await _call(client, {"limit": 50, "cursor": cursor})
            print(f"changes_since, caught up: {_ms(took)}")
        start = time.perf_counter()
        await backend.read(changed_areas("2999-01-01T00:00:00.000Z", 1000))
        print(f"watcher poll, nothing new: {(time.perf_counter() - start) * 1000:.1f} ms")
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=BATCH)
    args = parser.parse_args()
    anyio.run(main, args.changes, args.batch)
