"""The search evaluation (tests/eval, issue 38 item 5) as a benchmark: the set's facts written through the gate, every
question put to each search through the in-process MCP client on the embedded engine, and the table the test
prints (recall@5 and MRR@10, whole set and no-shared-word half) with each search's median latency per call.

    uv run python bench/search_eval.py [--questions N] [--embeddings local|off]

Substring search is scored twice: the question as a whole, and by the single question word that ranks the answer
best (an upper bound: an agent would not know which word). Semantic and hybrid are scored where
search_nodes_ranked takes a `mode`.
"""

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the set and its scorer live in tests/eval

from tests.eval.runner import evaluate  # noqa: E402
from tests.eval.scoring import load_set  # noqa: E402
from write_gate.serving import logs  # noqa: E402
from write_gate.serving.assembly import open_backend  # noqa: E402
from write_gate.serving.config import Settings  # noqa: E402
from write_gate.store.migrations import migrate  # noqa: E402
from write_gate.surface.server import build_server  # noqa: E402


async def main(questions: int | None, embeddings: str) -> None:
    base = Settings(data_dir=Path(tempfile.mkdtemp(prefix="wg-bench-")), embedded_fsync="everysec")
    settings = base.model_copy(update={"toolsets": "search", "embeddings": embeddings})
    backend = await open_backend(settings)
    try:
        await migrate(backend)
    finally:
        await backend.close()
    search_set = load_set()
    if questions is not None:
        search_set = dataclasses.replace(search_set, questions=search_set.questions[:questions])
    async with Client(build_server(settings, auto_migrate=False), read_timeout_seconds=120) as client:
        evaluation = await evaluate(client, search_set, modes=embeddings != "off")
    print(f"{len(search_set.facts)} facts, {len(search_set.questions)} questions, embeddings {embeddings}")
    print(evaluation.table())
    print("\nmedian latency per call")
    for search, seconds in evaluation.seconds.items():
        if seconds:
            print(f"{search:<44} {statistics.median(seconds) * 1000:8.2f} ms  ({len(seconds)} calls)")


if __name__ == "__main__":
    logs.configure("WARNING")
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=None, help="the first N questions only")
    parser.add_argument("--embeddings", default="local", choices=["local", "off"])
    args = parser.parse_args()
    anyio.run(main, args.questions, args.embeddings)
