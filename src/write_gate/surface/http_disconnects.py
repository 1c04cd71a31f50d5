"""A session's call whose HTTP stream the client closed ends in the gate, as if the client had cancelled it.

The SDK's session transport (streamable HTTP with an Mcp-Session-Id, protocol 2025-06-18) keeps running a request
whose POST connection is gone, and drops its answer at the end: a client that gave up still held an engine
connection for as long as the call took. (The 2026-07-28 path, without a session, watches for the disconnect
itself.) This wrapper watches the POST's connection while the answer is owed; when the client leaves before it,
the wrapper hands the session a `notifications/cancelled` for the POST's requests, so the SDK cancels them
through its own cancellation path.

Only for clients that cannot resume the stream: the SDK primes a 2025-11-25 client's stream with an event id
(surface/sse_events.py), and such a client may drop the stream and resume it with `Last-Event-ID`, where the
specification says a disconnection is not a cancellation (it sends `notifications/cancelled` to cancel). Its call
runs on, and its answer is replayed when it resumes.
"""

import asyncio
import json
import logging
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
RESUMABLE_FROM = "2025-11-25"  # the first protocol version whose streams the SDK primes for resumption
REASON = "the client closed its HTTP stream"
CANCEL_SECONDS = 5.0  # how long handing the session its cancellations may take


def request_ids(body: bytes) -> list[Any]:
    """The ids of the JSON-RPC requests in a POST body (one message or a batch); none for anything else."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    return [m["id"] for m in messages if isinstance(m, dict) and "method" in m and m.get("id") is not None]


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        version = headers.get(VERSION_HEADER, b"").decode("latin-1")
        resumable = version >= RESUMABLE_FROM
        if scope["type"] != "http" or scope["method"] != "POST" or SESSION_HEADER not in headers or resumable:
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        while True:  # the body first (AnswerMalformedPosts has it read already: this replays it)
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        ids = request_ids(b"".join(m.get("body", b"") for m in received))
        if not ids or received[-1]["type"] != "http.request":
            await self.app(scope, _replaying(received, receive), send)
            return
        gone = anyio.Event()
        answered = False

        async def watched_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        async def watched_receive() -> Message:
            if received:
                return received.pop(0)
            await gone.wait()  # the watcher below is the connection's only reader from here
            return {"type": "http.disconnect"}

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()
            if not answered:
                # Shielded and bounded: the app may return (its call cancelled) while the last note goes in.
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECONDS):
                    await self._cancel(scope, ids)

        # A plain asyncio task, not an anyio task group: uvicorn serves on asyncio only, and the group's scopes cost
        # every call about a twentieth of the gate's CPU under load (bench/fleet.py, profiled with py-spy).
        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await self.app(scope, watched_receive, watched_send)
        finally:
            if not gone.is_set():
                watcher.cancel()  # still only waiting for the disconnect
            else:  # handing the session its cancellations (bounded): let that finish even if this call is cancelled
                await asyncio.shield(watcher)

    async def _cancel(self, scope: Scope, ids: list[Any]) -> None:
        """Each request cancelled through the session, as a client's own notification would (same headers, so the
        same session and agent); a request already answered ignores it."""
        for request_id in ids:
            params = {"requestId": request_id, "reason": REASON}
            body = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode()
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            sent: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

            async def discard(_message: Message) -> None:
                pass

            try:
                await self.app({**scope, "headers": headers}, _replaying(sent, _never), discard)
            except Exception:  # noqa: BLE001 - the call ends with its session anyway; this only ends it sooner
                logger.warning("a call whose client left could not be cancelled", exc_info=True)


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay


async def _never() -> Message:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")
