"""Which tools a session lists: the server's toolsets, those the agent's grant names, and those the session
enabled (enable_toolset), kept on the client's connection so other sessions' lists never change.

A connection of the 2026-07-28 protocol has no session (each request stands alone): there enable_toolset says so,
and `--toolsets` or a grant naming sets are the ways to list more.
"""

from collections.abc import Awaitable, Callable, Collection, Mapping

from mcp.server.connection import Connection
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from write_gate.access.agents import Agent, Grant
from write_gate.access.tool_selection import ToolSelection
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.toolsets import TOOLSETS
from write_gate.surface.discovery_tools import ToolsetEnabled, ToolsetListed, Toolsets
from write_gate.surface.tool_spec import ToolSpec

_ENABLED = "write_gate.toolsets"  # the key of a connection's enabled sets in its `state`


def enabled_on(connection: Connection) -> set[str]:
    """The sets this connection's session enabled (none yet: an empty set, kept)."""
    enabled: set[str] = connection.state.setdefault(_ENABLED, set())
    return enabled


def allows_toolset(grant: Grant, toolset: str, tools: Collection[ToolSpec]) -> bool:
    """A grant allows a set when it names it (or `*`), or allows one of its tools."""
    return (
        "*" in grant.tools or toolset in grant.tools or any(grant.allows_tool(t.name, t.group, toolset) for t in tools)
    )


class ToolsetLists:
    """A server's rule for what each session lists. `served`: the sets every agent is shown; `known`: the sets
    its profile has (typed among them in the gate profile, even before the registry generates a tool)."""

    def __init__(self, served: frozenset[str], known: frozenset[str], selection: ToolSelection) -> None:
        self.served = served
        self.known = known
        self.selection = selection

    def listed_sets(self, grant: Grant, connection: Connection) -> frozenset[str]:
        return self.served | grant.named_toolsets() | enabled_on(connection)

    def lists(self, spec: ToolSpec, grant: Grant, sets: Collection[str]) -> bool:
        """Whether a session with `sets` listed shows this tool to an agent of `grant`: one of its sets, or named
        outright (by the grant, or by WRITE_GATE_TOOLS), and allowed."""
        named = spec.name in grant.tools or self.selection.names(spec.name, spec.group, spec.label)
        return (spec.toolset in sets or named) and grant.allows_tool(spec.name, spec.group, spec.toolset)


class SessionToolsets:
    """list_toolsets and enable_toolset for one call: its agent, its connection, the tools offered in its space;
    `changed` tells this session (only) that its list changed."""

    def __init__(
        self,
        lists: ToolsetLists,
        specs: Mapping[str, ToolSpec],
        agent: Agent,
        connection: Connection,
        changed: Callable[[], Awaitable[None]],
    ) -> None:
        self._lists = lists
        self._specs = specs
        self._grant = agent.grant
        self._connection = connection
        self._changed = changed

    def _tools_of(self, toolset: str) -> list[ToolSpec]:
        return [spec for spec in self._specs.values() if spec.toolset == toolset]

    def _listed(self) -> set[str]:
        sets = self._lists.listed_sets(self._grant, self._connection)
        return {spec.name for spec in self._specs.values() if self._lists.lists(spec, self._grant, sets)}

    def toolsets(self) -> Toolsets:
        """The sets this agent may use, in the catalogue's order, with the tools it may call in each."""
        sets = self._lists.listed_sets(self._grant, self._connection)
        listed = []
        for name, toolset in TOOLSETS.items():
            tools = self._tools_of(name)
            if name not in self._lists.known or not allows_toolset(self._grant, name, tools):
                continue
            allowed = [t.name for t in tools if self._grant.allows_tool(t.name, t.group, name)]
            listed.append(ToolsetListed(name=name, description=toolset.description, tools=allowed, listed=name in sets))
        return Toolsets(toolsets=listed)

    async def enable(self, toolset: str) -> ToolsetEnabled:
        if toolset not in self._lists.known:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "not a toolset of this server: list_toolsets names them",
                field="toolset",
                toolsets=sorted(self._lists.known),
            )
        tools = self._tools_of(toolset)
        if not allows_toolset(self._grant, toolset, tools):
            raise GateRejection(
                ErrorCode.PERMISSION_DENIED, f"this agent may not use the toolset {toolset}", toolset=toolset
            )
        if self._connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                "this connection has no session to enable a toolset in (protocol "
                f"{self._connection.protocol_version}): ask the operator for --toolsets {toolset}",
                reason="no_session",
                toolset=toolset,
            )
        before = self._listed()
        enabled_on(self._connection).add(toolset)
        after = self._listed()
        if after != before:
            await self._changed()
        return ToolsetEnabled(toolset=toolset, tools=[t.name for t in tools if t.name in after])
