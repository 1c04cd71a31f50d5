"""The console's plumbing: who may see it, how a person logs in, what every response carries, and the routes.

Safe by default (docs/console.md):
- the same Host and Origin rules as the MCP endpoint, by the SDK's own check (421, 403), on every request;
- a page needs a session, and only a login opens one (the login form keeps nothing on the server, so anonymous
  requests cannot crowd logged-in sessions out): with an agent's token (the agents file's, checked as a bearer
  token is) or, under `write-gate console`, the one-time link it printed; the agent needs the admin grant
  (`admin` or `*` among its tools), checked again at every request against the agents file as it is now;
- the session cookie is HttpOnly and SameSite=Strict (Secure behind an https public URL), scoped to /console;
- every POST carries the session's CSRF token (a form field, or the X-CSRF-Token header of a script's request);
  the login form's is a signed double-submit cookie;
- login attempts are throttled per client address and overall (429, Retry-After);
- every response forbids inline scripts and styles, framing, and referrers to other origins;
- a refusal is the tools' structured rejection, `{"status": "rejected", "error_code", "message", "details"}`.
"""

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import mcp_types as types
from jinja2 import Environment, PackageLoader, select_autoescape
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from write_gate import __version__
from write_gate.access.agents import FULL, Agent, hash_token
from write_gate.core.login_throttle import LoginLimit, LoginThrottle, Throttled
from write_gate.core.model import ErrorCode, GateRejection, Rejected
from write_gate.surface.console.sessions import (
    COOKIE,
    CSRF_FIELD,
    CSRF_HEADER,
    LOGIN_COOKIE,
    LoginForms,
    Session,
    Sessions,
)
from write_gate.surface.console.views import value_text
from write_gate.surface.operations import Operations

PREFIX = "/console"
OPERATOR = "console"  # the agent `write-gate console` acts as, unless WRITE_GATE_AGENT names another

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # never across origins; "no-referrer" would make a POST's Origin "null"
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
_STATUS = {
    ErrorCode.PERMISSION_DENIED.value: 403,
    ErrorCode.BACKEND_UNAVAILABLE.value: 503,
    ErrorCode.RATE_LIMITED.value: 429,
}


def refusal_status(rejected: dict[str, Any]) -> int:
    return _STATUS.get(str(rejected.get("error_code")), 400)


def has_admin_grant(agent: Agent) -> bool:
    """The console is an operator's: the admin group (or every tool) in the agent's grant."""
    return "*" in agent.grant.tools or "admin" in agent.grant.tools


class Guarded:
    """Around everything under /console: the Host/Origin check first, and the security headers on every answer."""

    def __init__(self, app: ASGIApp, security: TransportSecurityMiddleware) -> None:
        self.app, self.security = app, security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        refused = await self.security.validate_request(Request(scope))
        if refused is not None:
            await refused(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)


