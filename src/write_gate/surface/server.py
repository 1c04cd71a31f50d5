"""MCP wiring only: the tool table of a profile, one call path, and the transports."""

import contextlib
import json
import logging
import warnings
import weakref
from collections.abc import AsyncIterator
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
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from write_gate import __version__
from write_gate.access.agents import FULL, Agent, Grant, LiveAgents
from write_gate.access.tool_selection import ToolSelection
from write_gate.core.formula import method_schema
from write_gate.core.model import ErrorCode, GateRejection, Rejected, validation_problems
from write_gate.core.registry import RegistrySnapshot
from write_gate.core.values import check_storable
from write_gate.engines import BackendUnavailable
from write_gate.services.gate import Gate
from write_gate.services.hierarchy import HierarchySettings
from write_gate.services.memory import MemoryService, WriterContext
from write_gate.serving.assembly import formula_provider, open_gate
from write_gate.serving.audit import Decision
from write_gate.serving.change_watcher import ChangeWatcher
from write_gate.serving.config import Settings
from write_gate.surface import http_auth, schema_resources, session_log
from write_gate.surface.change_resources import AREA, CHANGES, ChangeResources, ChangeSubscriptions
from write_gate.surface.http_auth import AgentsTokenVerifier
from write_gate.surface.http_security import public_url, transport_security, unlisted_wildcard_bind
from write_gate.surface.malformed import AnswerMalformedPosts
from write_gate.surface.mcp_context import GateContext
from write_gate.surface.profiles import PROFILES
from write_gate.surface.sse_events import EventLog, ResumableSessionManager
from write_gate.surface.tool_spec import Call, Services, ToolSpec
from write_gate.surface.typed_tool_specs import typed_specs

logger = logging.getLogger(__name__)

# How long a client waits before reconnecting a dropped SSE stream (the SSE `retry` field).
SSE_RETRY_MS = 2_000

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
    problems = validation_problems(exc, "(arguments)")
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


async def call(
    spec: ToolSpec, services: Services, arguments: dict[str, Any] | None, context: Call, settings: Settings
) -> types.CallToolResult:
    """Validate, run, and turn every outcome into a result: the server never answers with a crash."""
    try:
        check_storable(arguments or {})  # first: what follows encodes the arguments
        check_size(arguments or {}, settings)
        request = spec.input_model.model_validate(arguments or {})
        result = await spec.handler(services, request, context)
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


def _client_name(ctx: GateContext) -> str | None:
    params = ctx.session.client_params  # None on 2026-07-28 connections, which have no handshake
    return (params.client_info.name or None) if params is not None else None


def _access_token(ctx: GateContext) -> AccessToken | None:
    """The verified bearer token of an HTTP request (None over stdio)."""
    user = ctx.request.scope.get("user") if ctx.request is not None else None
    return user.access_token if isinstance(user, AuthenticatedUser) else get_access_token()


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
            return known or Agent(token.client_id, Grant(tools=(), labels=(), relationship_types=()))
        name = self.settings.agent or _client_name(ctx) or "unknown-client"
        known = self.agents.by_id(name) if self.agents else None
        return known or Agent(name, FULL)


