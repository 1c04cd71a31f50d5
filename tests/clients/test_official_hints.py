"""The memory profile's tools against the official memory server's own tools/list (from npm): the same names (no
more: the profile's other tools are toolsets it lists only when asked), titles and hints, except idempotentHint on
the three writes, which the official server marks false but which here skip what exists (names, relations,
observations), so a repeat changes nothing."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.clients.conftest import node_project
from tests.conftest import open_client
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.clients, pytest.mark.anyio]
SKIPPING_WRITES = {"create_entities", "create_relations", "add_observations"}


async def test_memory_profile_hints_match_the_official_server(settings: Settings, tmp_path: Path) -> None:
    project = node_project("node_v1")
    done = subprocess.run(
        ["node", "official_tools.mjs", str(tmp_path / "memory.jsonl")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    official = {tool["name"]: tool for tool in json.loads(done.stdout.strip().splitlines()[-1])}
    async with open_client(settings, "in_process", profile="memory") as client:
        ours = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(ours) == set(official)
    for name, tool in ours.items():
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        expected = {k: v for k, v in official[name]["annotations"].items() if k != "title"}
        if name in SKIPPING_WRITES:
            assert expected.pop("idempotentHint") is False and hints.pop("idempotentHint") is True
        assert hints == expected, name
        assert tool.title == official[name].get("title", official[name]["annotations"].get("title")), name
