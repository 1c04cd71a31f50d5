"""Running a window search (core/feed_windows.py) against the engine: probe its stretches until it settles on a
window to read. Shared by the change feed and the conflicts' pages."""

from collections.abc import Awaitable, Callable
from typing import Any

from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import Search, Window, cap_for, plan

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]
Probe = Callable[[Window, int], Statement]  # a stretch and the cap: the statement answering its numbers as `n`

# A stretch grows 8 times in time while it holds too few, then its bracket halves in time at least: a century
# of history in under 64 probes of at most a cap each.
MAX_PROBES = 64


async def searched(read: Read, search: Search, probe: Probe, wanted: int) -> Search:
    """The search once its window holds `wanted` records, or all there are: each probe reads at most
    `cap_for(wanted)` records. After MAX_PROBES the window as it stands (a read of it is exact, only dearer)."""
    for _ in range(MAX_PROBES):
        seen = [row["n"] for row in await read(probe(search.stretch, cap_for(wanted)))]
        step = plan(search, seen, wanted)
        search = step.next
        if step.read:
            break
    return search