class GateServer(Server[Services]):
    """The SDK's server, whose capabilities say `tools.listChanged` on every transport: a refresh that changes
    the generated tools sends `notifications/tools/list_changed`, over stdio and HTTP alike."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


def build_server(settings: Settings, *, profile: str = "gate", auto_migrate: bool = True) -> Server[Services]:
    # The memory profile stamps its writes with the configured method: one the provider refuses stops the start.
    formula_provider(settings, stamps=settings.memory_extraction_method if profile == "memory" else None)
    selection = ToolSelection.parse(settings.tools)
    static = {spec.name: spec for spec in PROFILES[profile] if selection.offers(spec.name, spec.group)}
    taken = {spec.name for spec in PROFILES[profile]}
    identities = Identities(settings)
    generated = profile == "gate"  # typed tools are the gate profile's friendlier front door
    tables: dict[int, tuple[RegistrySnapshot | None, dict[str, ToolSpec], types.ListToolsResult]] = {}

    def table(services: Services) -> tuple[dict[str, ToolSpec], types.ListToolsResult]:
        """The tools for the registry snapshot in force, built once per snapshot."""
        registry = services.gate.snapshot  # None until the registry loads: the static tools only
        cached = tables.get(id(registry))
        if cached is None or cached[0] is not registry:
            methods = method_schema(services.gate.provider)
            typed = typed_specs(registry, methods) if generated and registry is not None else ()
            # A label whose typed tools would take a profile tool's name (`SAVED_SEARCH`'s update_saved_search)
            # gets none: a registry never replaces the gate's own tools.
            clashing = {spec.label for spec in typed if spec.name in taken}
            typed = tuple(spec for spec in typed if spec.label not in clashing)
            specs = static | {spec.name: spec for spec in typed if selection.offers(spec.name, spec.group, spec.label)}
            tables.clear()  # only the snapshot in force is worth keeping
            cached = tables[id(registry)] = (
                registry,
                specs,
                types.ListToolsResult(tools=[spec.to_mcp(specs) for spec in specs.values()]),
            )
        return cached[1], cached[2]

    sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()  # the sessions that listed or called tools
    subscriptions = ChangeSubscriptions()
    changes = ChangeResources(subscriptions, identities.agent, offered="changes_since" in static)
    watchers: list[ChangeWatcher] = []  # the running gate's, while it runs

    async def registry_changed() -> None:
        """A registry change noticed on the graph (another gate, the CLI): tell sessions to list again."""
        for session in list(sessions):
            with contextlib.suppress(Exception):  # a gone or deaf client loses nothing
                await session.send_tool_list_changed()

    @asynccontextmanager
    async def lifespan(_server: Server[Services]) -> AsyncIterator[Services]:
        async with open_gate(
            settings,
            auto_migrate=auto_migrate,
            keep_loading=True,
            on_registry_change=registry_changed if generated else None,
        ) as gate:
            hierarchy = HierarchySettings(settings.hierarchy_type, settings.hierarchy_max_depth)
            services = Services(
                gate=gate,
                memory=MemoryService(gate),
                hierarchy=hierarchy,
                change_settle_seconds=settings.change_settle_seconds,
            )
            watcher = ChangeWatcher(
                gate.backend.read, settings.change_poll_seconds, subscriptions.notify, subscriptions.listening
            )
            server.services = services  # type: ignore[attr-defined]  # for /health
            watchers.append(watcher)
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(watcher.run)
                    yield services
                    tasks.cancel_scope.cancel()
            finally:
                watchers.remove(watcher)
                server.services = None  # type: ignore[attr-defined]

    async def list_tools(ctx: GateContext, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        sessions.add(ctx.session)
        grant = identities.agent(ctx).grant
        specs, listed = table(ctx.lifespan_context)
        tools = [tool for tool in listed.tools if grant.allows_tool(tool.name, specs[tool.name].group)]
        if len(tools) < len(listed.tools):  # the grant hides some: a brief schema must not refer to one of them
            names = {tool.name for tool in tools}
            tools = [specs[tool.name].to_mcp(names) if specs[tool.name].brief else tool for tool in tools]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: GateContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        services = ctx.lifespan_context
        sessions.add(ctx.session)
        agent = identities.agent(ctx)
        specs, _ = table(services)
        spec = specs.get(params.name)
        decision = Decision(agent.id, params.name)
        if spec is None:
            # A protocol error, as the MCP specification has it for tools/call of an unknown tool.
            decision.done({"error_code": ErrorCode.INVALID_INPUT.value}, True)
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        if not agent.grant.allows_tool(spec.name, spec.group):
            message = f"this agent may not use {params.name}"
            result = _result(Rejected(error_code=ErrorCode.PERMISSION_DENIED, message=message), is_error=True)
        else:
            writer = WriterContext(
                source=settings.memory_source or _client_name(ctx) or agent.id,
                extraction_method=settings.memory_extraction_method,
                reliability=settings.memory_reliability,
            )
            context = Call(agent=agent, writer=writer, progress=ctx.session.report_progress)
            result = await call(spec, services, params.arguments, context, settings)
            if params.name == "refresh_schema_cache" and not result.is_error and set(table(services)[0]) != set(specs):
                await registry_changed()
        is_read = spec.group == "read"
        if not is_read:
            decision.done(result.structured_content, bool(result.is_error))
            for watcher in watchers:  # subscribers hear of this gate's own writes at once
                watcher.nudge()
        structured = result.structured_content or {}
        level = session_log.decision_level(is_read, bool(result.is_error), structured.get("error_code"))
        data = session_log.decision_data(agent.id, params.name, structured, bool(result.is_error))
        await session_log.send_decision(ctx, level, data)
        return result

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
        return await changes.read(ctx, params.uri) or await schema_resources.read_resource(ctx, params)

    with warnings.catch_warnings():
        # MCP logging is deprecated from protocol 2026-07-28 on, where requests opt in per call; clients of the
        # handshake-era protocols (every released client today) still set their level with logging/setLevel.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = GateServer(
            "write-gate",
            version=__version__,
            title="Write Gate",
            description="Schema-gated writes with computed provenance to a shared knowledge graph.",
            instructions=INSTRUCTIONS,
            lifespan=lifespan,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_subscribe_resource=changes.subscribe,
            on_unsubscribe_resource=changes.unsubscribe,
            on_completion=schema_resources.complete,
            on_set_logging_level=session_log.set_level,
        )
    server.services = None  # type: ignore[attr-defined]
    server.identities = identities  # type: ignore[attr-defined]  # the HTTP token verifier reads the same file
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


def initialization_options(server: Server[Services]) -> InitializationOptions:
    return server.create_initialization_options()


# --- streamable HTTP: bearer tokens, Host/Origin checks, idle sessions, /health --------------------------


def http_app(
    settings: Settings, *, profile: str = "gate", auto_migrate: bool = True, require_auth: bool = True
) -> Starlette:
    """The gate over streamable HTTP at /mcp. With an agents file every request needs a bearer token
    (401 naming the protected-resource metadata without a known one); `GET /health` answers without one.
    Built from the SDK's parts rather than `Server.streamable_http_app`, whose auth would advertise an OAuth
    authorization server the gate does not have (see http_auth)."""
    server = build_server(settings, profile=profile, auto_migrate=auto_migrate)
    agents: LiveAgents | None = server.identities.agents  # type: ignore[attr-defined]
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
    sessions = ResumableSessionManager(
        app=server,
        # Streams are primed (an id, empty data) and resumable with Last-Event-ID; `retry` paces reconnects.
        events=EventLog(),
        retry_interval=SSE_RETRY_MS,
        security_settings=transport_security(settings),
        session_idle_timeout=settings.session_idle_seconds,
        max_sessions=settings.max_sessions,
        # The transport's own hard stop, above the gate's per-call limit (which answers INVALID_INPUT).
        max_request_body_size=2 * settings.max_request_bytes,
    )

    async def health(_request: Request) -> JSONResponse:
        services = server.services  # type: ignore[attr-defined]
        if services is None:
            return JSONResponse({"status": "starting", "version": __version__}, status_code=503)
        try:
            await services.gate.backend.ping()
            engine = "reachable"
        except BackendUnavailable:
            engine = "unreachable"
        registry = registry_health(services.gate)
        healthy = engine == "reachable" and registry["loaded"]
        body = {
            "status": "ok" if healthy else "degraded",
            "engine": engine,
            "backend": settings.backend.value,
            "registry": registry,
            "version": __version__,
        }
        return JSONResponse(body, status_code=200 if healthy else 503)

    endpoint: ASGIApp = AnswerMalformedPosts(StreamableHTTPASGIApp(sessions), max_body=2 * settings.max_request_bytes)
    routes = [Route("/health", health, methods=["GET"])]
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
