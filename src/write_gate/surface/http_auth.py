"""Bearer tokens over HTTP, told the OAuth way (RFC 9728): a 401 names the protected-resource metadata,
and that document points at a page saying where tokens come from.

The gate has no OAuth authorization server: its tokens come from the operator's `write-gate agents add`.
So the metadata lists none (`authorization_servers` is optional in RFC 9728) rather than naming one that
would send clients into an OAuth flow that cannot succeed; `resource_documentation` says what to do instead.
"""

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, cors_middleware
from pydantic import AnyHttpUrl
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from write_gate.access.agents import AgentsFile, LiveAgents

MCP_PATH = "/mcp"
TOKEN_HELP_PATH = "/auth"

TOKEN_HELP = """\
Write Gate at {resource} takes bearer tokens issued by its operator; there is no OAuth
authorization server to ask.

To get a token, ask the gate's operator to run, where the gate's agents file lives:

    write-gate agents add NAME [--grant writer|reader|full]

It prints the token once (the file keeps only its hash). Send it with every request:

    Authorization: Bearer <token>

for example in an MCP client's configuration:

    {{"url": "{resource}", "headers": {{"Authorization": "Bearer <token>"}}}}

A token stops working as soon as its agent is given a new one or removed from the agents file.
"""


def resource_url(public_url: str) -> str:
    return public_url + MCP_PATH


def metadata_url(public_url: str) -> AnyHttpUrl:
    """`<origin>/.well-known/oauth-protected-resource/mcp`, as RFC 9728 section 3.1 builds it."""
    return build_resource_metadata_url(AnyHttpUrl(resource_url(public_url)))


def protected_resource_metadata(public_url: str) -> dict[str, object]:
    return {
        "resource": resource_url(public_url),
        "bearer_methods_supported": ["header"],
        "resource_name": "Write Gate",
        "resource_documentation": public_url + TOKEN_HELP_PATH,
    }


def routes(public_url: str) -> list[Route]:
    """The metadata at its RFC 9728 address (and at the bare well-known path, which some clients try first),
    and the page on getting a token."""
    document = protected_resource_metadata(public_url)
    help_text = TOKEN_HELP.format(resource=resource_url(public_url))

    async def metadata(_request: Request) -> JSONResponse:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    async def token_help(_request: Request) -> PlainTextResponse:
        return PlainTextResponse(help_text)

    served = cors_middleware(metadata, ["GET", "OPTIONS"])
    paths = dict.fromkeys([metadata_url(public_url).path or "/", "/.well-known/oauth-protected-resource"])
    return [
        *(Route(path, endpoint=served, methods=["GET", "OPTIONS"]) for path in paths),
        Route(TOKEN_HELP_PATH, endpoint=token_help, methods=["GET"]),
    ]


def requiring_token(app: ASGIApp, public_url: str) -> ASGIApp:
    """401 with `WWW-Authenticate: Bearer ..., resource_metadata="..."` unless a verified token came."""
    return RequireAuthMiddleware(app, required_scopes=[], resource_metadata_url=metadata_url(public_url))


def middleware(verifier: TokenVerifier) -> list[Middleware]:
    """Verify the bearer token of every request and make it visible to handlers."""
    return [
        Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
        Middleware(AuthContextMiddleware),
    ]


class AgentsTokenVerifier(TokenVerifier):
    """The MCP SDK's token verifier: a bearer token is an agent of the agents file as it is now, or nobody
    (401)."""

    def __init__(self, agents: LiveAgents) -> None:
        self._agents = agents
        # Each verified token's AccessToken, for the agents file as it was read (a new read starts afresh): every
        # request is verified, and the answer is the same until the file changes.
        self._read: AgentsFile | None = None
        self._verified: dict[str, AccessToken] = {}

    async def verify_token(self, token: str) -> AccessToken | None:
        agents = self._agents.current()
        if agents is not self._read:
            self._read, self._verified = agents, {}
        verified = self._verified.get(token)
        if verified is None:
            agent = agents.by_token(token)
            if agent is None:
                return None  # not kept: unknown tokens must not grow the cache
            claims = {"grant": agent.grant.model_dump()}
            verified = self._verified[token] = AccessToken(token=token, client_id=agent.id, scopes=[], claims=claims)
        return verified
