"""Dropping an index a graph may or may not hold: one on a raw merge-key value (identity lives in `_key`), or one no
statement reads any more. Where the engine keeps its indexes (`Dialect.drop_index` is None), nothing is done; an
index that is not there is done too, and any other failure of the engine is raised."""

from write_gate.core.cypher.statement import Statement
from write_gate.engines import BackendError, GraphBackend

# FalkorDB's answer to a DROP INDEX of an index it does not hold.
NO_SUCH_INDEX = "no such index"


async def drop_index(backend: GraphBackend, label: str, prop: str) -> None:
    if (ddl := backend.dialect.drop_index(label, prop)) is None:
        return
    try:
        await backend.write(Statement(ddl))
    except BackendError as exc:
        if NO_SUCH_INDEX not in str(exc):
            raise
