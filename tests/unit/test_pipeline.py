"""services/pipeline.py: chunks in order, sized by the engine's pace, one write in flight while the next chunk is
prepared, the collector paused only while preparing; and the ids a batch stamps (services/gate.new_id)."""

import gc
import uuid

import anyio
import pytest

from write_gate.services import pipeline
from write_gate.services.gate import new_id

pytestmark = pytest.mark.anyio


def test_chunks_keep_every_item_in_order() -> None:
    items = list(range(2_501))
    parts = pipeline.chunks(items, 1_000)
    assert [len(p) for p in parts] == [1_000, 1_000, 501]
    assert [x for p in parts for x in p] == items
    assert pipeline.chunks([], 10) == []


def test_chunks_follow_the_module_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", 2)
    assert pipeline.chunks([1, 2, 3]) == [[1, 2], [3]]


def test_pieces_follow_the_engines_pace_within_their_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each piece takes about STATEMENT_SECONDS at the last one's pace: from FIRST_ITEMS, at most doubling, never
    past CHUNK_ITEMS nor below LEAST_ITEMS; every item once, in order, whatever the sizes."""
    items = list(range(6_000))
    paced = pipeline.Paced(items)
    sizes, seen = [], []
    for piece, seconds in zip(paced, [0.05, 0.1, 0.6, 4.0, 0.0, 0.1, 0.2, 0.2, 0.05, 0.05, 0.05], strict=False):
        sizes.append(len(piece))
        seen += piece
        paced.landed(len(piece), seconds)
    assert sizes == [1_000, 1_000, 1_000, 333, 50, 100, 200, 200, 200, 400, 800]
    assert seen == items[: sum(sizes)]
    assert sum(map(len, pipeline.Paced(items))) == 6_000
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", 2)
    small = pipeline.Paced([1, 2, 3])
    small.landed(2, 100.0)
    assert small.size == 2 and list(small) == [[1, 2], [3]]


async def test_the_next_chunk_is_prepared_while_one_lands_and_they_land_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_ITEMS", 1)
    events: list[str] = []
    landing = anyio.Event()

    def prepare(piece: list[int]) -> int | None:
        [chunk] = piece
        events.append(f"prepare {chunk}")
        assert not gc.isenabled()  # pure Python, nothing to collect
        return None if chunk == 2 else chunk  # chunk 2 has nothing to write

    async def land(chunk: int) -> None:
        events.append(f"land {chunk}")
        if chunk == 0:
            await landing.wait()  # the engine is slow on the first: the next is prepared meanwhile
        events.append(f"landed {chunk}")

    async def release() -> None:
        await anyio.wait_all_tasks_blocked()
        landing.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(release)
        await pipeline.pipelined(list(range(4)), prepare, land)
    assert events.index("prepare 1") < events.index("landed 0")  # overlapped
    assert [e for e in events if e.startswith("land ")] == ["land 0", "land 1", "land 3"]
    assert events.index("landed 0") < events.index("land 1")  # one write in flight at a time
    assert gc.isenabled()


async def test_a_failing_land_ends_the_pipeline_and_the_collector_runs_again() -> None:
    async def land(chunk: list[int]) -> None:
        raise RuntimeError("the engine went away")

    with pytest.raises(BaseExceptionGroup):
        await pipeline.pipelined(list(range(3)), lambda chunk: chunk, land)
    assert gc.isenabled()


def test_new_ids_are_uuid4_hex() -> None:
    ids = {new_id() for _ in range(1_000)}
    assert len(ids) == 1_000
    for text in ids:
        parsed = uuid.UUID(hex=text)
        assert (parsed.hex, parsed.version, parsed.variant) == (text, 4, uuid.RFC_4122)
