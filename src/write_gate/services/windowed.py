"""Running a window search (core/feed_windows.py) against the engine: probe its stretches until it settles on a
window to read. Shared by the change feed and the conflicts' pages."""

from collections.abc import Awaitable, Callable
from typing import Any

from write_gate.core.cypher.statement import Statement
from write_gate.core.feed_windows import (
    KEY_TOP,
    KeySearch,
    Plan,
    Search,
    Window,
    after_millisecond,
    cap_for,
    grown_to_read,
    keys_from,
    plan,
    plan_keys,
)

Read = Callable[[Statement], Awaitable[list[dict[str, Any]]]]
Probe = Callable[[Window, int], Statement]  # a stretch and the cap: the statement answering its numbers as `n`
Page = Callable[[Window], Statement]  # a window: the statement answering its rows (a page's worth at most)

# A stretch grows 8 times in time while it holds too few, then its bracket halves in time at least: a century
# of history in under 64 probes of at most a cap each.
MAX_PROBES = 64


async def searched[S: (Search, KeySearch)](
    read: Read, search: S, probe: Probe, wanted: int, planner: Callable[[S, list[int], int], Plan[S]]
) -> S:
    """The search once its window holds `wanted` records, or all there are: each probe reads at most
    `cap_for(wanted)` records. After MAX_PROBES the window as it stands (a read of it is exact, only dearer).
    `planner`: `plan` for a search in time, `plan_keys` for one millisecond's keys."""
    for _ in range(MAX_PROBES):
        seen = [row["n"] for row in await read(probe(search.stretch, cap_for(wanted)))]
        step = planner(search, seen, wanted)
        search = step.next
        if step.read:
            break
    return search


async def window_rows(
    read: Read, search: Search, probe: Probe, page: Page, wanted: int, keyed: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    """The rows `page` answers from the first window that holds `wanted` of them, or all there are. A window's
    records may make fewer rows than it holds (records of one change share a row, some sit before the cursor in
    its millisecond): then a longer window, up to the search's end. With `keyed` (the cursor's millisecond and
    key), `probe` and `page` take keyed windows, and a crowded millisecond is read by its keys (`crowded_rows`);
    without, it is read whole."""
    search = await searched(read, search, probe, wanted, plan)
    while True:
        if keyed is not None and search.crowded:
            return await crowded_rows(read, search, probe, page, wanted, keyed)
        rows = await read(page(search.window))
        further = grown_to_read(search, len(rows)) if len(rows) < wanted else None
        if further is None:
            return rows
        search = await searched(read, further, probe, wanted, plan)


async def crowded_rows(
    read: Read, search: Search, probe: Probe, page: Page, wanted: int, keyed: tuple[int, int]
) -> list[dict[str, Any]]:
    """A window ending in a crowded millisecond: what lies before it (fewer records than wanted), then the
    millisecond by windows of its keys from the cursor's key (or its first), then on past it, each part after
    the last, until `wanted` rows."""
    ms = search.reach
    rows = await read(page(Window(search.fixed, ms - 1))) if ms > search.fixed else []
    cursor_ms, cursor_key = keyed
    low = cursor_key if ms == cursor_ms else 0
    while len(rows) < wanted:
        left = wanted - len(rows)
        keys = await searched(read, keys_from(ms, low, left), probe, left, plan_keys)
        rows += (await read(page(keys.window)))[:left]
        if keys.reach >= KEY_TOP:
            break
        low = keys.reach + 1
    after = after_millisecond(search, ms) if len(rows) < wanted else None
    if after is not None:
        rows += await window_rows(read, after, probe, page, wanted - len(rows), keyed)
    return rows[:wanted]  # `page` answers up to the first call's `wanted`: a part may hold more than is left
