"""Keeps a served gate's statistics folded (core/stat_counts.py): a graph written before the writes kept counts
is walked once, then every few seconds what the writes marked is folded in, so a `get_graph_stats` folds only
what arrived since; each agent's write tallies likewise (core/agent_tallies.py), for the console. A failed round
(the engine away, say) is logged and tried again at the next; it never stops the server."""

import logging
from collections.abc import Callable

import anyio

from write_gate.core.registry import SchemaRegistry
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.services import agent_tallies, stat_counts
from write_gate.services.writes_in_flight import WritesInFlight

logger = logging.getLogger(__name__)

FOLD_INTERVAL_SECONDS = 2.0
TALLY_PAGES = 40  # a round's pages of agent tallies: an old history is folded over rounds, not in one


async def fold_once(
    backend: GraphBackend,
    registry: SchemaRegistry,
    settle_seconds: float = 1.0,
    in_flight: WritesInFlight | None = None,
) -> int | None:
    """One round: the agent tallies, the walk's rest, then the fold; how many subjects it folded (None: it
    failed, logged). `settle_seconds` and `in_flight`: the change feed's horizon (a write stamped earlier may
    commit later)."""
    labels, types = registry.all_canonical_labels(), registry.all_relationship_types()
    try:
        await agent_tallies.fold(backend, settle_seconds, TALLY_PAGES, in_flight)
        if not await stat_counts.initialise(backend, labels, types):
            return 0
        return await stat_counts.fold(backend, labels, types)
    except Exception as exc:  # a background task: log it, keep serving, try again at the next round
        engine = isinstance(exc, BackendUnavailable | BackendError)  # the engine away or refusing: no traceback
        logger.warning("statistics not folded: %s", exc, exc_info=not engine)
        return None


async def keep_stats_folded(
    backend: GraphBackend,
    registry: Callable[[], SchemaRegistry | None],
    interval: float = FOLD_INTERVAL_SECONDS,
    settle_seconds: float = 1.0,
    in_flight: WritesInFlight | None = None,
) -> None:
    """Until cancelled; a round waits for the registry to be loaded (None until it is)."""
    while True:
        if (loaded := registry()) is not None:
            await fold_once(backend, loaded, settle_seconds, in_flight)
        await anyio.sleep(interval)
