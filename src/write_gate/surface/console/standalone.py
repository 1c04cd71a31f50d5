"""`write-gate console`: the console alone, for a person on the gate's machine. It joins the data folder's engine
as another gate would (or the configured engine), serves /console on 127.0.0.1 only, and prints a one-time login
link, as Jupyter does; the link's secret works once and leaves the address bar at once."""

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

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


def console_app(
    settings: Settings,
    *,
    auto_migrate: bool = True,
    telemetry: Telemetry | None = None,
    announce: Callable[[str], None] | None = None,
) -> Starlette:
    """`announce` gets the one-time link once the gate is up (default: printed to stderr)."""
    settings = settings.model_copy(update={"host": HOST})
    server = build_server(settings, auto_migrate=auto_migrate, telemetry=telemetry)
    operations: Operations = server.operations
    security = TransportSecurityMiddleware(transport_security(settings))
    operator = settings.agent or OPERATOR
    mount = console_mount(operations, security, f"http://{HOST}:{settings.port}", operator=operator)
    console = mount.console  # type: ignore[attr-defined]

    def tell(link: str) -> None:
        print(
            f"Write Gate console, as agent {operator!r}. Open this link (it works once):\n\n    {link}\n",
            file=sys.stderr,
        )
        sys.stderr.flush()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with server.lifespan(server):
            (announce or tell)(login_link(settings.port, console.sessions.one_time_link()))
            yield

    async def home(_request: Request) -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=303)

    return Starlette(routes=[Route("/", home, methods=["GET"]), favicon_route(), mount], lifespan=lifespan)
