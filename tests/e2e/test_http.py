"""`write-gate serve --transport http` as a fleet runs it: bearer tokens from an agents file, grants,
written_by from the token, /health, decision logs, many concurrent sessions; the protected-resource
metadata a 401 points at; Host and Origin checks; idle sessions expiring."""

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import (
    GATE_TOOLS,
    KNOWLEDGE_ADMIN,
    MATRIX_SCHEMAS,
    QUARANTINE_TOOLS,
    READ_TOOLS,
    settings_env,
    write_gate_argv,
)
from tests.e2e.http_process import INITIALIZE, agents_command, http_gate, mcp_client, mcp_post, request
from tests.e2e.test_stdio_protocol import MALFORMED
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import read_sources

pytestmark = pytest.mark.anyio


@dataclass
class Fleet:
    url: str
    settings: Settings
    tokens: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path


def add_agent(settings: Settings, agents_file: Path, name: str, *grant: str) -> str:
    return agents_command(settings, "add", name, "--file", str(agents_file), *grant)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    tmp = tmp_path_factory.mktemp("fleet")
    agents_file = tmp / "agents.toml"
    settings = Settings(
        backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", agents_file=agents_file
    )
    tokens = {
        "writer": add_agent(settings, agents_file, "writer"),
        "reader": add_agent(settings, agents_file, "reader", "--grant", "reader"),
        "orgs": add_agent(settings, agents_file, "orgs", "--labels", "Organization", "--types", "WORKS_FOR"),
    }
    assert "token_sha256" in agents_file.read_text() and not any(t in agents_file.read_text() for t in tokens.values())
    subprocess.run(
        write_gate_argv("schema", "load", str(MATRIX_SCHEMAS)),
        env=settings_env(settings),
        check=True,
        capture_output=True,
        timeout=60,
    )
    # --host and --port (http_gate passes a free port) win over the environment, which names a port in use. Every
    # toolset is listed, so a list shows all that a grant allows.
    env = {
        "WRITE_GATE_AGENTS_FILE": str(agents_file),
        "WRITE_GATE_HOST": "0.0.0.0",
        "WRITE_GATE_PORT": "1",
        "WRITE_GATE_TOOLSETS": "all",
    }
    with http_gate(settings, tmp / "gate.log", "--host", "127.0.0.1", **env) as gate:
        yield Fleet(gate.url, settings, tokens, gate.process, gate.log)


def session(fleet: Fleet, token: str | None):
    return mcp_client(fleet.url, token)


