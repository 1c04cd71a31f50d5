"""Two independent engine reads sent together, each on a connection of its own, so a call waits for the slower of
the two rather than for both in turn."""

import asyncio
from collections.abc import Awaitable


async def at_once[A, B](first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Both answers; the first failure is raised as it is (the other read runs to its end, its answer dropped)."""
    a, b = await asyncio.gather(first, second)
    return a, b
