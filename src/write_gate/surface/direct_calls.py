"""A session's `tools/call` answered in its POST's own task where the answer is one JSON body (`--http-response
json`), through the SDK's own request kernel.

The SDK's session transport hands every request to the session's dispatcher through a memory stream; a task of the
dispatcher's group runs it, its answer goes back through the transport's router to a stream the POST waits on,
and each hop validates the message again. Under a fleet that path cost a third of the gate's own CPU a call beside
the tool's work (bench/fleet.py). Where nothing but the answer can go out on the POST (JSON answers: the SDK drops
whatever else a call sends there), a `tools/call` is run here instead: by a `ServerRunner` on the session's
connection, the kernel the dispatcher calls, so the request is validated, held to the initialisation gate, passed
through the server's middleware and shaped for the wire exactly as on the SDK's path. The answer is the JSON body
the SDK would have sent; a call the client cancels (`notifications/cancelled`, which http_disconnects also sends
when its connection goes) is answered `REQUEST_CANCELLED`, as the SDK's 2025-era transport answers one.

Everything else takes the SDK's path unchanged: initialize, notifications, every other method, batches, SSE
answers, anything malformed (the SDK answers it), and a session whose connection is not known yet. The connection
is learned from the session's first message through the server's middleware (`DirectRoutes`): the request context
carries the POST's scope, in which the transport put itself. Reading it takes one private attribute of the SDK's
ServerSession (`_connection`, SDK 2.3); without it every call takes the SDK's path, and
tests/e2e/test_direct_calls.py fails.
"""

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import (
    CONTENT_TYPE_JSON,
    MCP_SESSION_ID_HEADER,
    REQUEST_CANCELLED,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.dispatcher import CallOptions, coerce_request_id
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import MessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

TRANSPORT_KEY = "write_gate.transport"  # the POST's scope: the session transport it reached
METHOD = "tools/call"
_NO_BACK_CHANNEL = TransportContext(kind="jsonrpc", can_send_request=False)


@dataclass(eq=False)
class _DirectCall:
    """The SDK's `DispatchContext` for one call answered here: a JSON answer has no back channel, so what the call
    sends about itself (progress, request-scoped notifications) is dropped, as the SDK's JSON mode drops it."""

    request_id: Any
    message_metadata: MessageMetadata
    progress_token: Any = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    transport: TransportContext = _NO_BACK_CHANNEL
    can_send_request: bool = False

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        logger.debug("dropped %s: a JSON answer carries only the call's result", method)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None

    def close(self) -> None:
        return None


def _tools_call(body: bytes) -> dict[str, Any] | None:
    """The body as one well-formed JSON-RPC `tools/call` request, or None (the SDK's path answers anything else)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id = message["id"]
    valid_id = isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
    if message["jsonrpc"] != "2.0" or message["method"] != METHOD or not valid_id:
        return None
    return message if isinstance(message["params"], dict) else None


class DirectCallTransport(StreamableHTTPServerTransport):
    """The SDK's session transport, answering a `tools/call` in the POST's task once it knows the session's
    connection (`runner`, set by DirectRoutes) and answers are JSON."""

    runner: ServerRunner[Any] | None
    _calls: dict[Any, tuple[anyio.CancelScope, _DirectCall]]  # in flight here, by request id

    @classmethod
    def adopt(cls, transport: StreamableHTTPServerTransport) -> "DirectCallTransport":
        """The SDK's transport, as its session manager made it (the manager builds the class it names itself),
        made one of these: the class adds methods and two attributes, nothing the SDK's own state depends on."""
        transport.__class__ = cls
        adopted: DirectCallTransport = transport  # type: ignore[assignment]
        adopted.runner, adopted._calls = None, {}
        return adopted

    def cancel(self, request_id: Any) -> None:
        """A `notifications/cancelled` for a call answered here: it stops, answered REQUEST_CANCELLED."""
        if not isinstance(request_id, str | int):
            return
        if (found := self._calls.get(coerce_request_id(request_id))) is not None:
            scope, call = found
            call.cancel_requested.set()
            scope.cancel()

    def _direct(self, request: Request) -> bool:
        has_json, _ = check_accept_headers(request)
        return (
            self.runner is not None
            and self.is_json_response_enabled
            and has_json
            and self._check_content_type(request)
            and request.headers.get(MCP_SESSION_ID_HEADER) == self.mcp_session_id
        )

    async def _handle_post_request(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
        scope[TRANSPORT_KEY] = self  # for DirectRoutes: the request context carries this scope
        message = _tools_call(await request.body()) if self._direct(request) else None
        if message is None or self.runner is None:
            await super()._handle_post_request(scope, request, receive, send)  # the body is cached on the request
            return
        answer = await self._answer(self.runner, request, message)
        body = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"Content-Type": CONTENT_TYPE_JSON, MCP_SESSION_ID_HEADER: self.mcp_session_id or ""}
        await Response(body, status_code=200, headers=headers)(scope, receive, send)

    async def _answer(self, runner: ServerRunner[Any], request: Request, message: dict[str, Any]) -> dict[str, Any]:
        """The call's JSON-RPC answer, as the SDK's dispatcher makes it (`_handle_request`)."""
        request_id, params = message["id"], message["params"]
        call = _DirectCall(request_id, self._message_metadata(request), progress_token_from_params(params))
        key = coerce_request_id(request_id)
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        with anyio.CancelScope() as scope:
            self._calls[key] = (scope, call)
            try:
                answer["result"] = await runner.on_request(call, METHOD, params)
            except Exception as exc:
                error = handler_exception_to_error_data(exc)
                if error is None:
                    logger.exception("handler for %r raised", METHOD)
                    error = ErrorData(code=0, message=str(exc))  # the SDK's own answer to a handler's crash
                answer["error"] = error.model_dump(mode="json", by_alias=True, exclude_unset=True)
            finally:
                if self._calls.get(key, (None, None))[1] is call:
                    del self._calls[key]
        if call.cancel_requested.is_set():
            answer.pop("result", None)
            answer["error"] = {"code": REQUEST_CANCELLED, "message": "Request cancelled"}
        return answer


async def stateless_call(
    app: Server[Any],
    lifespan_state: Any,
    security: Any,
    protocol_version: str,
    scope: Scope,
    receive: Receive,
    send: Send,
) -> Receive | None:
    """A stateless POST (`--stateless`, JSON answers) answered here when it is a plain `tools/call`: None. Else the
    `receive` to hand the SDK's path, which gives back what was read. The SDK's stateless path starts a transport, a
    dispatcher and a server task for each request; here the call runs on a born-ready connection, as that path's
    is, through the same kernel and the transport's own checks (its security settings included)."""
    received: list[Message] = []
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    queued = list(received)

    async def replay() -> Message:
        return queued.pop(0) if queued else await receive()

    body = b"".join(m.get("body", b"") for m in received)
    if received[-1]["type"] != "http.request" or _tools_call(body) is None:
        return replay  # nothing built for a message the SDK's path takes
    transport = DirectCallTransport.adopt(
        StreamableHTTPServerTransport(
            mcp_session_id=None, is_json_response_enabled=True, event_store=None, security_settings=security
        )
    )
    transport.runner = ServerRunner(app, Connection.from_envelope(protocol_version, None, None), lifespan_state)
    if not transport._direct(Request(scope)):
        return replay
    logger.debug("a stateless tools/call answered without a server task of its own")
    await transport.handle_request(scope, replay, send)
    return None


class DirectRoutes:
    """Server middleware (the SDK's context tier): tells a session's DirectCallTransport its connection at the
    session's first message, and hands it the `notifications/cancelled` meant for a call it answers itself."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        request = ctx.request
        transport = request.scope.get(TRANSPORT_KEY) if isinstance(request, Request) else None
        if isinstance(transport, DirectCallTransport):
            if transport.runner is None and (connection := getattr(ctx.session, "_connection", None)) is not None:
                transport.runner = ServerRunner(self.server, connection, ctx.lifespan_context)
                logger.debug("session %s: its tools/call answered in their POSTs' tasks", transport.mcp_session_id)
            if ctx.method == "notifications/cancelled" and isinstance(ctx.params, Mapping):
                transport.cancel(ctx.params.get("requestId"))
        return await call_next(ctx)
