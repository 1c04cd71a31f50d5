"""Logs of a real `write-gate serve`: every stderr line is one JSON object (the gate's loggers, the MCP SDK's,
Python warnings), decisions carry their fields and never values, and WRITE_GATE_LOG_LEVEL sets how much."""

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import settings_env, write_gate_argv
from tests.e2e.stdio_process import RawStdio
from write_gate.serving.config import BackendKind, Settings

SECRET = "Ada Secretvalue"


def write(name: str, **properties: Any) -> dict[str, Any]:
    arguments = {"label": "Person", "merge_keys": {"name": name}, "source": "logs", "extraction_method": "manual"}
    return {"name": "write_node", "arguments": {**arguments, "properties": properties}}


def serve_and_read_log(tmp_path: Path, *args: str, **env: str) -> list[dict[str, Any]]:
    """Start a gate, make one write pass and one fail, send a notification the SDK drops with a warning,
    stop it, and parse its stderr: every line must be one JSON object."""
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data", embedded_fsync="everysec")
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        server = RawStdio(settings, *args, stderr=stderr, **env)
        try:
            server.initialize()
            assert server.request(1, "tools/call", write(SECRET))["result"]["isError"] is False
            assert server.request(2, "tools/call", write(SECRET, confidence=0.9))["result"]["isError"] is True
            server.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}}')
            assert server.request(3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
        finally:
            server.close()
    # stdout is the protocol: it held the four answers and nothing else.
    assert [json.loads(line).get("id") for line in server.stdout] == [0, 1, 2, 3], server.stdout
    text = log.read_text()
    assert SECRET not in text  # property values are never logged
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        assert isinstance(record, dict) and {"time", "level", "logger", "message"} <= record.keys(), record
    return records


def test_every_line_is_a_json_object_and_decisions_keep_their_fields(tmp_path: Path) -> None:
    records = serve_and_read_log(tmp_path)
    loggers = {record["logger"] for record in records}
    assert "write_gate.serving.registry_keeper" in loggers  # start-up: migrations applied
    assert any(r["level"] == "WARNING" and r["logger"].startswith("mcp.") for r in records), loggers  # the SDK's
    decisions = [r for r in records if r["logger"] == "write_gate.decisions"]
    assert [d["status"] for d in decisions] == ["written", "rejected"]
    written, rejected = decisions
    assert written.items() >= {"event": "tool_call", "agent": "raw", "tool": "write_node", "label": "Person"}.items()
    assert "error_code" not in written and isinstance(written["latency_ms"], float)
    assert rejected["error_code"] == "SCHEMA_PROTECTED_FIELD" and rejected["level"] == "INFO"
    assert rejected["message"] == "write_node rejected SCHEMA_PROTECTED_FIELD"


def test_log_level_warning_keeps_only_warnings_and_worse(tmp_path: Path) -> None:
    records = serve_and_read_log(tmp_path, WRITE_GATE_LOG_LEVEL="warning")
    assert records and {r["level"] for r in records} <= {"WARNING", "ERROR", "CRITICAL"}
    assert not any(r["logger"] == "write_gate.decisions" for r in records)


def test_verbose_flag_logs_debug_and_still_keeps_stdout_clean(tmp_path: Path) -> None:
    records = serve_and_read_log(tmp_path, "-v", WRITE_GATE_LOG_LEVEL="WARNING")
    assert any(r["level"] == "DEBUG" for r in records)


def test_an_unknown_log_level_is_a_configuration_error(tmp_path: Path) -> None:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path / "data")
    result = subprocess.run(
        write_gate_argv("serve"),
        env={**settings_env(settings), "WRITE_GATE_LOG_LEVEL": "loud"},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2 and "error: configuration" in result.stderr and "log_level" in result.stderr
