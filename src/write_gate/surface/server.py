"""MCP wiring only: the tool table of a profile, one call path, and the transports."""

import dataclasses
import functools
import json
import logging
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from write_gate import __version__
from write_gate.access.agents import FULL, Agent, Grant, LiveAgents
from write_gate.access.tool_selection import ToolSelection
from write_gate.core.formula import method_schema
from write_gate.core.idempotency import KEY_ARGUMENT
from write_gate.core.json_arguments import boolean_for_number, decoded
from write_gate.core.mesh_errors import mesh_rejection
from write_gate.core.model import ErrorCode, GateRejection, Rejected, validation_problems
from write_gate.core.quarantine import rejected_calls
from write_gate.core.registry import RegistrySnapshot
from write_gate.core.toolsets import TYPED, served_toolsets
from write_gate.core.values import check_storable
from write_gate.engines import BackendUnavailable, traced_writes
from write_gate.services.gate import Gate
from write_gate.services.hierarchy import HierarchySettings
from write_gate.services.memory import MemoryService, WriterContext
from write_gate.services.off_loop import items_in, off_the_loop
from write_gate.services.quarantine import Quarantine
from write_gate.serving import heap
from write_gate.serving.assembly import formula_provider
from write_gate.serving.audit import Decision
from write_gate.serving.change_watcher import ChangeWatcher
from write_gate.serving.config import Settings
from write_gate.serving.gauges import sample_gauges
from write_gate.serving.spaces import Spaces, open_spaces
from write_gate.serving.telemetry import Metrics, Telemetry, tracing_from_environment
from write_gate.surface import http_auth, schema_resources, session_log
from write_gate.surface.admission import Admission
from write_gate.surface.call_limit import call_limit, call_limit_passed
from write_gate.surface.change_resources import AREA, CHANGES, ChangeResources, ChangeSubscriptions
from write_gate.surface.connections import Connections, connection_of
from write_gate.surface.console.app import console_mount, favicon_route
from write_gate.surface.direct_calls import DirectRoutes
from write_gate.surface.http_auth import AgentsTokenVerifier
from write_gate.surface.http_disconnects import CancelOnDisconnect
from write_gate.surface.http_security import public_url, transport_security, unlisted_wildcard_bind
from write_gate.surface.listen_streams import ListenStreams
from write_gate.surface.malformed import AnswerMalformedPosts
from write_gate.surface.mcp_context import GateContext
from write_gate.surface.mcp_spans import McpSpans
from write_gate.surface.metrics_endpoint import metrics_route
from write_gate.surface.operations import Operations
from write_gate.surface.profiles import PROFILES
from write_gate.surface.session_toolsets import SessionToolsets, ToolsetLists
from write_gate.surface.space_argument import take_space, with_space
from write_gate.surface.sse_events import EventLog, ResumableSessionManager
from write_gate.surface.tool_schemas import numeric_inputs, structured_inputs
from write_gate.surface.tool_spec import Call, Services, ToolSpec
from write_gate.surface.typed_tool_specs import typed_specs
from write_gate.surface.write_guard import REPLAYED_META, WriteGuard

logger = logging.getLogger(__name__)

# How long a client waits before reconnecting a dropped SSE stream (the SSE `retry` field).
SSE_RETRY_MS = 2_000


def instructions(lists_schema: bool) -> str:
    """The server's instructions; `lists_schema`: get_schema is among the tools (not in the memory profile)."""
    where = " (get_schema lists them)" if lists_schema else ""
    return (
        "Write Gate: every write to the shared knowledge graph is checked against a schema registry and stamped "
        f"with provenance. Use canonical labels and registered relationship types{where}; a rejection says why "
        "in error_code, message and details. Reads are paged: pass next_cursor back."
    )


def _result(
    payload: BaseModel, is_error: bool, text: str | None = None, indent: int | None = None
) -> types.CallToolResult:
    data = payload.model_dump(mode="json", by_alias=True)
    if text is None:
        text = json.dumps(data, ensure_ascii=False, indent=indent)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=is_error,
    )


def _invalid_arguments(exc: ValidationError) -> Rejected:
    return _schema_mismatch(validation_problems(exc, "(arguments)"))


def _schema_mismatch(problems: list[dict[str, Any]]) -> Rejected:
    return Rejected(
        error_code=ErrorCode.INVALID_INPUT,
        message="the arguments do not match the tool's input schema",
        details={"problems": problems},
    )


def check_size(arguments: dict[str, Any], settings: Settings) -> None:
    """The call's size and its batches, before anything else looks at it."""
    size = len(json.dumps(arguments, ensure_ascii=False, default=str).encode())
    if size > settings.max_request_bytes:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"the arguments are {size} bytes, over the limit",
            limit="max_request_bytes",
            max=settings.max_request_bytes,
        )
    for name, value in arguments.items():
        if isinstance(value, list) and len(value) > settings.max_batch_items:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"{name} has {len(value)} items, over the limit",
                limit="max_batch_items",
                max=settings.max_batch_items,
                field=name,
            )


