"""Running a window search (core/feed_windows.py) against the engine: probe its stretches until it settles on a
window to read. Shared by the change feed and the conflicts' pages."""

from collections.abc import Awaitable, Callable
from typing import Any

from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import Search, Window, cap_for, grown_to_read, plan

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]
Probe = Callable[[Window, int], Statement]  # a stretch and the cap: the statement answering its numbers as `n`
Page = Callable[[Window], Statement]  # a window: the statement answering its rows (a page's worth at most)

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


async def window_rows(read: Read, search: Search, probe: Probe, page: Page, wanted: int) -> list[dict[str, Any]]:
    """The rows `page` answers from the first window that holds `wanted` of them, or all there are. A window's
    records may make fewer rows than it holds (records of one change share a row, some sit before the cursor in
    its millisecond): then a longer window, up to the search's end."""
    search = await searched(read, search, probe, wanted)
    while True:
        rows = await read(page(search.window))
        further = grown_to_read(search, len(rows)) if len(rows) < wanted else None
        if further is None:
            return rows
        search = await searched(read, further, probe, wanted)
