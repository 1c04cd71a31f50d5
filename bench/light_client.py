"""A light MCP client for load: JSON-RPC over HTTP/1.1 keep-alive on a bare asyncio stream, for servers answering
`application/json` (`--http-response json`; the SDK's `json_response`). It costs a fraction of what the SDK's client
costs a call (no models, no task groups, no streams), so a load run on a small machine measures the servers rather
than the clients sharing their cores.

It opens a session where the server keeps them (an `initialize`, its `Mcp-Session-Id` sent after) and none where it
does not (`--stateless`), and opens a connection again when the server (or a balancer) closes it after an answer.
"""

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

PROTOCOL = "2025-06-18"


class CallFailed(Exception):
    """The answer was no JSON-RPC result (an HTTP error, a JSON-RPC error, or a connection lost)."""


@dataclass
class LightSession:
    url: str
    token: str | None = None
    session_id: str | None = None
    _reader: asyncio.StreamReader | None = field(default=None, repr=False)
    _writer: asyncio.StreamWriter | None = field(default=None, repr=False)
    _id: int = 0

    async def _connect(self) -> None:
        parts = urlsplit(self.url)
        self._reader, self._writer = await asyncio.open_connection(parts.hostname, parts.port)

    def _head(self, body: bytes) -> bytes:
        parts = urlsplit(self.url)
        lines = [
            f"POST {parts.path or '/'} HTTP/1.1",
            f"Host: {parts.hostname}:{parts.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"MCP-Protocol-Version: {PROTOCOL}",
            f"Content-Length: {len(body)}",
        ]
        if self.token:
            lines.append(f"Authorization: Bearer {self.token}")
        if self.session_id:
            lines.append(f"Mcp-Session-Id: {self.session_id}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """One request and its answer: status, headers (lower-case names), body."""
        body = json.dumps(message, separators=(",", ":")).encode()
        for attempt in (0, 1):  # a kept-alive connection the server closed meanwhile: once more, on a new one
            if self._writer is None:
                await self._connect()
            assert self._reader is not None and self._writer is not None
            try:
                self._writer.write(self._head(body) + body)
                head = await self._reader.readuntil(b"\r\n\r\n")
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt:
                    raise CallFailed("the connection was lost") from None
                continue
            status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
            headers = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            payload = await self._reader.readexactly(int(headers.get("content-length", "0")))
            if headers.get("connection", "").lower() == "close":
                await self.close()
            return int(status_line.split()[1]), headers, payload
        raise CallFailed("unreachable")

    async def open(self, stateless: bool) -> None:
        """`initialize` and `notifications/initialized`, keeping the session id, unless the server keeps none."""
        if stateless:
            return
        status, headers, _ = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "light-client", "version": "1"},
                },
            }
        )
        if status != 200:
            raise CallFailed(f"initialize answered {status}")
        self.session_id = headers.get("mcp-session-id")
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's result; CallFailed where it is none or says `isError`."""
        self._id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self._id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        status, _headers, payload = await self.post(message)
        if status != 200:
            raise CallFailed(f"HTTP {status}")
        answer = json.loads(payload)
        result = answer.get("result")
        if result is None or result.get("isError"):
            raise CallFailed(str(answer.get("error") or result)[:200])
        return result

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError):
                await self._writer.wait_closed()
        self._reader = self._writer = None
