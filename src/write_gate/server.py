"""MCP wiring only: the tool table of a profile, one call path, and the transports."""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from pydantic import BaseModel, ValidationError

from write_gate import __version__
from write_gate.config import Settings
from write_gate.memory import MemoryService, WriterContext
from write_gate.model import ErrorCode, GateRejection, Rejected
from write_gate.runtime import open_gate
from write_gate.tools import PROFILES, Call, Runtime, ToolSpec, typed_specs

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Write Gate: every write to the shared knowledge graph is checked against a schema registry and stamped "
    "with provenance. Use canonical labels and registered relationship types (get_schema lists them, where "
    "offered); a rejection says why in error_code, message and details. Reads are paged: pass next_cursor back."
)


def _result(payload: BaseModel, is_error: bool, text: str | None = None) -> types.CallToolResult:
    data = payload.model_dump(mode="json", by_alias=True)
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=text if text is not None else json.dumps(data, ensure_ascii=False))
        ],
        structured_content=data,
        is_error=is_error,
    )


def _invalid_arguments(exc: ValidationError) -> Rejected:
    # Field paths and reasons only: the agent's values are not echoed back.
    problems = [{"field": ".".join(map(str, e["loc"])) or "(arguments)", "problem": e["msg"]} for e in exc.errors()]
    return Rejected(
        error_code=ErrorCode.INVALID_INPUT,
        message="the arguments do not match the tool's input schema",
        details={"problems": problems},
    )


async def call(
    spec: ToolSpec, runtime: Runtime, arguments: dict[str, Any] | None, context: Call
) -> types.CallToolResult:
    """Validate, run, and turn every outcome into a result: the server never answers with a crash."""
    try:
        request = spec.input_model.model_validate(arguments or {})
        result = await spec.handler(runtime, request, context)
        return _result(result, is_error=False, text=spec.text(result) if spec.text else None)
    except ValidationError as exc:
        return _result(_invalid_arguments(exc), is_error=True)
    except GateRejection as exc:
        return _result(exc.rejected, is_error=True)
    except Exception:
        logger.exception("tool %s failed", spec.name)
        rejected = Rejected(
            error_code=ErrorCode.INTERNAL_ERROR, message=f"{spec.name} failed inside the gate; see its log"
        )
        return _result(rejected, is_error=True)


def _client_name(ctx: Any) -> str | None:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    return getattr(info, "name", None) or None


def build_server(settings: Settings, *, profile: str = "gate", auto_migrate: bool = True) -> Server[Runtime]:
    static = {spec.name: spec for spec in PROFILES[profile]}
    generated = profile == "gate"  # typed tools are the gate profile's friendlier front door
    tables: dict[int, tuple[Any, dict[str, ToolSpec], types.ListToolsResult]] = {}

    def table(runtime: Runtime) -> tuple[dict[str, ToolSpec], types.ListToolsResult]:
        """The tools for the registry snapshot in force, built once per snapshot."""
        registry = runtime.gate.registry
        cached = tables.get(id(registry))
        if cached is None or cached[0] is not registry:
            methods = sorted(runtime.gate.provider.allowed_extraction_methods())
            typed = typed_specs(registry, methods) if generated else ()
            specs = static | {spec.name: spec for spec in typed}
            tables.clear()  # only the snapshot in force is worth keeping
            cached = tables[id(registry)] = (
                registry,
                specs,
                types.ListToolsResult(tools=[spec.to_mcp() for spec in specs.values()]),
            )
        return cached[1], cached[2]

    @asynccontextmanager
    async def lifespan(_server: Server[Runtime]) -> AsyncIterator[Runtime]:
        async with open_gate(settings, auto_migrate=auto_migrate) as gate:
            yield Runtime(gate=gate, memory=MemoryService(gate))

    async def list_tools(ctx: Any, _params: Any) -> types.ListToolsResult:
        return table(ctx.lifespan_context)[1]

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        runtime: Runtime = ctx.lifespan_context
        specs, _ = table(runtime)
        spec = specs.get(params.name)
        if spec is None:
            rejected = Rejected(
                error_code=ErrorCode.INVALID_INPUT,
                message=f"no tool named {params.name!r}",
                details={"tools": sorted(specs)},
            )
            return _result(rejected, is_error=True)
        writer = WriterContext(
            source=settings.memory_source or _client_name(ctx) or "unknown-client",
            extraction_method=settings.memory_extraction_method,
            reliability=settings.memory_reliability,
        )
        result = await call(spec, runtime, params.arguments, Call(writer=writer))
        if params.name == "refresh_schema_cache" and not result.is_error and set(table(runtime)[0]) != set(specs):
            await _tools_changed(ctx)
        return result

    return Server(
        "write-gate",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _tools_changed(ctx: Any) -> None:
    """Tell the client the tool list changed, so it lists again; a client that cannot hear it loses nothing."""
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # noqa: BLE001 - a notification must never fail the call that caused it
        logger.debug("could not send notifications/tools/list_changed", exc_info=True)


def initialization_options(server: Server[Runtime]) -> Any:
    return server.create_initialization_options(NotificationOptions(tools_changed=True))
