"""A tool as the server offers it: name, description, input/output models, MCP annotations, handler;
what a served gate holds for its tools, and what each call carries.

There is no raw Cypher tool in any profile, by design: every write goes through the gate.
"""

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from write_gate.access.agents import Agent
from write_gate.core.idempotency import KEY_ARGUMENT, MAX_KEY_LENGTH
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.toolsets import toolset_of
from write_gate.services.gate import Gate
from write_gate.services.hierarchy import HierarchySettings
from write_gate.services.memory import (
    MemoryService,
    WriterContext,
)
from write_gate.services.quarantine import Quarantine, Rerun
from write_gate.surface.tool_schemas import input_schema, output_schema

if TYPE_CHECKING:
    from write_gate.surface.discovery_tools import Discovery


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Services:
    """What a served gate holds for its tools: the gate, the memory profile's service, the hierarchy's
    settings, the quarantine of rejected calls and the call path its replay re-runs them through."""

    gate: Gate
    memory: MemoryService
    hierarchy: HierarchySettings = HierarchySettings(DEFAULT_HIERARCHY_TYPE, 100)
    quarantine: Quarantine | None = None
    rerun: Rerun | None = None
    change_settle_seconds: float = 1.0  # changes_since's horizon (core.change_feed)
    space: str = ""  # the space these serve (docs/fleets/spaces.md); the one graph's when spaces are off


# MCP progress for the call (`notifications/progress`); a no-op when the request carries no progressToken.
ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]


async def _no_progress(_progress: float, _total: float | None = None, _message: str | None = None) -> None:
    return None


@dataclass(frozen=True)
class Call:
    """Per call: the agent (identity and grant), the memory profile's provenance defaults, the call's
    progress channel, its session's toolsets, and when it arrived."""

    agent: Agent
    writer: WriterContext
    progress: ReportProgress = _no_progress
    discovery: "Discovery | None" = None  # the session's toolsets (list_toolsets, enable_toolset)
    # The call's arrival at the gate, `time.monotonic()`, taken as the server receives it: before its tool table,
    # admission and write guard (a replay reckons "at once" from it). None: a call the gate made itself (a replay's).
    arrived: float | None = None


Handler = Callable[[Services, Any, Call], Awaitable[BaseModel]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str | None  # None: the name says it (generated tools)
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    annotations: types.ToolAnnotations
    handler: Handler
    # The text content, where a profile's clients expect something other than the structured result as JSON.
    # It takes the handler's answer: an output_model (Any, as Handler's request, so each may name its own model).
    text: Callable[[Any], str] | None = None
    # The text is the structured result as JSON indented by two spaces, as JSON.stringify(x, null, 2) writes it
    # (the official memory server's reads), rather than on one line.
    indented: bool = False
    # The advertised input schema, where input_model's is rendered otherwise (a batch leaves its items undescribed).
    input_schema: dict[str, Any] | None = None
    # The registry label a generated tool writes (typed tools), for WRITE_GATE_TOOLS' `typed:<Label>`.
    label: str | None = None
    # A shorter input schema that refers to this tool's fields (update_npc's to add_npc's), for lists
    # that offer that tool too.
    brief: tuple[str, dict[str, Any]] | None = None
    # Changes the gate's own state rather than the graph (the `admin` group of grants and WRITE_GATE_TOOLS).
    admin: bool = False
    # A MemoryMesh tool (seed 000): its refusals carry MemoryMesh's error, context and suggestions beside the
    # gate's fields (core.mesh_errors).
    mesh: bool = False

    @property
    def group(self) -> str:
        """What grants and WRITE_GATE_TOOLS call it: from its annotations, so the two never disagree."""
        return "admin" if self.admin else "read" if self.annotations.read_only_hint else "write"

    @property
    def toolset(self) -> str | None:
        """The set it is listed in (core.toolsets); None only for a tool no set holds, which no test allows."""
        return toolset_of(self.name, generated=self.label is not None)

    def to_mcp(self, listed: Collection[str] = ()) -> types.Tool:
        """`listed`: the names of the tools offered beside it."""
        schema = self.input_schema or input_schema(self.input_model)
        if self.brief is not None and self.brief[0] in listed:
            schema = self.brief[1]
        if self.group != "read":  # every write and admin tool takes one (surface/write_guard.py)
            schema = with_idempotency_key(schema)
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schema,
            output_schema=output_schema(self.output_model),
            annotations=self.annotations,
        )


IDEMPOTENCY_KEY_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH}


def with_idempotency_key(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with the optional `idempotency_key` argument (docs/fleets/safe-retries.md)."""
    return {**schema, "properties": {**schema.get("properties", {}), KEY_ARGUMENT: IDEMPOTENCY_KEY_SCHEMA}}


def hints(*, read_only: bool = False, destructive: bool = False, idempotent: bool = True) -> types.ToolAnnotations:
    """Every hint stated, none left to its default (the defaults assume a destructive, open-world tool):
    as the official memory server states them, for its drop-in profile."""
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,  # the gate's graph is its whole world
    )


def lean_hints(*, read_only: bool = False, destructive: bool = False, idempotent: bool = True) -> types.ToolAnnotations:
    """The same hints in fewer bytes: a value equal to the specification's default is left out (read-only
    false, destructive true, idempotent false), and so are the two a read-only tool's clients ignore."""
    if read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        destructive_hint=None if destructive else False,
        idempotent_hint=True if idempotent else None,
        open_world_hint=False,
    )


READ = lean_hints(read_only=True)