def post_without_token(url: str, token: str | None) -> int:
    request = urllib.request.Request(
        f"{url}/mcp",
        data=b"{}",
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def write(name: str, label: str = "Person", **props: Any) -> dict[str, Any]:
    return {
        "label": label,
        "merge_keys": {"name": name},
        "properties": props,
        "source": "fleet",
        "extraction_method": "api",
    }


def test_missing_or_unknown_tokens_get_401(fleet: Fleet) -> None:
    assert post_without_token(fleet.url, None) == 401
    assert post_without_token(fleet.url, "wg_not-a-real-token") == 401


def test_health_answers_without_a_token(fleet: Fleet) -> None:
    with urllib.request.urlopen(f"{fleet.url}/health", timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "ok" and body["engine"] == "reachable" and body["backend"] == "embedded", body
    # The matrix registry loaded first, then the shipped ones (serve migrates): their node labels, once each.
    shipped = read_sources([bundled("schemas") / "core", bundled("schemas") / "memory"])
    matrix = read_sources([MATRIX_SCHEMAS])
    labels = {e.name for e in shipped + matrix if e.kind == "node"}
    assert body["registry"]["loaded"] and body["registry"]["node_labels"] == len(labels) and body["version"]


async def test_a_writer_sees_read_and_write_tools_and_is_stamped_as_itself(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["writer"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == GATE_TOOLS - {
            "refresh_schema_cache",
            *KNOWLEDGE_ADMIN,
            "export_graph",
            "import_graph",
            *QUARANTINE_TOOLS,
        }  # no admin
        result = await client.call_tool("write_node", write("Ada"))
        assert not result.is_error, result.structured_content
    backend = await open_backend(fleet.settings)
    try:
        [row] = await backend.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n.written_by AS by"))
    finally:
        await backend.close()
    assert row["by"] == "writer"


async def test_written_by_cannot_be_claimed(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["writer"]) as client:
        result = await client.call_tool("write_node", write("Eve", written_by="admin"))
    assert result.is_error and result.structured_content["error_code"] == "SCHEMA_PROTECTED_FIELD"


async def test_a_reader_sees_and_may_use_read_tools_only(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["reader"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
        result = await client.call_tool("write_node", write("Mallory"))
        assert result.is_error and result.structured_content["error_code"] == "PERMISSION_DENIED"
        assert not (await client.call_tool("read_graph", {})).is_error


async def test_label_and_type_grants(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["orgs"]) as client:
        assert not (await client.call_tool("write_node", write("Acme", "Organization"))).is_error
        denied = await client.call_tool("write_node", write("Bob"))
        assert denied.structured_content["error_code"] == "PERMISSION_DENIED"
        assert denied.structured_content["details"]["labels"] == ["Person"]
        # merge_endpoints would create a Person stub: that is a Person write too.
        rel = {
            "type": "WORKS_FOR",
            "from_label": "Person",
            "from_keys": {"name": "Zed"},
            "to_label": "Organization",
            "to_keys": {"name": "Acme"},
            "source": "fleet",
            "extraction_method": "api",
            "endpoint_policy": "merge_endpoints",
        }
        assert (await client.call_tool("write_relationship", rel)).structured_content[
            "error_code"
        ] == "PERMISSION_DENIED"


async def test_a_document_outside_the_grant_answers_as_running_md_says(fleet: Fleet) -> None:
    """docs/fleets/running.md's `:Document` examples, for an agent granted Organization and WORKS_FOR: a whole
    `:Document` is PERMISSION_DENIED; the registry's checks come first, so one missing its name and a WORKS_FOR
    to one (the entry does not allow it) answer their schema codes; a type outside the grant is denied."""

    def edge(kind: str) -> dict[str, Any]:
        ends = {"from_label": "Person", "from_keys": {"name": "Ada"}, "to_label": "Document", "to_keys": {"name": "N"}}
        return {
            "type": kind,
            **ends,
            "source": "fleet",
            "extraction_method": "api",
            "endpoint_policy": "merge_endpoints",
        }

    async with session(fleet, fleet.tokens["orgs"]) as client:
        answers = [
            await client.call_tool("write_node", write("Notes", "Document")),
            await client.call_tool("write_node", {**write("x", "Document"), "merge_keys": {"title": "Notes"}}),
            await client.call_tool("write_relationship", edge("WORKS_FOR")),
            await client.call_tool("write_relationship", edge("AUTHORED")),
        ]
    assert [answer.structured_content["error_code"] for answer in answers] == [
        "PERMISSION_DENIED",
        "SCHEMA_MISSING_REQUIRED_PROPERTY",
        "SCHEMA_UNKNOWN_LABEL",
        "PERMISSION_DENIED",
    ]
    running = " ".join((Path(__file__).parents[2] / "docs" / "fleets" / "running.md").read_text().split())
    for code in ("SCHEMA_MISSING_REQUIRED_PROPERTY", "SCHEMA_UNKNOWN_LABEL"):
        assert code in running


async def test_one_log_line_per_write_decision_and_no_secrets(fleet: Fleet) -> None:
    async with session(fleet, fleet.tokens["reader"]) as client:
        assert (await client.call_tool("write_node", write("Ada"))).is_error  # a reader's write: refused
    records = [json.loads(line) for line in fleet.log.read_text().splitlines()]  # every line is one JSON object
    uvicorn = [r for r in records if r["logger"].startswith("uvicorn")]  # the web server's own lines too
    assert uvicorn and not any("color_message" in r for r in uvicorn)  # its terminal-colour copy is dropped
    lines = [r for r in records if r["logger"] == "write_gate.decisions"]
    expected = {"agent": "reader", "tool": "write_node", "status": "rejected", "error_code": "PERMISSION_DENIED"}
    assert expected.items() <= next(line for line in lines if line["agent"] == "reader").items()
    assert all({"agent", "tool", "status", "latency_ms"} <= line.keys() for line in lines)
    text = fleet.log.read_text()
    assert not any(token in text for token in fleet.tokens.values())
    assert "Ada" not in text  # property values are not logged


async def test_16_concurrent_sessions_writing_the_same_keys_one_node_per_key(fleet: Fleet) -> None:
    """Overlapping merge keys from 16 sessions (60 writes each, three to every one of 20 keys, 48 writers a key):
    exactly one node per key, every acknowledged write kept."""
    acknowledged: dict[tuple[str, int], int] = {}

    async def agent(n: int) -> None:
        async with session(fleet, fleet.tokens["writer"]) as client:
            for i in range(60):
                key = f"shared-{i % 20}"  # every session writes the same 20 keys
                args = write(key, **{f"s{n}": i})
                result = await client.call_tool("write_node", args)
                assert not result.is_error, result.structured_content
                acknowledged[(key, n)] = i

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tasks:
            for n in range(16):
                tasks.start_soon(agent, n)
    backend = await open_backend(fleet.settings)
    try:
        rows = await backend.read(
            Statement("MATCH (n:Person) WHERE n.name STARTS WITH 'shared-' RETURN n.name AS name, properties(n) AS p")
        )
    finally:
        await backend.close()
    assert sorted(r["name"] for r in rows) == sorted(f"shared-{k}" for k in range(20))  # one node per key
    by_name = {r["name"]: r["p"] for r in rows}
    for (key, n), last in acknowledged.items():
        assert by_name[key][f"s{n}"] == last  # the last acknowledged value of each session is there


# --- 401s tell the OAuth way where a token comes from (RFC 9728) --------------------------------------------


def test_a_401_names_the_protected_resource_metadata_which_says_how_to_get_a_token(fleet: Fleet) -> None:
    status, headers, _ = mcp_post(fleet.url, None, INITIALIZE)
    assert status == 401
    challenge = headers["www-authenticate"]
    metadata_url = f"{fleet.url}/.well-known/oauth-protected-resource/mcp"
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata_url}"' in challenge
    status, _, body = request(fleet.url, "GET", "/.well-known/oauth-protected-resource/mcp")
    metadata = json.loads(body)
    assert status == 200 and metadata["resource"] == f"{fleet.url}/mcp"
    assert metadata["bearer_methods_supported"] == ["header"]
    assert "authorization_servers" not in metadata  # there is none: tokens come from `write-gate agents add`
    assert metadata["resource_documentation"] == f"{fleet.url}/auth"
    assert json.loads(request(fleet.url, "GET", "/.well-known/oauth-protected-resource")[2]) == metadata
    status, _, page = request(fleet.url, "GET", "/auth")
    assert status == 200 and "write-gate agents add NAME" in page and "Authorization: Bearer" in page
    assert f"{fleet.url}/mcp" in page


def test_an_unknown_token_gets_the_same_challenge(fleet: Fleet) -> None:
    status, headers, body = mcp_post(fleet.url, "wg_unknown", INITIALIZE)
    assert status == 401 and "resource_metadata=" in headers["www-authenticate"]
    assert json.loads(body)["error"] == "invalid_token"


# --- Host and Origin (DNS-rebinding protection) -------------------------------------------------------------


def test_bound_to_localhost_only_local_host_names_pass(fleet: Fleet) -> None:
    token = fleet.tokens["reader"]
    port = fleet.url.rsplit(":", 1)[1]
    assert mcp_post(fleet.url, token, INITIALIZE, {"Host": f"localhost:{port}"})[0] == 200
    assert mcp_post(fleet.url, token, INITIALIZE, {"Host": f"gate:{port}"})[0] == 421
    assert mcp_post(fleet.url, token, INITIALIZE, {"Host": "attacker.example"})[0] == 421


def test_bound_to_localhost_browsers_pass_only_from_local_origins(fleet: Fleet) -> None:
    token = fleet.tokens["reader"]
    assert mcp_post(fleet.url, token, INITIALIZE, {"Origin": "http://localhost:6274"})[0] == 200
    assert mcp_post(fleet.url, token, INITIALIZE, {"Origin": "https://attacker.example"})[0] == 403


@dataclass
class Exposed:
    url: str
    port: int
    token: str


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exposed]:
    """Bound to every interface, for agents that reach it as `gate`, with sessions idle for 2 s expiring."""
    tmp = tmp_path_factory.mktemp("exposed")
    settings = Settings(
        backend=BackendKind.EMBEDDED, data_dir=tmp / "data", embedded_fsync="everysec", agents_file=tmp / "a.toml"
    )
    token = agents_command(settings, "add", "agent", "--file", str(settings.agents_file))
    env = {
        "WRITE_GATE_AGENTS_FILE": str(settings.agents_file),
        "WRITE_GATE_ALLOWED_HOSTS": "gate, gate.internal:8443",
        "WRITE_GATE_ALLOWED_ORIGINS": "https://app.example.com",
        "WRITE_GATE_SESSION_IDLE_SECONDS": "2",
    }
    with http_gate(settings, tmp / "gate.log", "--host", "0.0.0.0", **env) as gate:
        yield Exposed(gate.url, gate.port, token)


def test_bound_to_all_interfaces_listed_host_names_pass_and_others_get_421(exposed: Exposed) -> None:
    def status(host: str) -> int:
        return mcp_post(exposed.url, exposed.token, INITIALIZE, {"Host": host})[0]

    assert status(f"gate:{exposed.port}") == 200 and status("gate") == 200  # a name without a port: any port
    assert status("gate.internal:8443") == 200 and status("gate.internal:9000") == 421  # with a port: that one
    assert status(f"127.0.0.1:{exposed.port}") == 200  # local names always
    assert status(f"attacker.example:{exposed.port}") == 421 and status(f"{exposed.port}") == 421


def test_bound_to_all_interfaces_browsers_pass_only_from_listed_origins(exposed: Exposed) -> None:
    def status(origin: str) -> int:
        return mcp_post(exposed.url, exposed.token, INITIALIZE, {"Origin": origin})[0]

    assert status("https://app.example.com") == 200
    assert status("https://attacker.example") == 403 and status("https://app.example.com.attacker.example") == 403
    assert mcp_post(exposed.url, exposed.token, INITIALIZE)[0] == 200  # no Origin: not a browser


def test_the_metadata_names_the_gate_by_its_listed_host_name(exposed: Exposed) -> None:
    metadata = json.loads(request(exposed.url, "GET", "/.well-known/oauth-protected-resource/mcp")[2])
    assert metadata["resource"] == f"http://gate:{exposed.port}/mcp"


# --- idle sessions expire ------------------------------------------------------------------------------------


def open_session(url: str, token: str) -> str:
    status, headers, _ = mcp_post(url, token, INITIALIZE)
    assert status == 200
    session = headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert mcp_post(url, token, initialized, session=session)[0] == 202
    return session


def test_an_idle_session_is_gone_after_the_timeout_and_its_id_gets_404(exposed: Exposed) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    idle = open_session(exposed.url, exposed.token)
    busy = open_session(exposed.url, exposed.token)
    for _ in range(6):  # 3 s of pings 0.5 s apart: never idle for 2 s
        assert mcp_post(exposed.url, exposed.token, ping, session=busy)[0] == 200
        anyio.run(anyio.sleep, 0.5)
    status, _, body = mcp_post(exposed.url, exposed.token, ping, session=idle)
    assert status == 404 and "Session not found" in body
    assert mcp_post(exposed.url, exposed.token, ping, session=busy)[0] == 200


# --- without an agents file ----------------------------------------------------------------------------------


def test_http_without_an_agents_file_is_refused_unless_no_auth(tmp_path: Path) -> None:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data")
    result = subprocess.run(
        write_gate_argv("serve", "--transport", "http"),
        env=settings_env(settings),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "HTTP needs WRITE_GATE_AGENTS_FILE" in result.stderr


def test_no_auth_with_an_agents_file_is_refused_at_start(tmp_path: Path) -> None:
    """One rule: `--no-auth` serves with no tokens and nobody can log in to the console, so it does not go
    with an agents file (which would silently require tokens again): the gate refuses to start with both."""
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data")
    agents_file = tmp_path / "agents.toml"
    add_agent(settings, agents_file, "writer")
    result = subprocess.run(
        write_gate_argv("serve", "--transport", "http", "--no-auth", "--port", "1"),
        env={**settings_env(settings), "WRITE_GATE_AGENTS_FILE": str(agents_file)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert "--no-auth" in errors[0] and "WRITE_GATE_AGENTS_FILE" in errors[0]


def test_no_auth_on_all_interfaces_with_no_host_listed_warns_and_still_checks_hosts(tmp_path: Path) -> None:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")
    with http_gate(settings, tmp_path / "gate.log", "--no-auth", "--host", "0.0.0.0") as gate:
        assert mcp_post(gate.url, None, INITIALIZE)[0] == 200  # no token needed
        assert mcp_post(gate.url, None, INITIALIZE, {"Host": f"gate:{gate.port}"})[0] == 421
        assert request(gate.url, "GET", "/.well-known/oauth-protected-resource/mcp")[0] == 404  # nothing to say
        records = [json.loads(line) for line in gate.log.read_text().splitlines()]
    warning = next(r for r in records if r["level"] == "WARNING" and r["logger"] == "write_gate.surface.server")
    assert "bound to 0.0.0.0 with no WRITE_GATE_ALLOWED_HOSTS" in warning["message"]


# --- malformed messages get the same answers as over stdio ---------------------------------------------------


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_body_gets_a_json_rpc_error_and_the_session_goes_on(fleet: Fleet, case: str) -> None:
    token = fleet.tokens["reader"]
    status, headers, _ = mcp_post(fleet.url, token, INITIALIZE)
    session = headers["mcp-session-id"]
    line, code, request_id = MALFORMED[case]
    status, _, body = mcp_post(fleet.url, token, line, session=session)
    answer = json.loads(body)
    assert status == 400 and answer["id"] == request_id and answer["error"]["code"] == code, answer
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert mcp_post(fleet.url, token, ping, session=session)[0] == 200


def test_a_body_over_the_transport_limit_is_refused_by_size_not_parsed(fleet: Fleet) -> None:
    too_big = b"x" * (2 * fleet.settings.max_request_bytes + 1)  # not JSON either: the size is what counts
    status, _, body = mcp_post(fleet.url, fleet.tokens["reader"], too_big)
    assert status == 413 and "too large" in body
