"""The metrics read from the graph rather than counted as calls pass: each space's quarantine size, open
conflicts and registry version, sampled when /metrics is scraped (and never otherwise: a gate nobody scrapes
reads nothing for them)."""

import logging

from write_gate.core.cypher import quarantine as quarantine_cypher
from write_gate.core.cypher.statistics import OPEN_CONFLICTS
from write_gate.engines import BackendError, BackendUnavailable
from write_gate.services.gate import Gate
from write_gate.serving.telemetry import Metrics

logger = logging.getLogger(__name__)


async def sample_gauges(metrics: Metrics, gates: dict[str, Gate]) -> None:
    """A space whose engine cannot answer keeps its last sampled values (the log says why)."""
    for space, gate in gates.items():
        version = gate.snapshot.version if gate.snapshot is not None else None
        metrics.registry_version.labels(space).set(-1 if version is None else version)
        try:
            [quarantined] = await gate.backend.read(quarantine_cypher.COUNT)
            [conflicts] = await gate.backend.read(OPEN_CONFLICTS)
        except (BackendUnavailable, BackendError) as exc:
            logger.warning("metrics of space %s not sampled: %s", space, exc)
            continue
        metrics.quarantine.labels(space).set(quarantined["entries"])
        metrics.open_conflicts.labels(space).set(conflicts["count"])
