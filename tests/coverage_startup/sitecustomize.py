"""Subprocesses of the suite (`write-gate serve`, CLI commands, gates in storms) start coverage after their
third-party imports, not before. Coverage's own start-up hook (a .pth file, COVERAGE_PROCESS_CONFIG) traces from the
first line, and tracing the MCP SDK's and pydantic's imports, which coverage does not measure, made each start about
2.5 s slower (1.8 s to 4.3 s for `import mcp.server` alone). tests/conftest.py moves the configuration to
SUITE_COVERAGE_AFTER_IMPORTS and puts this folder on PYTHONPATH; here the same imports are made unmeasured, then
coverage starts exactly as the .pth file would have started it. Every line of write_gate is still measured: none of
it is imported before coverage starts. Other interpreters that see this folder (the client tier's released clients,
in their own environments) find no write_gate and are left alone."""

import contextlib
import importlib
import importlib.util
import os

# The third-party modules a gate imports whatever it is asked to do (`python -X importtime -m write_gate.cli serve`).
_UNMEASURED = (
    "mcp_types",
    "mcp.server.lowlevel",
    "mcp.server.mcpserver",
    "mcp.server.stdio",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.client",
    "pydantic",
    "pydantic_settings",
    "starlette.applications",
    "starlette.routing",
    "sse_starlette",
    "uvicorn",
    "anyio",
    "rapidfuzz.fuzz",
    "rapidfuzz.distance",
    "jinja2",
    "prometheus_client",
    "opentelemetry.trace",
    "pythonjsonlogger.json",
    "platformdirs",
    "redis.asyncio",
    "falkordb.asyncio",
)


def _start() -> None:
    config = os.environ.pop("SUITE_COVERAGE_AFTER_IMPORTS", None)
    if config is None or importlib.util.find_spec("write_gate") is None or importlib.util.find_spec("coverage") is None:
        return
    for name in _UNMEASURED:
        with contextlib.suppress(ImportError):  # a part this environment lacks: its import, if any, is traced
            importlib.import_module(name)
    os.environ["COVERAGE_PROCESS_CONFIG"] = config  # as the .pth file reads it; this process's children inherit it
    import coverage

    coverage.process_startup()


_start()
