"""A batch's statements written one after another while the next one is prepared.

The gate's own work on a chunk of items (its decisions, its records, its rows) is Python; the engine's is in
another process. Done in turn, each waits for the other; here the next chunk is decided while the engine
writes the one before, so a batch costs little more than its statements alone. One write is in flight at a
time, in chunk order, so the engine sees the statements in the order a plain loop would send them.
"""

import gc
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager

import anyio

# Items per statement: large enough that the engine's per-statement cost is small, small enough that the
# first chunk (prepared while the engine is idle) and the last (written while Python is idle) are a small
# part of a 10,000-item batch.
CHUNK_ITEMS = 1_000


def chunks[T](items: list[T], size: int | None = None) -> list[list[T]]:
    """`items` in runs of `size` (CHUNK_ITEMS, read when called), in order."""
    size = size or CHUNK_ITEMS
    return [items[start : start + size] for start in range(0, len(items), size)]


@contextmanager
def collector_paused() -> Iterator[None]:
    """For a stretch of pure Python with no await in it that allocates many small containers and frees none
    (a batch's plans, records and rows): the cycle collector's passes over them find nothing to free, and
    cost a tenth of a batch's time. Resumed as the stretch ends, whatever happens in it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def pipelined[C, P](
    work: Iterable[C], prepare: Callable[[C], P | None], land: Callable[[P], Awaitable[None]]
) -> None:
    """`prepare` each piece of work (pure Python, the collector paused; None: nothing to write) and `land` what
    it returns, landing one while the next is prepared. `prepare` reads nothing: a read would wait behind the
    write in flight (the engine serialises them), and the overlap would be lost. `land` answers its own
    refusals; anything else it raises ends the pipeline."""
    send, receive = anyio.create_memory_object_stream[P](max_buffer_size=0)

    async def writer() -> None:
        async with receive:
            async for prepared in receive:
                await land(prepared)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(writer)
        async with send:
            for piece in work:
                with collector_paused():
                    prepared = prepare(piece)
                if prepared is not None:
                    await send.send(prepared)  # waits until the writer has landed the one before
