"""The shipped registry source: `:Schema` nodes on the graph itself, and the version that moves on each load."""

import logging

from write_gate.core.cypher.registry_nodes import READ_REGISTRY, REGISTRY_VERSION, registering
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import RegistrySnapshot, entries_from_rows
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend

logger = logging.getLogger(__name__)


class GraphRegistrySource:
    def __init__(self, backend: GraphBackend) -> None:
        self._backend = backend

    async def version(self) -> int | None:
        """None on a graph no `schema load` has touched since versions exist."""
        try:
            rows = await self._backend.read(REGISTRY_VERSION)
        except (BackendUnavailable, BackendError) as exc:
            raise _unavailable(exc) from exc
        return rows[0]["version"] if rows else None

    async def registers_any(self, names: list[str]) -> bool:
        """Whether an entry on the graph names or absorbs any of `names`, whatever the snapshot in force says: one
        written since (by hand, or a `schema load` the poll has not seen yet)."""
        try:
            rows = await self._backend.read(registering(sorted({name.lower() for name in names})))
        except (BackendUnavailable, BackendError) as exc:
            raise _unavailable(exc) from exc
        return bool(rows and rows[0]["found"])

    async def load(self) -> RegistrySnapshot:
        # The version first: a load landing in between leaves a newer snapshot under an older version, which
        # the next poll loads again; the other order could miss it.
        version = await self.version()
        try:
            rows = await self._backend.read(READ_REGISTRY)
        except (BackendUnavailable, BackendError) as exc:
            raise _unavailable(exc) from exc
        entries, left_out = entries_from_rows(rows)
        for line in left_out:  # each load says it again: a refresh after the node is fixed is silent
            logger.warning("registry entry left out, its label is unknown until it is fixed: %s", line)
        return RegistrySnapshot(entries, version)


def _unavailable(exc: Exception) -> GateRejection:
    reason = "engine unreachable" if isinstance(exc, BackendUnavailable) else "registry unreadable"
    return GateRejection(
        ErrorCode.SCHEMA_SOURCE_UNAVAILABLE, f"could not read the schema registry ({reason})", reason=reason
    )
