"""memory-mcp's `compress_graph` (seed 004, "Compression Operations"), in the resolution toolset of the memory
profile, beside the find_duplicates and merge_entities it is built on (services.compression). The gate and mesh
profiles find duplicates by their own score and address nodes by merge keys, not names: it is not theirs."""

import json

from write_gate.services.compression import CompressGraphRequest, CompressionResult, compress_graph
from write_gate.surface.tool_spec import ToolSpec, lean_hints


def _compression_text(result: CompressionResult) -> str:
    """CompressionResult, as memory-mcp returns it (the gate's `status` and `more`: the structured answer only)."""
    return json.dumps(result.model_dump(mode="json", exclude={"status", "more"}), ensure_ascii=False)


COMPRESS_GRAPH = ToolSpec(
    name="compress_graph",
    title="Compress the graph",
    description="Merge the duplicate groups find_duplicates finds at threshold into each group's first entity "
    "(relations moved, observations combined); dryRun reports what would be merged and changes nothing.",
    input_model=CompressGraphRequest,
    output_model=CompressionResult,
    # A merge deletes the relationships it re-points; a repeat finds what the first left (nothing, or less).
    annotations=lean_hints(destructive=True, idempotent=False),
    handler=lambda s, req, call: compress_graph(s.gate, req, call.agent),
    text=_compression_text,
)
