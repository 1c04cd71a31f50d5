"""The registry keeper's poll (serving/registry_keeper.py) is a background task: whatever a poll meets, it is
logged and the next poll tries again; it never ends the server. (CI met an engine killed mid-write leaving
asyncio's transport half closed: its TypeError, not an engine error the backend names, ended a stdio gate.)"""

import logging
from typing import Any

import anyio
import pytest

from tests.conftest import MATRIX_SCHEMAS
from write_gate.engines import GraphBackend
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = pytest.mark.anyio


async def test_a_poll_that_fails_unexpectedly_is_logged_and_the_gate_polls_on(
    settings: Settings, graph: GraphBackend, caplog: pytest.LogCaptureFixture
) -> None:
    await load_into_graph(graph, read_sources([MATRIX_SCHEMAS]))
    polls = 0
    async with open_gate(settings.model_copy(update={"registry_poll_seconds": 0.05}), keep_loading=True) as gate:
        version = gate.source.version

        async def failing_once() -> Any:
            nonlocal polls
            polls += 1
            if polls == 1:
                raise TypeError("'NoneType' object is not callable")  # as asyncio's half-closed transport raised
            return await version()

        gate.source.version = failing_once  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="write_gate.serving.registry_keeper"):
            with anyio.fail_after(10):
                while polls < 3:  # polled on after the failure
                    await anyio.sleep(0.05)
        assert gate.snapshot is not None
    assert any("registry version not read" in r.getMessage() and r.exc_info for r in caplog.records)
