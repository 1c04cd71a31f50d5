"""Discovery on demand (the `discovery` toolset, listed in --dynamic-toolsets mode): an agent sees the toolsets it may
use and enables one for its own session, as the GitHub MCP server's dynamic toolsets do."""

from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.surface.tool_spec import READ, Call, NoArguments, Services, ToolSpec


class ToolsetListed(BaseModel):
    name: str
    description: str
    tools: list[str]  # those this agent may use, as offered here
    listed: bool  # in this session's tools/list now


class Toolsets(BaseModel):
    toolsets: list[ToolsetListed]


class EnableToolsetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    toolset: Annotated[str, Field(description="A name list_toolsets gave.")]


class ToolsetEnabled(BaseModel):
    status: Literal["enabled"] = "enabled"
    toolset: str
    tools: list[str]  # the set's tools this session now lists


class Discovery(Protocol):
    """One session's toolsets, as seen by one agent (surface/session_toolsets.py)."""

    def toolsets(self) -> Toolsets: ...

    async def enable(self, toolset: str) -> ToolsetEnabled: ...


def _discovery(call: Call) -> Discovery:
    if call.discovery is None:  # a call made without a session (a quarantine replay): none to change
        raise GateRejection(ErrorCode.INVALID_INPUT, "toolsets are a session's: this call has none")
    return call.discovery


async def _list(_services: Services, _request: NoArguments, call: Call) -> Toolsets:
    return _discovery(call).toolsets()


async def _enable(_services: Services, request: EnableToolsetRequest, call: Call) -> ToolsetEnabled:
    return await _discovery(call).enable(request.toolset)


# Both read-only: they change what this session is shown, never the graph or the gate.
LIST_TOOLSETS = ToolSpec(
    name="list_toolsets",
    title="List toolsets",
    description="The toolsets you may use: each one's tools, and whether this session lists them.",
    input_model=NoArguments,
    output_model=Toolsets,
    annotations=READ,
    handler=_list,
)


ENABLE_TOOLSET = ToolSpec(
    name="enable_toolset",
    title="Enable a toolset",
    description="Add a toolset's tools to this session's tools/list (tools/list_changed follows).",
    input_model=EnableToolsetRequest,
    output_model=ToolsetEnabled,
    annotations=READ,
    handler=_enable,
)


DISCOVERY_TOOLS = (LIST_TOOLSETS, ENABLE_TOOLSET)