@dataclass
class Page:
    """One request to a page or action, from a logged-in operator."""

    console: "Console"
    request: Request
    session: Session
    agent: Agent
    form: FormData | None = None
    space: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> str | None:
        """A form field (POST) or query parameter (GET), stripped; None when absent or empty."""
        source = self.form if self.form is not None else self.request.query_params
        raw = source.get(name)
        text = raw.strip() if isinstance(raw, str) else None
        return text or None

    def values(self, name: str) -> list[str]:
        source = self.form if self.form is not None else self.request.query_params
        return [v.strip() for v in source.getlist(name) if isinstance(v, str) and v.strip()]

    async def tool(self, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """(succeeded, structured answer): the tool's own answer, through the server's call path."""
        result: types.CallToolResult = await self.console.operations.call(self.agent, name, arguments, self.space)
        return not result.is_error, result.structured_content or {}

    async def answer(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's answer; its rejection raised as a GateRejection (the page shows it)."""
        ok, data = await self.tool(name, arguments)
        if not ok:
            raise _as_rejection(data)
        return data

    async def act(
        self, name: str, arguments: dict[str, Any], show: Callable[[bool, dict[str, Any]], Awaitable[Response]]
    ) -> Response:
        """An action's tool call. A person gets the page `show` renders with its outcome; a script (Accept:
        application/json) gets the tool's answer as JSON, or its refusal raised, so the guard answers it as the
        structured rejection."""
        ok, data = await self.tool(name, arguments)
        if not _wants_json(self.request):
            return await show(ok, data)
        if not ok:
            raise _as_rejection(data)
        return JSONResponse(data, headers={"cache-control": "no-store"})

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        return self.console.render(
            template,
            status,
            agent=self.agent,
            csrf=self.session.csrf,
            space=self.space,
            spaces=self.console.spaces_of(self.agent),
            page=template.removesuffix(".html"),
            **context,
        )


Handler = Callable[[Page], Awaitable[Response]]


class Console:
    # Login attempts (POST /console/login) let in per client address, and from every address together.
    LOGIN_PER_ADDRESS = LoginLimit(attempts=10, seconds=60)
    LOGIN_OVERALL = LoginLimit(attempts=100, seconds=60)

    def __init__(
        self,
        operations: Operations,
        public_url: str,
        operator: str | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        self.operations = operations
        self.settings = operations.settings
        self.sessions = sessions or Sessions(self.settings.console_session_idle_seconds)
        self.login_forms = LoginForms()
        self.login_throttle = LoginThrottle()
        self.secure = public_url.startswith("https://")
        self.operator = operator  # the one-time link's agent (`write-gate console`); None: token logins only
        self.env = Environment(
            loader=PackageLoader("write_gate.surface.console", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals.update(prefix=PREFIX, version=__version__)
        self.env.filters["value_text"] = value_text

    # --- identity -----------------------------------------------------------------------------------------

    def operator_agent(self) -> Agent:
        """`write-gate console`'s operator: its grant in the agents file, or full trust when the file does not
        list it (as stdio trusts the person who started the process)."""
        assert self.operator is not None
        agents = self.operations.agents
        listed = agents.by_id(self.operator) if agents is not None else None
        return listed or Agent(self.operator, FULL)

    def agent_of(self, session: Session) -> Agent | None:
        """The session's agent as the agents file has it now; None once its token was replaced or it was removed."""
        if session.token_sha256 is None:  # the one-time link's operator
            return self.operator_agent() if session.agent == self.operator else None
        agents = self.operations.agents
        record = agents.current().agents.get(session.agent) if agents is not None else None
        if record is None or record.token_sha256 != session.token_sha256:
            return None
        return agents.by_id(session.agent) if agents is not None else None

    def spaces_of(self, agent: Agent) -> list[str]:
        settings = self.settings
        if not settings.spaces:
            return []
        from write_gate.core.spaces import granted_spaces

        return granted_spaces(agent.grant.spaces, tuple(settings.spaces), settings.default_space)

    # --- responses ----------------------------------------------------------------------------------------

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})

    def refusal(self, rejected: dict[str, Any], request: Request, session: Session | None = None) -> Response:
        """The structured rejection: JSON to a script, a page showing it to a person."""
        status = refusal_status(rejected)
        if _wants_json(request):
            return JSONResponse(rejected, status_code=status, headers={"cache-control": "no-store"})
        return self.render(
            "refused.html", status, rejected=rejected, csrf=session.csrf if session else None, agent=None, page=""
        )

    def with_cookie(self, response: Response, session: Session) -> Response:
        response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", secure=self.secure, path=PREFIX)
        response.delete_cookie(LOGIN_COOKIE, path=PREFIX)  # the login form's part is done
        return response

    # --- the guard around every page ------------------------------------------------------------------------

    def page(self, handler: Handler, *, post: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            session = self.sessions.get(request.cookies.get(COOKIE))
            agent = self.agent_of(session) if session is not None else None
            if session is None or agent is None:
                if session is not None:
                    self.sessions.end(session.id)
                if post or _wants_json(request):
                    rejected = _rejected(ErrorCode.PERMISSION_DENIED, "log in to the console first", reason="login")
                    return self.refusal(rejected, request)
                return RedirectResponse(f"{PREFIX}/login", status_code=303)
            if not has_admin_grant(agent):
                rejected = _rejected(
                    ErrorCode.PERMISSION_DENIED,
                    f"the console is for operators: {agent.id}'s grant has no admin tools",
                    reason="not_admin",
                    agent=agent.id,
                )
                return self.refusal(rejected, request, session)
            form = None
            if post:
                form = await request.form()
                sent = form.get(CSRF_FIELD)
                if not session.csrf_matches(sent if isinstance(sent, str) else request.headers.get(CSRF_HEADER)):
                    return self.refusal(_csrf_refused(), request, session)
            page = Page(self, request, session, agent, form)
            page.space = page.value("space")
            try:
                return await handler(page)
            except GateRejection as exc:
                return self.refusal(exc.rejected.model_dump(mode="json"), request, session)

        return endpoint

    # --- logging in and out -------------------------------------------------------------------------------

    async def login_form(self, request: Request) -> Response:
        once = request.query_params.get("once")
        if once is not None:
            return self._login_once(once, request)
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is not None and self.agent_of(session) is not None:
            return RedirectResponse(f"{PREFIX}/", status_code=303)
        # No session for a form: its CSRF token is the HMAC of a value in its own cookie (signed double-submit).
        value = request.cookies.get(LOGIN_COOKIE) or self.login_forms.new_value()
        form = self.render(
            "login.html",
            csrf=self.login_forms.csrf(value),
            agent=None,
            page="login",
            tokens=self.operations.agents is not None,
            operator=self.operator,
        )
        form.set_cookie(LOGIN_COOKIE, value, httponly=True, samesite="strict", secure=self.secure, path=PREFIX)
        return form

    def _login_once(self, secret: str, request: Request) -> Response:
        if self.operator is None or not self.sessions.use_once(secret):
            rejected = _rejected(
                ErrorCode.PERMISSION_DENIED,
                "this login link was used already (or is not this console's): start `write-gate console` again "
                "for a new one",
                reason="link_used",
            )
            return self.refusal(rejected, request)
        agent = self.operator_agent()
        if not has_admin_grant(agent):
            rejected = _rejected(
                ErrorCode.PERMISSION_DENIED,
                f"the console is for operators: {agent.id}'s grant has no admin tools",
                reason="not_admin",
                agent=agent.id,
            )
            return self.refusal(rejected, request)
        session = self.sessions.start(agent.id)
        # Off the link's URL at once: the secret is never left in the address bar or history.
        return self.with_cookie(RedirectResponse(f"{PREFIX}/", status_code=303), session)

    async def login(self, request: Request) -> Response:
        address = request.client.host if request.client is not None else ""
        throttled = self.login_throttle.attempt(address, time.monotonic(), self.LOGIN_PER_ADDRESS, self.LOGIN_OVERALL)
        if throttled is not None:
            return _throttled(throttled, self.refusal(_throttle_refused(throttled), request))
        form = await request.form()
        before = self.sessions.get(request.cookies.get(COOKIE))
        sent = form.get(CSRF_FIELD)
        if not self.login_forms.matches(request.cookies.get(LOGIN_COOKIE), sent if isinstance(sent, str) else None):
            return self.refusal(_csrf_refused(), request)
        token = form.get("token")
        agents = self.operations.agents
        agent = agents.by_token(token.strip()) if agents is not None and isinstance(token, str) else None
        if agent is None:
            rejected = _rejected(ErrorCode.PERMISSION_DENIED, "no agent has this token", reason="unknown_token")
            return self.refusal(rejected, request, before)
        if not has_admin_grant(agent):
            rejected = _rejected(
                ErrorCode.PERMISSION_DENIED,
                f"the console is for operators: {agent.id}'s grant has no admin tools",
                reason="not_admin",
                agent=agent.id,
            )
            return self.refusal(rejected, request, before)
        if before is not None:
            self.sessions.end(before.id)  # a login never keeps the session id it came with
        assert isinstance(token, str)
        session = self.sessions.start(agent.id, hash_token(token.strip()))
        return self.with_cookie(RedirectResponse(f"{PREFIX}/", status_code=303), session)

    async def logout(self, page: Page) -> Response:
        self.sessions.end(page.session.id)
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(COOKIE, path=PREFIX)
        return response


def _rejected(code: ErrorCode, message: str, **details: Any) -> dict[str, Any]:
    return Rejected(error_code=code, message=message, details=details).model_dump(mode="json")


def _as_rejection(data: dict[str, Any]) -> GateRejection:
    """A tool's structured rejection, raised again as it came."""
    return GateRejection(
        ErrorCode(data.get("error_code", ErrorCode.INTERNAL_ERROR.value)),
        str(data.get("message", "")),
        **(data.get("details") or {}),
    )


def _throttle_refused(throttled: Throttled) -> dict[str, Any]:
    return _rejected(
        ErrorCode.RATE_LIMITED,
        throttled.message(),
        reason="login_throttled",
        scope=throttled.scope,
        retry_after_seconds=throttled.retry_after,
    )


def _throttled(throttled: Throttled, response: Response) -> Response:
    response.headers["retry-after"] = str(math.ceil(throttled.retry_after))
    return response


def _csrf_refused() -> dict[str, Any]:
    return _rejected(ErrorCode.PERMISSION_DENIED, "the form's CSRF token is missing or wrong", reason="csrf")


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(f"{PREFIX}/api/") or "application/json" in request.headers.get("accept", "")


def console_routes(console: Console) -> list[Route | Mount]:
    from write_gate.surface.console import pages

    page = console.page
    return [
        Route("/login", console.login_form, methods=["GET"]),
        Route("/login", console.login, methods=["POST"]),
        Route("/logout", page(console.logout, post=True), methods=["POST"]),
        Route("/", page(pages.overview), methods=["GET"]),
        Route("/registry", page(pages.registry), methods=["GET"]),
        Route("/quarantine", page(pages.quarantine), methods=["GET"]),
        Route("/quarantine/replay", page(pages.quarantine_replay, post=True), methods=["POST"]),
        Route("/quarantine/discard", page(pages.quarantine_discard, post=True), methods=["POST"]),
        Route("/conflicts", page(pages.conflicts), methods=["GET"]),
        Route("/conflicts/resolve", page(pages.conflicts_resolve, post=True), methods=["POST"]),
        Route("/history", page(pages.history), methods=["GET"]),
        Route("/agents", page(pages.agents), methods=["GET"]),
        Route("/explore", page(pages.explore), methods=["GET"]),
        Route("/api/changes", page(pages.api_changes), methods=["GET"]),
        Route("/api/neighbourhood", page(pages.api_neighbourhood), methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("write_gate.surface.console", "static")]), name="static"),
    ]


async def favicon(_request: Request) -> Response:
    """The console's icon at the site's root too, where a browser asks for it unbidden (a 404 is a console error)."""
    icon = resources.files("write_gate.surface.console").joinpath("static", "favicon.ico").read_bytes()
    return Response(icon, media_type="image/x-icon", headers={"cache-control": "max-age=86400"})


def favicon_route() -> Route:
    return Route("/favicon.ico", favicon, methods=["GET"])


def console_mount(
    operations: Operations, security: TransportSecurityMiddleware, public_url: str, operator: str | None = None
) -> Mount:
    """/console, as the HTTP transport serves it (and `write-gate console`, with its operator)."""
    console = Console(operations, public_url, operator)
    mount = Mount(PREFIX, routes=console_routes(console), middleware=[Middleware(Guarded, security=security)])
    mount.console = console  # type: ignore[attr-defined]  # `write-gate console` asks it for the one-time link
    return mount
