"""An engine seen by monitoring: every statement counted, timed and traced (serving/telemetry.py), then run by the
engine it wraps. Only a server with metrics or tracing on wraps its engine; otherwise statements go straight
through."""

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend, Row
from write_gate.serving.telemetry import EngineTarget, Telemetry


class InstrumentedBackend:
    def __init__(self, inner: GraphBackend, telemetry: Telemetry, target: EngineTarget) -> None:
        self.inner = inner
        self.dialect = inner.dialect
        self._telemetry = telemetry
        self._target = target

    async def write(self, statement: Statement) -> list[Row]:
        with self._telemetry.statement("write", statement.text, self._target):
            return await self.inner.write(statement)

    async def read(self, statement: Statement) -> list[Row]:
        with self._telemetry.statement("read", statement.text, self._target):
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
