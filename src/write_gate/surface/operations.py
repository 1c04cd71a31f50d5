"""What a running server lends the console (surface/console): its call path, its services per space, the tools a
grant sees, and its agents file, so every page and action goes through what an MCP client's calls go through."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from write_gate.access.agents import Agent, LiveAgents
from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Telemetry
from write_gate.surface.tool_spec import Services, ToolSpec

# (agent, tool, arguments, space or None for the agent's default) -> the tool's result, as an MCP client gets it.
OperatorCall = Callable[[Agent, str, dict[str, Any] | None, str | None], Awaitable[types.CallToolResult]]


@dataclass(frozen=True)
class Operations:
    settings: Settings
    agents: LiveAgents | None  # None: no agents file (the console then trusts its operator, as stdio does)
    call: OperatorCall
    # (agent, space asked for or None) -> (the space, or None with spaces off; its services); GateRejection else.
    services: Callable[[Agent, str | None], tuple[str | None, Services]]
    offered: Callable[[Agent], list[ToolSpec]]
    telemetry: Telemetry
    sample_gauges: Callable[[], Awaitable[None]]
    # agent -> limit (max_calls_in_flight, read_budget) -> calls its fair share refused in this process.
    held_back: Callable[[], dict[str, dict[str, int]]]
