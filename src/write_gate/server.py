"""MCP wiring only: the tool table, one call path, and the transports."""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server import Server
from pydantic import BaseModel, ValidationError

from write_gate import __version__
from write_gate.config import Settings
from write_gate.gate import Gate
from write_gate.model import ErrorCode, GateRejection, Rejected
from write_gate.runtime import open_gate
from write_gate.tools import GATE_TOOLS, ToolSpec

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Write Gate: every write to the shared knowledge graph goes through write_node / write_relationship, "
    "which check the schema registry and stamp provenance. Use canonical labels and registered relationship "
    "types; a rejection says why in error_code, message and details."
)


def _result(payload: BaseModel, is_error: bool) -> types.CallToolResult:
    data = payload.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
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


async def call(spec: ToolSpec, gate: Gate, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Validate, run, and turn every outcome into a result: the server never answers with a crash."""
    try:
        request = spec.input_model.model_validate(arguments or {})
        return _result(await spec.handler(gate, request), is_error=False)
    except ValidationError as exc:
        return _result(_invalid_arguments(exc), is_error=True)
    except GateRejection as exc:
        return _result(exc.rejected, is_error=True)
    except Exception:
        logger.exception("tool %s failed", spec.name)
        return _result(
            Rejected(error_code=ErrorCode.INTERNAL_ERROR, message=f"{spec.name} failed inside the gate; see its log"),
            is_error=True,
        )


def build_server(settings: Settings, *, auto_migrate: bool = True) -> Server[Gate]:
    specs = {spec.name: spec for spec in GATE_TOOLS}
    listed = types.ListToolsResult(tools=[spec.to_mcp() for spec in GATE_TOOLS])

    @asynccontextmanager
    async def lifespan(_server: Server[Gate]) -> AsyncIterator[Gate]:
        async with open_gate(settings, auto_migrate=auto_migrate) as gate:
            yield gate

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = specs.get(params.name)
        if spec is None:
            rejected = Rejected(
                error_code=ErrorCode.INVALID_INPUT,
                message=f"no tool named {params.name!r}",
                details={"tools": sorted(specs)},
            )
            return _result(rejected, is_error=True)
        return await call(spec, ctx.lifespan_context, params.arguments)

    return Server(
        "write-gate",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
