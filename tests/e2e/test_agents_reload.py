"""A running gate follows its agents file: a re-keyed agent's old token stops working at once, a removed
agent loses access, grant changes apply to open sessions, and a broken file keeps the last good agents in
force. Over HTTP (bearer tokens) and stdio (WRITE_GATE_AGENT), with no restart in between."""

import json
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from mcp import Client, StdioServerParameters

from tests.conftest import GATE_DEFAULT_TOOLS, READ_TOOLS, settings_env, write_gate_argv
from tests.e2e.http_process import INITIALIZE, agents_command, http_gate, mcp_client, mcp_post
from write_gate.serving.config import BackendKind, Settings

pytestmark = pytest.mark.anyio


@dataclass
class Fleet:
    url: str
    settings: Settings
    agents_file: Path
    log: Path

    def add(self, name: str, *grant: str) -> str:
        return agents_command(self.settings, "add", name, "--file", str(self.agents_file), *grant)

    def edit(self, name: str, **grant: Any) -> None:
        """Change an agent's grant by hand, in place, as an operator with an editor would."""
        data = tomllib.loads(self.agents_file.read_text())
        data["agents"][name].update(grant)
        self.agents_file.write_text(tomli_w.dumps(data))

    def status(self, token: str) -> int:
        return mcp_post(self.url, token, INITIALIZE)[0]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    tmp = tmp_path_factory.mktemp("reload")
    agents_file = tmp / "agents.toml"
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec")
    agents_command(settings, "add", "operator", "--grant", "full", "--file", str(agents_file))
    with http_gate(settings, tmp / "gate.log", WRITE_GATE_AGENTS_FILE=str(agents_file)) as gate:
        yield Fleet(gate.url, settings, agents_file, gate.log)


def person(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "source": "reload", "extraction_method": "manual"}


def test_an_agent_added_while_running_is_known_at_once(fleet: Fleet) -> None:
    assert fleet.status(fleet.add("newcomer")) == 200


def test_rekeying_invalidates_the_old_token_at_once(fleet: Fleet) -> None:
    old = fleet.add("alice")
    assert fleet.status(old) == 200
    new = fleet.add("alice")
    assert fleet.status(old) == 401
    assert fleet.status(new) == 200


def test_a_removed_agent_loses_access(fleet: Fleet) -> None:
    token = fleet.add("bob")
    assert fleet.status(token) == 200
    agents_command(fleet.settings, "remove", "bob", "--file", str(fleet.agents_file))
    assert fleet.status(token) == 401
    assert "bob" not in tomllib.loads(fleet.agents_file.read_text())["agents"]


async def test_grant_changes_apply_to_an_open_session(fleet: Fleet) -> None:
    token = fleet.add("carol")
    async with mcp_client(fleet.url, token) as client:
        assert "write_node" in {tool.name for tool in (await client.list_tools()).tools}
        assert not (await client.call_tool("write_node", person("Carol"))).is_error

        fleet.edit("carol", tools=["read"])
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS & GATE_DEFAULT_TOOLS
        denied = await client.call_tool("write_node", person("Carol"))
        assert denied.structured_content["error_code"] == "PERMISSION_DENIED"

        fleet.edit("carol", tools=["read", "history"])  # a toolset named: listed, and its tools allowed
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS & GATE_DEFAULT_TOOLS | {
            "get_history",
            "list_conflicts",
            "resolve_conflict",
        }

        fleet.edit("carol", tools=["read", "write"], labels=["Organization"])
        denied = await client.call_tool("write_node", person("Carol"))
        assert denied.structured_content["error_code"] == "PERMISSION_DENIED"
        assert denied.structured_content["details"]["labels"] == ["Person"]


def test_a_broken_file_keeps_the_last_good_agents_and_the_log_says_why(fleet: Fleet) -> None:
    token = fleet.add("dave")
    assert fleet.status(token) == 200  # the gate has read the file with dave in it: the last good one
    good = fleet.agents_file.read_text()
    try:
        fleet.agents_file.write_text(good + "\n[agents.eve\ntoken_sha256 = ")
        assert fleet.status(token) == 200  # dave is still known
        fleet.agents_file.write_text('[agents.mallory]\ntoken_sha256 = "not a hash"\n')
        assert fleet.status(token) == 200
    finally:
        fleet.agents_file.write_text(good)
    records = [json.loads(line) for line in fleet.log.read_text().splitlines()]
    invalid = [r for r in records if r.get("event") == "agents_file_invalid"]
    assert len(invalid) == 2 and all(r["level"] == "ERROR" for r in invalid)
    assert "agents.mallory.token_sha256" in invalid[1]["message"] and "not a hash" not in invalid[1]["message"]
    assert fleet.status(fleet.add("frank")) == 200  # fixed: changes apply again


async def test_over_stdio_grant_changes_apply_without_a_restart(tmp_path: Path) -> None:
    agents_file = tmp_path / "agents.toml"
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")
    agents_command(settings, "add", "erin", "--file", str(agents_file))  # a writer
    fleet = Fleet("", settings, agents_file, tmp_path / "unused.log")
    env = {**settings_env(settings), "WRITE_GATE_AGENT": "erin", "WRITE_GATE_AGENTS_FILE": str(agents_file)}
    command, *args = write_gate_argv("serve")
    async with Client(StdioServerParameters(command=command, args=args, env=env), read_timeout_seconds=60) as client:
        assert "refresh_schema_cache" not in {tool.name for tool in (await client.list_tools()).tools}
        assert not (await client.call_tool("write_node", person("Erin"))).is_error

        fleet.edit("erin", tools=["read"])
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS & GATE_DEFAULT_TOOLS
        denied = await client.call_tool("write_node", person("Erin"))
        assert denied.structured_content["error_code"] == "PERMISSION_DENIED"

        fleet.edit("erin", tools=["*"], labels=["Organization"])
        assert "refresh_schema_cache" in {tool.name for tool in (await client.list_tools()).tools}
        denied = await client.call_tool("write_node", person("Erin"))
        assert denied.structured_content["details"]["labels"] == ["Person"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_broken_agents_file_at_start_is_a_one_line_error(tmp_path: Path, transport: str) -> None:
    agents_file = tmp_path / "agents.toml"
    agents_file.write_text("[agents.x]\ntools = 3\n")
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data")
    result = subprocess.run(
        write_gate_argv("serve", "--transport", transport),
        env={**settings_env(settings), "WRITE_GATE_AGENTS_FILE": str(agents_file)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    why = "agents.x.tools: Input should be a valid tuple; agents.x.token_sha256: Field required"
    assert result.stderr == f"error: agents file: {agents_file}: {why}\n"


def test_removing_an_agent_the_file_does_not_list_is_an_error(tmp_path: Path) -> None:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data")
    agents_file = tmp_path / "agents.toml"
    agents_command(settings, "add", "ann", "--file", str(agents_file))
    result = subprocess.run(
        write_gate_argv("agents", "remove", "zed", "--file", str(agents_file)),
        env=settings_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stderr == f"error: {agents_file} lists no agent 'zed'\n"
    assert "ann" in tomllib.loads(agents_file.read_text())["agents"]
