"""A batch's statements written one after another while the next one is prepared, each sized to the engine's pace.

The gate's own work on a chunk of items (its decisions, its records, its rows) is Python; the engine's is in
another process. Done in turn, each waits for the other; here the next chunk is decided while the engine
writes the one before, so a batch costs little more than its statements alone. One write is in flight at a
time, in chunk order, so the engine sees the statements in the order a plain loop would send them.
"""

import gc
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio

# Items per statement at most: large enough that the engine's per-statement cost is small, small enough that the
# first chunk (prepared while the engine is idle) and the last (written while Python is idle) are a small
# part of a 10,000-item batch.
CHUNK_ITEMS = 1_000
# A batch's statements are sized to take about this long at the pace the engine wrote the last one: the engine
# writes one statement at a time, so another agent's write waits behind at most about this long, and a chunk
# commits soon after its stamp, as the change feed needs (services/call_stamps.py). Under load a 1,000-item
# statement took a second. The first statement, before any pace is known, takes FIRST_ITEMS (a batch that fits in
# one statement is written as one); the size at most doubles from one statement to the next, and is never below
# LEAST_ITEMS (whose per-statement cost would grow).
STATEMENT_SECONDS = 0.2
FIRST_ITEMS = 1_000
LEAST_ITEMS = 50


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


class Paced[T]:
    """A list in pieces, each as large as the engine writes in STATEMENT_SECONDS at the pace of the last piece
    landed (`landed`), within the bounds above."""

    def __init__(self, items: list[T]) -> None:
        self._items = items
        self._most = CHUNK_ITEMS  # read when made, as a test may set it
        self.size = min(FIRST_ITEMS, self._most)

    def __iter__(self) -> Iterator[list[T]]:
        start = 0
        while start < len(self._items):
            piece = self._items[start : start + self.size]
            start += len(piece)
            yield piece

    def landed(self, items: int, seconds: float) -> None:
        paced = int(STATEMENT_SECONDS * items / seconds) if seconds > 0 else self._most
        self.size = max(min(LEAST_ITEMS, self._most), min(paced, 2 * self.size, self._most))


async def pipelined[T, P](
    items: list[T], prepare: Callable[[list[T]], P | None], land: Callable[[P], Awaitable[None]]
) -> None:
    """`prepare` each piece of `items` (pure Python, the collector paused; None: nothing to write) and `land` what
    it returns, landing one while the next is prepared, pieces sized by the pace of the landings (`Paced`).
    `prepare` reads nothing: a read would wait behind the write in flight (the engine serialises them), and the
    overlap would be lost. `land` answers its own refusals; anything else it raises ends the pipeline."""
    pieces = Paced(items)
    send, receive = anyio.create_memory_object_stream[tuple[int, P]](max_buffer_size=0)

    async def writer() -> None:
        async with receive:
            async for count, prepared in receive:
                started = time.perf_counter()
                await land(prepared)
                pieces.landed(count, time.perf_counter() - started)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(writer)
        async with send:
            for piece in pieces:
                with collector_paused():
                    prepared = prepare(piece)
                if prepared is not None:
                    await send.send((len(piece), prepared))  # waits until the writer has landed the one before
