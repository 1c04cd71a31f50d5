"""An engine seen through a wrapper: every call passed to the engine it wraps. Wrappers (instrumented_backend.py,
paced_backend.py) override what they change, the statements, and inherit the rest."""

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend, Row


class WrappedBackend:
    def __init__(self, inner: GraphBackend) -> None:
        self.inner = inner
        self.dialect = inner.dialect

    async def write(self, statement: Statement) -> list[Row]:
        return await self.inner.write(statement)

    async def read(self, statement: Statement) -> list[Row]:
        return await self.inner.read(statement)

    async def ensure_index(self, label: str, prop: str, *, relationship: bool = False) -> None:
        await self.inner.ensure_index(label, prop, relationship=relationship)

    async def ensure_unique(self, label: str, prop: str) -> None:
        await self.inner.ensure_unique(label, prop)

    async def ensure_text_index(self, label: str) -> bool:
        return await self.inner.ensure_text_index(label)

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()
