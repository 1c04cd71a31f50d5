"""The shipped registry source: `:Schema` nodes on the graph itself."""

from write_gate import cypher
from write_gate.backends import BackendError, BackendUnavailable, GraphBackend
from write_gate.model import ErrorCode, GateRejection
from write_gate.registry import RegistrySnapshot, entry_from_row


class GraphRegistrySource:
    def __init__(self, backend: GraphBackend) -> None:
        self._backend = backend

    async def load(self) -> RegistrySnapshot:
        try:
            rows = await self._backend.read(cypher.READ_REGISTRY)
        except (BackendUnavailable, BackendError) as exc:
            raise GateRejection(
                ErrorCode.SCHEMA_SOURCE_UNAVAILABLE, f"could not read the schema registry: {exc}"
            ) from exc
        return RegistrySnapshot(e for row in rows if (e := entry_from_row(row)) is not None)
