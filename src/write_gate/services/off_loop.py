"""Work that grows with an answer's size, done off the event loop once the answer is large: shaping thousands of
rows or serialising megabytes on the loop would hold every other session's calls meanwhile (issue 37). Small
answers stay on the loop, where a thread hop would cost more than the work."""

from collections.abc import Callable

import anyio.to_thread
from pydantic import BaseModel

# Items (rows, entities, relations, kilobytes of text) from which work goes to a worker thread: about 1,000 cost
# a few milliseconds to shape or serialise, about a thread hop's worth.
HEAVY_ITEMS = 1_000
TEXT_ITEM = 1_000  # characters of text counted as one item


async def off_the_loop[T](work: Callable[[], T], items: int) -> T:
    """`work()`, in a worker thread when `items` says it is heavy. The work must be pure (it shares nothing the
    loop changes meanwhile, and nothing is left half done if its result is dropped)."""
    if items < HEAVY_ITEMS:
        return work()
    # A call stopped meanwhile (its limit, its client gone) is not held until the work ends: the thread runs on
    # alone and its result is dropped, which the work's purity makes safe.
    return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)


def items_in(answer: BaseModel) -> int:
    """An answer's size in items, from its top-level fields: each list's or map's length, a string's length in
    TEXT_ITEMs (an export's content)."""
    items = 0
    for value in answer.__dict__.values():
        if isinstance(value, list | dict):
            items += len(value)
        elif isinstance(value, str):
            items += len(value) // TEXT_ITEM
    return items
