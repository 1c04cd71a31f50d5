"""`GET /metrics`: the gate's Prometheus metrics (serving/telemetry.py), in the text format Prometheus scrapes.

The same Host and Origin rules as the MCP endpoint (the SDK's own check: 421, 403). With an agents file the scrape
needs a bearer token whose grant names `metrics` (or the admin group, or `*`): `write-gate agents add prometheus
--tools metrics` makes one that can scrape and call no tool. The gauges read from the graph (quarantine size, open
conflicts) are sampled at each scrape, and only then.
"""

import contextlib
from collections.abc import Iterator

import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from write_gate.access.agents import LiveAgents
from write_gate.serving.telemetry import Metrics
from write_gate.surface.http_security import transport_security
from write_gate.surface.operations import Operations

METRICS_PATH = "/metrics"
SCRAPE_TOOL = "metrics"  # the name a grant gives to let an agent scrape


def may_scrape(agents: LiveAgents | None, user: object) -> bool | None:
    """True: scrape; False: a known agent without the grant (403); None: no verified token (401)."""
    if agents is None:
        return True
    if not isinstance(user, AuthenticatedUser):
        return None
    agent = agents.by_id(user.access_token.client_id)
    return agent is not None and agent.grant.allows_tool(SCRAPE_TOOL, "admin")


async def exposition(operations: Operations, metrics: Metrics) -> Response:
    await operations.sample_gauges()
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)


def metrics_route(operations: Operations, security: TransportSecurityMiddleware, agents: LiveAgents | None) -> Route:
    metrics = operations.telemetry.metrics
    assert metrics is not None, "a route is made only where metrics are on"

    async def scrape(request: Request) -> Response:
        refused = await security.validate_request(request)
        if refused is not None:
            return refused
        allowed = may_scrape(agents, request.scope.get("user"))
        if allowed is None:
            return PlainTextResponse(
                "a bearer token is needed", status_code=401, headers={"WWW-Authenticate": 'Bearer realm="metrics"'}
            )
        if not allowed:
            return PlainTextResponse(f"this agent's grant does not name {SCRAPE_TOOL}", status_code=403)
        return await exposition(operations, metrics)

    return Route(METRICS_PATH, scrape, methods=["GET"])


class _OwnSignals(uvicorn.Server):
    """uvicorn's server without its signal handlers: the stdio server owns the process's signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_metrics(operations: Operations, port: int) -> None:
    """/metrics alone on 127.0.0.1:`port`, beside the stdio pipe (`serve --metrics-port`) until cancelled: no token
    (the pipe has none to check), the Host and Origin rules applied as on HTTP."""
    local = operations.settings.model_copy(update={"host": "127.0.0.1", "port": port})
    security = TransportSecurityMiddleware(transport_security(local))
    app = Starlette(routes=[metrics_route(operations, security, None)])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off")
    await _OwnSignals(config).serve()
