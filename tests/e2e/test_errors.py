"""Errors that tell the truth (issue 16, item 11): engine text never reaches an agent, text no engine can
store is the agent's INVALID_INPUT, a full disk is the storage's BACKEND_UNAVAILABLE while reads keep working,
an engine's refusal is INTERNAL_ERROR with an incident for reads and writes alike, and an unknown tool is a
protocol error."""

import logging
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import redis
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import MATRIX_SCHEMAS, TESTS, every_toolset, open_client, start_falkordb_server, stop_server
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode
from write_gate.engines import BackendError, GraphBackend
from write_gate.engines.errors import engine_failure
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]
PERSON = {"label": "Person", "source": "t", "extraction_method": "api"}


async def rejected(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.structured_content


@pytest.mark.parametrize("bad", ["nul\x00inside", "lone \ud800 surrogate"])
async def test_text_no_engine_stores_is_invalid_input_everywhere(
    settings: Settings, graph: GraphBackend, bad: str
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process") as gate, open_client(settings, "in_process", profile="memory") as m:
        cases = [
            (gate, "search_nodes", {"query": bad}),
            (gate, "open_nodes", {"names": [bad]}),
            (gate, "write_node", {**PERSON, "merge_keys": {"name": bad}}),
            (gate, "write_node", {**PERSON, "merge_keys": {"name": "x"}, "source": bad}),
            (m, "create_entities", {"entities": [{"name": bad, "entityType": "person"}]}),
            (m, "add_observations", {"observations": [{"entityName": "x", "contents": [bad]}]}),
            (m, "delete_entities", {"entityNames": [bad]}),
        ]
        for client, tool, args in cases:
            out = await rejected(client, tool, **args)
            assert out["error_code"] == "INVALID_INPUT", (tool, out)
            assert bad not in str(out)  # never echoed
    assert (
        await graph.read(
            Statement(
                "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateQuarantine "
                "RETURN count(n) AS c"
            )
        )
    )[0]["c"] == 0  # nothing written (the rejected writes are kept in the quarantine, as values)


def json_types(spec: dict[str, Any]) -> set[str]:
    kinds: set[str] = set()
    for part in (spec, *spec.get("anyOf", [])):
        kind = part.get("type")
        kinds |= {kind} if isinstance(kind, str) else set(kind or [])
    return kinds


@pytest.mark.one_tier  # refused before any statement
async def test_true_or_false_for_a_number_is_invalid_input_in_every_tool(
    settings: Settings, graph: GraphBackend
) -> None:
    """errors.md: a number may come as its text, never as true or false (which validation would read as 1 or 0:
    `limit: true` answered one entity). Every tool of every profile, every top-level argument its input schema
    says is a number."""
    listed = every_toolset(settings)
    answers = []
    for profile in ("gate", "memory", "mesh"):
        async with open_client(listed, "in_process", profile=profile) as client:
            for tool in (await client.list_tools()).tools:
                for name, spec in tool.input_schema.get("properties", {}).items():
                    if json_types(spec) & {"integer", "number"} and "boolean" not in json_types(spec):
                        for flag in (True, False):
                            result = await client.call_tool(tool.name, {name: flag})
                            answers.append((tool.name, name, result.is_error, result.structured_content))

    def refused_for(answer: tuple[str, str, bool, Any]) -> bool:
        _tool, name, is_error, content = answer
        return (
            is_error and content["error_code"] == "INVALID_INPUT" and content["details"]["problems"][0]["field"] == name
        )

    wrong = [answer for answer in answers if not refused_for(answer)]
    assert not wrong, wrong[:5]
    assert len(answers) >= 40  # limit, relations_limit, threshold, importance, reliability, weight, ... everywhere


async def test_engine_text_is_logged_with_an_incident_never_answered(
    graph: GraphBackend, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(BackendError) as refused:
        await graph.write(Statement("MATCH (n) RETURN n.missing + 'secret-fragment' + 1 AS x UNION RETURN 1 AS y"))
    with caplog.at_level(logging.ERROR, logger="write_gate.engines.errors"):
        rejection = engine_failure(refused.value, "write").rejected
    assert rejection.error_code is ErrorCode.INTERNAL_ERROR
    assert str(refused.value) not in rejection.message and "engine_error" not in rejection.details
    incident = rejection.details["incident"]
    assert incident in rejection.message and any(
        incident in r.message and str(refused.value) in r.message for r in caplog.records
    )


async def test_an_engine_refusal_reaches_the_agent_through_mcp_as_a_code_and_an_incident_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real refusal no input check foresees: the operator caps each query's memory at 1 MB (FalkorDB's
    QUERY_MEM_CAPACITY), so the engine refuses every write with its own text."""
    process, url = start_falkordb_server(tmp_path)
    try:
        settings = Settings(
            backend=BackendKind.FALKORDB, falkordb_url=url, graph_name="capped", query_timeout_seconds=5
        )
        backend = await open_backend(settings)
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
        async with open_client(settings, "in_process") as client:
            accepted = await client.call_tool("write_node", {**PERSON, "merge_keys": {"name": "before the cap"}})
            assert not accepted.is_error, accepted.structured_content
            engine = redis.Redis.from_url(url)
            engine.execute_command("GRAPH.CONFIG", "SET", "QUERY_MEM_CAPACITY", "1")
            engine.close()
            with caplog.at_level(logging.ERROR, logger="write_gate.engines.errors"):
                wrote = await rejected(client, "write_node", **PERSON, merge_keys={"name": "after the cap"})
                read = await rejected(client, "search_nodes", query="before")
        await backend.close()
    finally:
        stop_server(process)
    # One mapping: a refused read is answered exactly as a refused write.
    for action, out in (("write", wrote), ("read", read)):
        assert out["error_code"] == "INTERNAL_ERROR" and set(out["details"]) == {"incident"}, out
        assert "mem consumption" not in str(out) and "capacity" not in str(out)  # the engine's words stay in the log
        incident = out["details"]["incident"]
        assert out["message"] == f"the graph engine refused the {action}; the gate logged it as incident {incident}"
        logged = [r.getMessage() for r in caplog.records if incident in r.getMessage()]
        assert logged and "Query's mem consumption exceeded capacity" in logged[0], caplog.records


async def test_an_unknown_tool_is_a_protocol_error(settings: Settings, graph: GraphBackend) -> None:
    """tools/call of a tool the server does not offer is JSON-RPC -32602, as the MCP specification has it;
    a tool it offers but the arguments do not fit is a tool result with INVALID_INPUT."""
    async with open_client(settings, "in_process") as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        assert unknown.value.code == types.INVALID_PARAMS and "no_such_tool" in unknown.value.message
        out = await rejected(client, "search_nodes", no_such_argument=1)
        assert out["error_code"] == "INVALID_INPUT"


@pytest.mark.parametrize("fsync", ["no", "everysec"])  # the embedded engine's default, and redis' own
async def test_a_full_disk_is_backend_unavailable_and_reads_keep_working(tmp_path: Path, fsync: str) -> None:
    """A FalkorDB server whose files may not grow past 64 KiB (RLIMIT_FSIZE, the signal ignored so the write
    fails with EFBIG as on a full disk): the append-only file stops, redis refuses writes with MISCONF.
    (With appendfsync always redis exits instead: the gate then answers unreachable.)"""
    limit = ["bash", "-c", f'trap "" XFSZ; ulimit -f 64; exec "$@" --appendfsync {fsync}', "limited"]
    process, url = start_falkordb_server(tmp_path, wrapper=limit)
    try:
        settings = Settings(backend=BackendKind.FALKORDB, falkordb_url=url, graph_name="full", query_timeout_seconds=5)
        backend = await open_backend(settings)
        await load_into_graph(backend, read_sources([MATRIX_SCHEMAS]))
        async with open_client(settings, "in_process") as client:
            out: dict[str, Any] = {}
            for i in range(2000):
                result = await client.call_tool(
                    "write_node", {**PERSON, "merge_keys": {"name": f"p{i}"}, "properties": {"pad": "x" * 500}}
                )
                if result.is_error:
                    out = result.structured_content
                    break
            assert out.get("error_code") == "BACKEND_UNAVAILABLE" and out["details"]["reason"] == "storage", out
            assert "MISCONF" not in str(out)
            page = await client.call_tool("read_graph", {"limit": 5})
            assert not page.is_error and len(page.structured_content["entities"]) == 5
        await backend.close()
    finally:
        stop_server(process)