def _say_applied(exc: GateRejection, reached: bool) -> None:
    """A failed statement that never reached the engine says `applied: false` of itself; the call's answer says
    "unknown" where an earlier write of the same call was applied."""
    if reached and exc.rejected.details.get("applied") is False:
        exc.rejected.details["applied"] = "unknown"


async def call(
    spec: ToolSpec, services: Services, arguments: dict[str, Any] | None, context: Call, settings: Settings
) -> types.CallToolResult:
    """Validate, run, and turn every outcome into a result: the server never answers with a crash."""
    try:
        arguments = decoded(arguments or {}, structured_inputs(spec.input_model))  # JSON text read, where due
        if (name := boolean_for_number(arguments, numeric_inputs(spec.input_model))) is not None:
            problem = {"field": name, "problem": "Input should be a number, not true or false"}
            return _result(_schema_mismatch([problem]), is_error=True)
        check_storable(arguments)  # first: what follows encodes the arguments
        check_size(arguments, settings)
        request = spec.input_model.model_validate(arguments)
        limit = call_limit(bool(spec.annotations.read_only_hint), settings.call_limit_seconds)
        with anyio.move_on_after(limit):
            with traced_writes() as writes:
                try:
                    result = await spec.handler(services, request, context)
                except GateRejection as exc:
                    _say_applied(exc, writes.reached)
                    raise

            def rendered() -> types.CallToolResult:
                text = spec.text(result) if spec.text else None
                return _result(result, is_error=False, text=text, indent=2 if spec.indented else None)

            return await off_the_loop(rendered, items_in(result))  # a large answer is serialised off the loop
        # Only a read's limit is ever passed.
        return _result(call_limit_passed(spec.name, settings.call_limit_seconds), is_error=True)
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


def _as_mesh(result: types.CallToolResult) -> types.CallToolResult:
    """A MemoryMesh tool's refusal, whichever part of the path refused it (the grant, admission, the guard, the
    call), with MemoryMesh's fields beside the gate's."""
    structured = result.structured_content
    if not result.is_error or not isinstance(structured, dict) or "error" in structured:
        return result
    try:
        rejected = Rejected.model_validate(structured)
    except ValidationError:  # not the gate's refusal (none is otherwise): answered as it is, never a crash
        return result
    mesh = _result(mesh_rejection(rejected), is_error=True)
    return result.model_copy(update={"content": mesh.content, "structured_content": mesh.structured_content})


def _client_name(ctx: GateContext) -> str | None:
    params = ctx.session.client_params  # None on 2026-07-28 connections, which have no handshake
    return (params.client_info.name or None) if params is not None else None


def _access_token(ctx: GateContext) -> AccessToken | None:
    """The verified bearer token of an HTTP request (None over stdio)."""
    user = ctx.request.scope.get("user") if ctx.request is not None else None
    return user.access_token if isinstance(user, AuthenticatedUser) else get_access_token()


NO_GRANT = Grant(tools=(), labels=(), relationship_types=())  # an agent the agents file does not know, over HTTP


class Identities:
    """Who the caller is: the verified token's agent over HTTP; WRITE_GATE_AGENT or the client's name
    from the handshake over stdio. The agents file, as it is at each call, gives the grant; an agent it does
    not list is trusted fully over stdio (the operator started the process) and sees nothing over HTTP."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.agents = LiveAgents(settings.agents_file) if settings.agents_file else None

    def agent(self, ctx: GateContext) -> Agent:
        token = _access_token(ctx)
        if token is not None:
            known = self.agents.by_id(token.client_id) if self.agents else None
            return known or Agent(token.client_id, NO_GRANT)
        return self._named(self.settings.agent or _client_name(ctx) or "unknown-client")

    def _named(self, name: str) -> Agent:
        """An agent known by name (stdio): the agents file's, or trusted fully when the file does not list it."""
        known = self.agents.by_id(name) if self.agents else None
        return known or Agent(name, FULL)

    def caller(self, ctx: GateContext) -> Callable[[], Agent]:
        """The request's caller, looked up again at each call in the agents file as it is then: for what outlives
        the request (a change subscription, a listen stream). Over HTTP by its bearer token, so a removed or
        re-keyed agent is nobody; over stdio by its name, as `agent` does."""
        token = _access_token(ctx)
        if token is None:
            return functools.partial(self._named, self.settings.agent or _client_name(ctx) or "unknown-client")
        agents, bearer, client_id = self.agents, token.token, token.client_id
        return lambda: (agents.by_token(bearer) if agents else None) or Agent(client_id, NO_GRANT)

    def listed(self, agent_id: str) -> bool:
        """Whether the agents file names this agent (only such names label metrics)."""
        return self.agents is not None and self.agents.by_id(agent_id) is not None

    def replaying(self, agent_id: str) -> Agent:
        """The agent a quarantined call is replayed as: its grant in the agents file as it is now; with no file,
        fully trusted (as stdio trusts it); one the file no longer lists gets no grant (PERMISSION_DENIED)."""
        if self.agents is None:
            return Agent(agent_id, FULL)
        return self.agents.by_id(agent_id) or Agent(agent_id, NO_GRANT)


