"""An engine seen by monitoring: every statement counted, timed and traced (serving/telemetry.py), then run by the
engine it wraps. Only a server with metrics or tracing on wraps its engine; otherwise statements go straight
through."""

from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend, Row
from write_gate.serving.telemetry import EngineTarget, Telemetry
from write_gate.serving.wrapped_backend import WrappedBackend


class InstrumentedBackend(WrappedBackend):
    def __init__(self, inner: GraphBackend, telemetry: Telemetry, target: EngineTarget) -> None:
        super().__init__(inner)
        self._telemetry = telemetry
        self._target = target

    async def write(self, statement: Statement) -> list[Row]:
        with self._telemetry.statement("write", statement.text, self._target):
            return await self.inner.write(statement)

    async def read(self, statement: Statement) -> list[Row]:
        with self._telemetry.statement("read", statement.text, self._target):
            return await self.inner.read(statement)
