"""find_duplicates' cost through the MCP SDK client on the embedded engine.

    uv run --group bench python bench/find_duplicates.py [--nodes 10000] [--duplicates 0.2] [--runs 5]
        [--page-size 1000]

Writes `--nodes` Organization nodes through `write_nodes` (a share of them near-duplicates of the others: one
letter dropped, doubled or swapped), then times `find_duplicates`' first page over the label and prints the median,
the nodes scanned, the pairs blocking proposed (against all n(n-1)/2) and the pairs found; then walks once with
the cursor (every window of `--page-size` nodes against itself and every later one) and prints the calls, the
slowest, the walk's total, the pairs compared and answered (and the calls whose `limit` cut some off).
"""

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.surface.server import build_server

SYLLABLES = ["ac", "me", "glo", "bex", "ini", "tech", "sys", "ter", "ra", "no", "va", "lux", "cor", "pa", "zen", "ix"]
SUFFIXES = ["", "", " Inc", " Ltd", " Group", " Labs", " Systems", " Holdings"]


def names(count: int, share: float, rng: random.Random) -> list[str]:
    originals = int(count * (1 - share))
    made: set[str] = set()
    while len(made) < originals:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
        made.add(word + rng.choice(SUFFIXES))
    out = sorted(made)
    while len(out) < count:
        name = rng.choice(out[:originals])
        i = rng.randrange(1, len(name) - 1)
        typo = rng.choice([name[:i] + name[i + 1 :], name[:i] + name[i] + name[i:], name[:i] + name[i + 1] + name[i]])
        if typo not in made:
            made.add(typo)
            out.append(typo)
    return out


async def main(count: int, share: float, runs: int, page_size: int) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-bench-dups-"))
    settings = Settings(data_dir=data)
    backend = await open_backend(settings)
    await migrate(backend)
    try:
        async with Client(build_server(settings, auto_migrate=False), read_timeout_seconds=600) as client:
            listed = names(count, share, random.Random(4))
            for start in range(0, len(listed), 1000):
                items = [
                    {"label": "Organization", "merge_keys": {"name": n}, "source": "bench", "extraction_method": "api"}
                    for n in listed[start : start + 1000]
                ]
                result = await client.call_tool("write_nodes", {"items": items})
                assert not result.is_error and result.structured_content["written"] == len(items)
            args = {"labels": ["Organization"], "threshold": 0.8, "limit": 500, "page_size": page_size}
            timings, answer = [], {}
            for _ in range(runs):
                start_at = time.perf_counter()
                result = await client.call_tool("find_duplicates", args)
                timings.append(time.perf_counter() - start_at)
                assert not result.is_error, result.structured_content
                answer = result.structured_content
            n = answer["nodes_scanned"]
            print(
                f"find_duplicates over {n:,} nodes: median {statistics.median(timings) * 1000:,.0f} ms of {runs}; "
                f"{answer['pairs_compared']:,} pairs compared of {n * (n - 1) // 2:,}; "
                f"{len(answer['pairs'])} pairs >= 0.8 answered (more: {answer['more']})"
            )
            walk, cursor, found, compared, cut = [], None, 0, 0, 0
            while True:
                start_at = time.perf_counter()
                result = await client.call_tool("find_duplicates", {**args, "cursor": cursor})
                walk.append(time.perf_counter() - start_at)
                assert not result.is_error, result.structured_content
                found += len(result.structured_content["pairs"])
                compared += result.structured_content["pairs_compared"]
                cut += result.structured_content["more"]
                if (cursor := result.structured_content["next_cursor"]) is None:
                    break
            print(
                f"a walk of {len(walk)} calls, windows of {page_size:,}: slowest call {max(walk) * 1000:,.0f} ms, "
                f"all {sum(walk) * 1000:,.0f} ms; {compared:,} pairs compared, {found:,} answered "
                f"({cut} calls cut by limit)"
            )
    finally:
        await backend.close()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--duplicates", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--page-size", type=int, default=1000)
    ns = parser.parse_args()
    anyio.run(main, ns.nodes, ns.duplicates, ns.runs, ns.page_size)