class GateServer(Server[Services]):
    """The SDK's server, whose capabilities say `tools.listChanged` on every transport: a refresh that changes
    the generated tools sends `notifications/tools/list_changed`, over stdio and HTTP alike."""

    # What /health, the space look-ups and the HTTP token verifier read: the default space's services and the
    # spaces while the lifespan runs (None outside it), and the agents file's identities (set by build_server).
    services: Services | None = None
    spaces: Spaces | None = None
    identities: Identities
    operations: Operations  # the console's way in (surface/console)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's, except that the resource list never changes: on 2026-07-28 connections the SDK says
        `listChanged` for every list once `subscriptions/listen` is served; the gate's listen streams carry the
        tool list's changes and the change resources' updates only (listen_streams)."""
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        if capabilities.resources is not None:
            capabilities.resources.list_changed = False
        return capabilities


def build_server(
    settings: Settings, *, profile: str = "gate", auto_migrate: bool = True, telemetry: Telemetry | None = None
) -> GateServer:
    """`telemetry`: the metrics and tracing to keep (serving/telemetry.py); none by default."""
    telemetry = telemetry or Telemetry()
    # With JSON answers over HTTP a call's notifications go to its session's GET stream (stateless: there is none)
    json_answers = settings.http_response == "json" and not settings.stateless
    # The memory and mesh profiles stamp their writes with the configured method: one the provider refuses stops
    # the start.
    formula_provider(settings, stamps=settings.memory_extraction_method if profile in ("memory", "mesh") else None)
    selection = ToolSelection.parse(settings.tools)
    static = {spec.name: spec for spec in PROFILES[profile] if selection.offers(spec.name, spec.group)}
    taken = {spec.name for spec in PROFILES[profile]}
    generated = profile in ("gate", "mesh")  # typed tools: the gate's friendlier front door, MemoryMesh's own tools
    # What each session lists (docs/tools/toolsets.md): the profile's default sets and those asked for, the sets an
    # agent's grant names, and those its session enabled; WRITE_GATE_TOOLS and the grant still decide what may be
    # called.
    known_sets = {spec.toolset for spec in PROFILES[profile] if spec.toolset} | ({TYPED} if generated else set())
    served_sets = served_toolsets(profile, settings.toolsets, settings.dynamic_toolsets)
    lists = ToolsetLists(served_sets, frozenset(known_sets), selection)
    identities = Identities(settings)
    telemetry.listing(identities.listed)
    metrics = telemetry.metrics
    # Limits per agent and idempotency keys, before every write and admin call; rate buckets in the default space's
    # graph, so an agent's limit is one across spaces (and across gates on that graph).
    guard = WriteGuard(settings, buckets=lambda _services: spaced[settings.default_space].gate.backend)

    def held(agent_id: str, limit: str) -> None:
        if metrics is not None:
            metrics.held_back.labels(telemetry.agent_label(agent_id), limit).inc()

    # A fair share per listed agent in this process (surface/admission.py): calls in flight and a read budget.
    admission = Admission(settings, identities.listed, held)

    async def run(spec: ToolSpec, services: Services, arguments: dict[str, Any], context: Call) -> types.CallToolResult:
        return await call(spec, services, arguments, context, settings)

    tables: dict[int, tuple[RegistrySnapshot | None, dict[str, ToolSpec], types.ListToolsResult]] = {}
    spaced: dict[str, Services] = {}  # each space's services, while the server runs (one without spaces: one)

    def table(services: Services) -> tuple[dict[str, ToolSpec], types.ListToolsResult]:
        """The tools for the registry snapshot in force, built once per snapshot."""
        registry = services.gate.snapshot  # None until the registry loads: the static tools only
        cached = tables.get(id(registry))
        if cached is None or cached[0] is not registry:
            methods = method_schema(services.gate.provider)
            mesh_answers = profile == "mesh"
            typed = (
                typed_specs(registry, methods, mesh_answers=mesh_answers) if generated and registry is not None else ()
            )
            # A label whose typed tools would take a profile tool's name (`SAVED_SEARCH`'s update_saved_search)
            # gets none: a registry never replaces the gate's own tools.
            clashing = {spec.label for spec in typed if spec.name in taken}
            typed = tuple(spec for spec in typed if spec.label not in clashing)
            specs = static | {spec.name: spec for spec in typed if selection.offers(spec.name, spec.group, spec.label)}
            if len(tables) >= len(spaced):
                tables.clear()  # only the snapshots in force (one per space at most) are worth keeping
            cached = tables[id(registry)] = (
                registry,
                specs,
                types.ListToolsResult(tools=[spec.to_mcp(specs) for spec in specs.values()]),
            )
        return cached[1], cached[2]

    connections = Connections()  # the clients that listed or called tools, until each disconnects
    subscriptions = ChangeSubscriptions()
    changes = ChangeResources(
        subscriptions, identities.caller, offered="changes_since" in static, in_space=lambda a, s: in_space(a, s)
    )
    listens = ListenStreams(changes)  # the 2026-07-28 protocol's subscriptions/listen streams
    watchers: dict[str, ChangeWatcher] = {}  # each space's, while the server runs

    # The registry version each gate last told clients of: a change its poll and a refresh_schema_cache both noticed
    # is told once per gate (several spaces' gates on one registry still tell one each).
    told: dict[int, int | None] = {}

    async def registry_changed(gate: Gate) -> None:
        """A new registry snapshot on `gate` (a load through another gate, the CLI, a refresh): clients list again."""
        version = gate.snapshot.version if gate.snapshot is not None else None
        if id(gate) in told and told[id(gate)] == version:
            return
        told[id(gate)] = version
        await connections.tools_changed()
        await listens.tools_changed()

    async def tell_changed(labels: Iterable[str], space: str) -> None:
        """A change in `space`: the subscribed sessions and the listen streams whose area it touched."""
        await subscriptions.notify(labels, space)
        await listens.changed(labels, space)

    def listening(space: str) -> bool:
        return subscriptions.listening(space) or listens.listening(space)

    @asynccontextmanager
    async def lifespan(_server: Server[Services]) -> AsyncIterator[Services]:
        async with open_spaces(
            settings,
            auto_migrate=auto_migrate,
            keep_loading=True,
            on_registry_change=registry_changed if generated else None,
            telemetry=telemetry,
        ) as spaces:
            hierarchy = HierarchySettings(settings.hierarchy_type, settings.hierarchy_max_depth)
            for name, gate in spaces.gates.items():
                quarantine = Quarantine(gate, settings.quarantine_max_entries, settings.max_request_bytes)
                space = Services(
                    gate=gate,
                    memory=MemoryService(gate),
                    hierarchy=hierarchy,
                    quarantine=quarantine,
                    change_settle_seconds=settings.change_settle_seconds,
                    space=name,
                )
                spaced[name] = dataclasses.replace(space, rerun=functools.partial(rerun, space))
                # Each space's history is its own graph's: one watcher each, telling that space's subscribers.
                watchers[name] = ChangeWatcher(
                    gate.backend.read,
                    settings.change_poll_seconds,
                    functools.partial(tell_changed, space=name),
                    functools.partial(listening, name),
                )
            services = spaced[settings.default_space]
            server.services = services  # for /health
            server.spaces = spaces
            heap.settle_after_start()  # what startup built, left out of the collector's walks (serving/heap.py)
            try:
                async with anyio.create_task_group() as tasks:
                    for watcher in watchers.values():
                        tasks.start_soon(watcher.run)
                    yield services  # the default space's: what a call works in unless the agent's grant says otherwise
                    tasks.cancel_scope.cancel()
            finally:
                listens.close()
                server.services = server.spaces = None
                spaced.clear()
                watchers.clear()

    def space_of(agent: Agent, requested: object | None = None) -> str | None:
        """The space the call works in (None: spaces are off); SPACE_NOT_GRANTED as a GateRejection."""
        spaces: Spaces | None = server.spaces
        return spaces.space_for(agent.grant, requested) if spaces is not None and spaces.enabled else None

    def space_services(ctx: GateContext, agent: Agent, requested: object | None = None) -> Services:
        space = space_of(agent, requested)
        return ctx.lifespan_context if space is None else spaced[space]

    def pick_space(
        ctx: GateContext, agent: Agent, arguments: dict[str, Any] | None
    ) -> tuple[str | None, Services, dict[str, Any] | None, GateRejection | None]:
        """The space a call works in and its services, its arguments without `space`, and why it may not."""
        if not settings.spaces:
            return None, ctx.lifespan_context, arguments, None  # as sent: no tool knows a `space` argument
        requested, rest = take_space(arguments)
        try:
            space = space_of(agent, requested)
        except GateRejection as exc:
            return None, ctx.lifespan_context, rest, exc
        return space, ctx.lifespan_context if space is None else spaced[space], rest, None

    def spaces_of(agent: Agent) -> list[str]:
        spaces: Spaces | None = server.spaces
        return spaces.granted(agent.grant) if spaces is not None else []

    def in_space(agent: Agent, space: str) -> bool:
        """Whether the agent may still work in `space` (always, with spaces off)."""
        spaces: Spaces | None = server.spaces
        return spaces is None or not spaces.enabled or space in spaces.granted(agent.grant)

    def in_agent_space(ctx: GateContext) -> GateContext:
        """The request as seen from the agent's default space (resources read the space the agent works in)."""
        if not settings.spaces:
            return ctx
        try:
            services = space_services(ctx, identities.agent(ctx))
        except GateRejection as exc:
            raise MCPError(types.INVALID_PARAMS, exc.rejected.message) from None
        return dataclasses.replace(ctx, lifespan_context=services)

    async def list_resources(
        ctx: GateContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = await schema_resources.list_resources(ctx, params)
        return types.ListResourcesResult(resources=[*listed.resources, CHANGES])

    async def list_templates(
        ctx: GateContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed = await schema_resources.list_templates(ctx, params)
        return types.ListResourceTemplatesResult(resource_templates=[*listed.resource_templates, AREA])

    async def read_resource(ctx: GateContext, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        ctx = in_agent_space(ctx)
        return await changes.read(ctx, params.uri) or await schema_resources.read_resource(ctx, params)

    async def subscribe(ctx: GateContext, params: types.SubscribeRequestParams) -> types.EmptyResult:
        return await changes.subscribe(in_agent_space(ctx), params)

    async def unsubscribe(ctx: GateContext, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        return await changes.unsubscribe(in_agent_space(ctx), params)

    async def listen(
        ctx: GateContext, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await listens.listen(in_agent_space(ctx), params)

    async def complete(ctx: GateContext, params: types.CompleteRequestParams) -> types.CompleteResult:
        return await schema_resources.complete(in_agent_space(ctx), params)

    async def list_tools(ctx: GateContext, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        connections.add(ctx)
        agent = identities.agent(ctx)
        grant = agent.grant
        try:
            services = space_services(ctx, agent)  # the typed tools of the agent's default space's registry
        except GateRejection:
            services = ctx.lifespan_context  # no space to work in: every call says so
        specs, listed = table(services)
        sets = lists.listed_sets(grant, connection_of(ctx))
        tools = [tool for tool in listed.tools if lists.lists(specs[tool.name], grant, sets)]
        if len(tools) < len(listed.tools):  # some are not listed: a brief schema must not refer to one of them
            names = {tool.name for tool in tools}
            tools = [specs[tool.name].to_mcp(names) if specs[tool.name].brief else tool for tool in tools]
        if len(spaces_of(agent)) > 1:  # only an agent with a choice of spaces is offered the `space` argument
            tools = [with_space(tool) for tool in tools]
        return types.ListToolsResult(tools=tools)

    async def list_changed(ctx: GateContext) -> None:
        """`notifications/tools/list_changed` to this session alone, on the stream of the request that changed it
        (with JSON answers, on the session's GET stream: session_log.call_scoped)."""
        scoped = session_log.call_scoped(ctx, json_answers)
        notification = types.ToolListChangedNotification()
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id if scoped else None)

    def writer_for(agent: Agent, client: str | None) -> WriterContext:
        return WriterContext(
            source=settings.memory_source or client or agent.id,
            extraction_method=settings.memory_extraction_method,
            reliability=settings.memory_reliability,
        )

    async def rerun(
        services: Services, tool: str, arguments: dict[str, Any], agent_id: str, source: str | None
    ) -> tuple[bool, dict[str, Any]]:
        """A quarantined call, through the call path of a fresh one, as its agent with its grant of now."""
        agent = identities.replaying(agent_id)
        spec = table(services)[0].get(tool)
        decision = Decision(agent.id, tool)
        if spec is None:
            result = _result(Rejected(error_code=ErrorCode.INVALID_INPUT, message=f"{tool} is not offered"), True)
        elif not agent.grant.allows_tool(spec.name, spec.group, spec.toolset):
            message = f"this agent may not use {tool}"
            result = _result(Rejected(error_code=ErrorCode.PERMISSION_DENIED, message=message), is_error=True)
        else:
            context = Call(agent=agent, writer=writer_for(agent, source))
            result = await call(spec, services, arguments, context, settings)
        decision.done(result.structured_content, bool(result.is_error))
        return bool(result.is_error), result.structured_content or {}

    async def perform(
        agent: Agent,
        spec: ToolSpec,
        specs: dict[str, ToolSpec],
        services: Services,
        space: str | None,
        arguments: dict[str, Any] | None,
        refused: GateRejection | None,
        client: str | None,
        progress: Any = None,
        discovery: Any = None,
        arrived: float | None = None,
    ) -> types.CallToolResult:
        """One call of a known tool, whoever asks (an MCP client, the console): the grant, the space, the guard,
        the call; then its decision log, the change feed's nudge, the quarantine and the metrics. `arrived`: the
        call's arrival, `time.monotonic()` (now, if not given)."""
        arrived = time.monotonic() if arrived is None else arrived
        started = time.perf_counter()
        decision = Decision(agent.id, spec.name, space)
        if not agent.grant.allows_tool(spec.name, spec.group, spec.toolset):
            message = f"this agent may not use {spec.name}"
            result = _result(Rejected(error_code=ErrorCode.PERMISSION_DENIED, message=message), is_error=True)
        elif refused is not None:  # a space the grant does not cover
            result = _result(refused.rejected, is_error=True)
        else:
            writer = writer_for(agent, client)
            context = Call(agent, writer, discovery=discovery, arrived=arrived)
            if progress is not None:
                context = dataclasses.replace(context, progress=progress)
            try:
                result = await admission.call(
                    agent, spec.group == "read", lambda: guard.call(spec, services, arguments, context, run)
                )
            except anyio.get_cancelled_exc_class():
                # The client gave up (or its stream or pipe closed): the call's work, engine statement included,
                # stops here. A keyed write had its outcome stored first (write_guard shields it).
                decision.cancelled()
                if metrics is not None:
                    metrics.cancelled(spec.name, telemetry.agent_label(agent.id))
                raise
            # A refresh that changed the tools tells clients (once: the registry's poll may have told them already).
            refreshed = spec.name == "refresh_schema_cache" and not result.is_error
            if refreshed and set(table(services)[0]) != set(specs):
                await registry_changed(services.gate)
        if spec.mesh:
            result = _as_mesh(result)
        is_read = spec.group == "read"
        if not is_read:
            decision.done(result.structured_content, bool(result.is_error))
            if (watcher := watchers.get(services.space)) is not None:  # subscribers hear this gate's writes at once
                watcher.nudge()
        replayed = bool(result.meta and result.meta.get(REPLAYED_META))  # kept, if at all, when it first ran
        # An agent's write only: an admin call (an import, an archive, a backup) is an operator's, answered whole.
        if spec.group == "write" and services.quarantine is not None and not replayed:
            answer = result.structured_content or {}
            # Kept without its idempotency_key (a replay is a new attempt, not a repeat of the first) or its space
            # (it is kept in that space, where a replay runs it).
            kept = {k: v for k, v in (arguments or {}).items() if k != KEY_ARGUMENT}
            rejections = rejected_calls(spec.name, kept, answer, bool(result.is_error), spec.label)
            await services.quarantine.keep(rejections, agent.id, settings.memory_source or client)
        if metrics is not None:
            code = (result.structured_content or {}).get("error_code")
            seconds = time.perf_counter() - started
            label = telemetry.agent_label(agent.id)
            metrics.call(spec.name, label, seconds, bool(result.is_error), code, replayed)
        return result

    async def call_tool(ctx: GateContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        # First: what follows (a session's first call builds its tool table) may take long on a loaded machine.
        arrived = time.monotonic()
        connections.add(ctx)
        agent = identities.agent(ctx)
        space, services, arguments, refused = pick_space(ctx, agent, params.arguments)
        specs, _ = table(services)
        spec = specs.get(params.name)
        if spec is None:
            # A protocol error, as the MCP specification has it for tools/call of an unknown tool.
            Decision(agent.id, params.name, space).done({"error_code": ErrorCode.INVALID_INPUT.value}, True)
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        client = _client_name(ctx)
        discovery = SessionToolsets(lists, specs, agent, connection_of(ctx), functools.partial(list_changed, ctx))
        scoped = session_log.call_scoped(ctx, json_answers)
        progress = functools.partial(session_log.report_progress, ctx, scoped)
        result = await perform(
            agent, spec, specs, services, space, arguments, refused, client, progress, discovery, arrived
        )
        structured = result.structured_content or {}
        is_read = spec.group == "read"
        level = session_log.decision_level(is_read, bool(result.is_error), structured.get("error_code"))
        data = session_log.decision_data(agent.id, params.name, structured, bool(result.is_error))
        await session_log.send_decision(ctx, level, data, scoped)
        return result

    def served() -> Services:
        services: Services | None = server.services
        if services is None:
            raise GateRejection(ErrorCode.BACKEND_UNAVAILABLE, "the gate is starting: try again in a moment")
        return services

    def services_for(agent: Agent, requested: str | None = None) -> tuple[str | None, Services]:
        """The space an operator's call works in (the grant's default unless one is asked for) and its services;
        SPACE_NOT_GRANTED as a GateRejection."""
        default = served()
        space = space_of(agent, requested)
        return space, default if space is None else spaced[space]

    async def operate(
        agent: Agent, tool: str, arguments: dict[str, Any] | None, space: str | None = None, client: str = "console"
    ) -> types.CallToolResult:
        """A tool call made in process on behalf of `agent` (the console's actions): the path an MCP client's
        call takes, with the same grant, guard, history, quarantine and metrics."""
        try:
            picked, services = services_for(agent, space)
        except GateRejection as exc:
            return _result(exc.rejected, is_error=True)
        specs, _ = table(services)
        spec = specs.get(tool)
        if spec is None:
            return _result(Rejected(error_code=ErrorCode.INVALID_INPUT, message=f"{tool} is not offered"), True)
        return await perform(agent, spec, specs, services, picked, arguments, None, client)

    def offered(agent: Agent) -> list[ToolSpec]:
        """The tools this agent sees in its default space (what tools/list answers it, less the `space` argument)."""
        try:
            _, services = services_for(agent)
        except GateRejection:
            return []
        specs, _ = table(services)
        return [spec for spec in specs.values() if agent.grant.allows_tool(spec.name, spec.group, spec.toolset)]

    async def gauges() -> None:
        """The metrics that are read from the graph rather than counted: sampled at each scrape."""
        if metrics is not None:
            await sample_gauges(metrics, {name: services.gate for name, services in spaced.items()})

    with warnings.catch_warnings():
        # MCP logging is deprecated from protocol 2026-07-28 on, where requests opt in per call; clients of the
        # handshake-era protocols (every released client today) still set their level with logging/setLevel.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = GateServer(
            "write-gate",
            version=__version__,
            title="Write Gate",
            description="Schema-gated writes with computed provenance to a shared knowledge graph.",
            instructions=instructions("get_schema" in static),
            lifespan=lifespan,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
            on_subscriptions_listen=listen,
            on_completion=complete,
            on_set_logging_level=session_log.set_level,
        )
    # The SDK's own span middleware uses the process-wide tracer; the gate's uses the one it was given, and none
    # at all when tracing is off.
    server.middleware = [McpSpans(telemetry.tracing)] if telemetry.tracing is not None else []
    server.services = server.spaces = None
    server.identities = identities  # the HTTP token verifier reads the same file
    server.operations = Operations(  # the console's way in (surface/console)
        settings=settings,
        agents=identities.agents,
        call=operate,
        services=services_for,
        offered=offered,
        telemetry=telemetry,
        sample_gauges=gauges,
        held_back=lambda: admission.shares.held_back,
    )
    return server


def registry_health(gate: Gate) -> dict[str, Any]:
    """The registry's part of /health: loaded or not, and why not."""
    snapshot = gate.snapshot
    if snapshot is None:
        error = gate.load_error.rejected.message if gate.load_error else "not loaded yet"
        return {"loaded": False, "error": error}
    return {
        "loaded": True,
        "version": snapshot.version,
        "node_labels": len(snapshot.all_canonical_labels()),
        "relationship_types": len(snapshot.all_relationship_types()),
    }


async def gate_health(gate: Gate) -> tuple[str, dict[str, Any]]:
    """A gate's engine (reachable or not) and registry, for /health."""
    try:
        await gate.backend.ping()
        engine = "reachable"
    except BackendUnavailable:
        engine = "unreachable"
    return engine, registry_health(gate)


def initialization_options(server: Server[Services]) -> InitializationOptions:
    return server.create_initialization_options()


# --- streamable HTTP: bearer tokens, Host/Origin checks, idle sessions, /health --------------------------


def served_telemetry(settings: Settings, *, metrics: bool) -> Telemetry:
    """What a served gate keeps for monitoring: metrics when asked for, traces when OpenTelemetry is configured."""
    return Telemetry(Metrics() if metrics else None, tracing_from_environment())


def http_app(
    settings: Settings,
    *,
    profile: str = "gate",
    auto_migrate: bool = True,
    require_auth: bool = True,
    telemetry: Telemetry | None = None,
) -> Starlette:
    """The gate over streamable HTTP at /mcp. With an agents file every request needs a bearer token
    (401 naming the protected-resource metadata without a known one); `GET /health` answers without one.
    Without auth (`require_auth=False`, `--no-auth`) there must be no agents file: no request needs a token.
    Built from the SDK's parts rather than `Server.streamable_http_app`, whose auth would advertise an OAuth
    authorization server the gate does not have (see http_auth). Beside it: /metrics (surface/metrics_endpoint)
    and the console at /console (surface/console), each as the settings say."""
    if settings.agents_file is not None and not require_auth:
        # One rule: without auth no request needs a token and nobody logs in to the console; an agents file
        # would quietly bring both back, so the two are not served together.
        raise ValueError(
            f"--no-auth serves without tokens, but WRITE_GATE_AGENTS_FILE is set ({settings.agents_file}), which "
            "requires them: unset it to serve without auth, or drop --no-auth"
        )
    telemetry = telemetry or served_telemetry(settings, metrics=settings.metrics)
    server = build_server(settings, profile=profile, auto_migrate=auto_migrate, telemetry=telemetry)
    agents: LiveAgents | None = server.identities.agents
    if agents is None and require_auth:
        raise ValueError(
            "HTTP needs WRITE_GATE_AGENTS_FILE (agents and their tokens); "
            "`write-gate agents add NAME` creates one, --no-auth serves without (development only)"
        )
    if unlisted_wildcard_bind(settings):
        logger.warning(
            "bound to %s with no WRITE_GATE_ALLOWED_HOSTS: only requests addressed to localhost pass (others get "
            "421); list the host names agents use to reach the gate",
            settings.host,
        )
    if settings.stateless and settings.dynamic_toolsets:
        raise ValueError(
            "--stateless serves each request on its own, so a toolset enabled with enable_toolset would be gone by "
            "the next call: drop --dynamic-toolsets (or WRITE_GATE_DYNAMIC_TOOLSETS), or serve with sessions"
        )
    if settings.stateless:
        logger.info(
            "stateless (--stateless): every request is served on its own, by whichever replica gets it. Given up: "
            "sessions and their GET streams, resources/subscribe and notifications outside a call (tools/list_changed, "
            "resources/updated), resumption, a session's logging level and enabled toolsets; follow changes by "
            "polling changes_since"
        )
    json_answers = settings.http_response == "json"
    if json_answers and not settings.stateless:  # a session's calls answered in their POSTs' tasks (direct_calls)
        server.middleware = [*server.middleware, DirectRoutes(server)]
    if json_answers:
        logger.info(
            "answering calls as application/json (WRITE_GATE_HTTP_RESPONSE=json): a call's progress and log "
            "messages go to the session's GET stream, and are lost to a client without one"
        )
    sessions = ResumableSessionManager(
        app=server,
        # Streams are primed (an id, empty data) and resumable with Last-Event-ID; `retry` paces reconnects. With
        # JSON answers only the GET stream is an event stream (and resumable).
        events=EventLog(),
        json_response=json_answers,
        stateless=settings.stateless,
        retry_interval=SSE_RETRY_MS,
        security_settings=transport_security(settings),
        session_idle_timeout=settings.session_idle_seconds,
        max_sessions=settings.max_sessions,
        # The transport's own hard stop, above the gate's per-call limit (which answers INVALID_INPUT).
        max_request_body_size=2 * settings.max_request_bytes,
    )

    async def health(_request: Request) -> JSONResponse:
        services = server.services
        if services is None:
            return JSONResponse({"status": "starting", "version": __version__}, status_code=503)
        engine, registry = await gate_health(services.gate)
        healthy = engine == "reachable" and registry["loaded"]
        body: dict[str, Any] = {
            "status": "ok" if healthy else "degraded",
            "engine": engine,
            "backend": settings.backend.value,
            "registry": registry,
            "version": __version__,
        }
        spaces: Spaces | None = server.spaces
        if spaces is not None and spaces.enabled:  # each space's engine connection and registry, by name
            body["spaces"] = {}
            for name, gate in spaces.gates.items():
                space_engine, space_registry = await gate_health(gate)
                body["spaces"][name] = {"engine": space_engine, "registry": space_registry}
                healthy = healthy and space_engine == "reachable" and space_registry["loaded"]
            body["status"] = "ok" if healthy else "degraded"
        return JSONResponse(body, status_code=200 if healthy else 503)

    # A call whose client closed its stream is cancelled (http_disconnects); a malformed body is answered first.
    streams = CancelOnDisconnect(StreamableHTTPASGIApp(sessions))
    endpoint: ASGIApp = AnswerMalformedPosts(streams, max_body=2 * settings.max_request_bytes)
    routes: list[BaseRoute] = [Route("/health", health, methods=["GET"])]
    operations: Operations = server.operations
    security = TransportSecurityMiddleware(transport_security(settings))
    if telemetry.metrics is not None:
        routes.append(metrics_route(operations, security, agents))
    if settings.console:
        routes += [console_mount(operations, security, public_url(settings)), favicon_route()]
    middleware = []
    if agents is not None:
        public = public_url(settings)
        endpoint = http_auth.requiring_token(endpoint, public)
        routes += http_auth.routes(public)
        middleware = http_auth.middleware(AgentsTokenVerifier(agents))
    return Starlette(
        routes=[Route(http_auth.MCP_PATH, endpoint=endpoint), *routes],
        middleware=middleware,
        lifespan=lambda _app: sessions.run(),
    )
