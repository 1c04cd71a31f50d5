"""`GET /metrics`: the gate's Prometheus metrics (serving/telemetry.py), in the text format Prometheus scrapes.

The same Host and Origin rules as the MCP endpoint (the SDK's own check: 421, 403). With an agents file the scrape
needs a bearer token whose grant names `metrics` (or the admin group, or `*`): `write-gate agents add prometheus
--tools metrics` makes one that can scrape and call no tool. The gauges read from the graph (quarantine size, open
conflicts) are sampled at each scrape, and only then.
"""

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from write_gate.access.agents import LiveAgents
from write_gate.serving.telemetry import Metrics
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
