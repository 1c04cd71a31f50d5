"""`write-gate console`: the console alone, for a person on the gate's machine. It joins the data folder's engine
as another gate would (or the configured engine), serves /console on 127.0.0.1 only, and prints a one-time login
link, as Jupyter does; the link's secret works once and leaves the address bar at once."""

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import uvicorn
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from write_gate.serving.config import Settings
from write_gate.serving.telemetry import Telemetry
from write_gate.surface.console.app import OPERATOR, PREFIX, console_mount, favicon_route
from write_gate.surface.http_security import transport_security
from write_gate.surface.operations import Operations
from write_gate.surface.server import build_server

HOST = "127.0.0.1"


def login_link(port: int, secret: str) -> str:
    return f"http://{HOST}:{port}{PREFIX}/login?once={secret}"


def tell(operator: str, link: str) -> None:
    """The link on stdout, on lines of its own (the logs are stderr's), as docs/operations/console.md shows it."""
    print(f"Write Gate console, as agent {operator!r}. Open this link (it works once):\n\n    {link}\n", flush=True)


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, telling the link once it listens (the lifespan that makes the link runs before that)."""

    def __init__(self, config: uvicorn.Config, operator: str, links: list[str]) -> None:
        super().__init__(config)
        self.operator, self.links = operator, links  # the lifespan appends the link to `links`

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.links:
            tell(self.operator, self.links[-1])


def serve(settings: Settings, *, auto_migrate: bool = True) -> None:
    """`write-gate console` until stopped; the link told once the console is up."""
    settings = settings.model_copy(update={"port": settings.console_port})
    links: list[str] = []
    app = console_app(settings, auto_migrate=auto_migrate, announce=links.append)
    config = uvicorn.Config(app, host=HOST, port=settings.port, log_config=None, log_level=None, access_log=False)
    _AnnouncingServer(config, settings.agent or OPERATOR, links).run()


def console_app(
    settings: Settings,
    *,
    auto_migrate: bool = True,
    telemetry: Telemetry | None = None,
    announce: Callable[[str], None] | None = None,
) -> Starlette:
    """`announce` gets the one-time link once the gate is up (default: printed, as `serve` prints it)."""
    settings = settings.model_copy(update={"host": HOST})
    server = build_server(settings, auto_migrate=auto_migrate, telemetry=telemetry)
    operations: Operations = server.operations
    security = TransportSecurityMiddleware(transport_security(settings))
    operator = settings.agent or OPERATOR
    mount = console_mount(operations, security, f"http://{HOST}:{settings.port}", operator=operator)
    console = mount.console  # type: ignore[attr-defined]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with server.lifespan(server):
            link = login_link(settings.port, console.sessions.one_time_link())
            (announce or (lambda at: tell(operator, at)))(link)
            yield

    async def home(_request: Request) -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=303)

    return Starlette(routes=[Route("/", home, methods=["GET"]), favicon_route(), mount], lifespan=lifespan)
