"""MCP over stdio that answers every line, as JSON-RPC 2.0 (section 5.1) says.

The SDK's stdio transport drops a line it cannot read as a message, so the client waits for its timeout.
Here each line is looked at first: what is not JSON is answered -32700 (id null), JSON that is not a
JSON-RPC 2.0 message -32600 (with its id when one can be read); the line is then dropped and serving goes
on. Lines that are messages go to the SDK's transport unchanged, which keeps its handling of stdout (fd 1
points at stderr while serving, so stray prints cannot corrupt the protocol).
"""

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

# Which member of the message union a JSON object most likely meant, by the keys it has.
_MEANT = (("result", "JSONRPCResponse"), ("error", "JSONRPCError"))


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _readable_id(raw: Any) -> str | int | None:
    """The id to answer with: a string or an integer (MCP ids are never null, fractional or boolean)."""
    value = raw.get("id") if isinstance(raw, dict) else None
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def _problems(raw: Any, exc: ValidationError | None) -> str:
    """What is wrong, in the words of the union member the object meant; never its values."""
    if not isinstance(raw, dict):
        return "a message must be a JSON object (batches are not part of MCP)"
    if "id" in raw and _readable_id(raw) is None:
        return "id must be a string or an integer"
    meant = next((member for key, member in _MEANT if key in raw), None)
    meant = meant or ("JSONRPCRequest" if "id" in raw else "JSONRPCNotification")
    errors = exc.errors(include_input=False, include_url=False) if exc is not None else []
    found = [e for e in errors if e["loc"][:1] == (meant,)] or errors
    return "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'message'}: {e['msg']}" for e in found[:5])


def triage(line: str) -> types.JSONRPCError | None:
    """None for a line that is a JSON-RPC message; otherwise the error to answer it with. Pure."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        try:
            raw = pydantic_core.from_json(line)
        except ValueError as parse_error:  # the same words as the SDK's HTTP transport
            return _error(None, PARSE_ERROR, f"Parse error: {parse_error}")
        return _error(_readable_id(raw), INVALID_REQUEST, f"Invalid request: {_problems(raw, exc)}")
    # The SDK reads {"id": true, "method": ...} as a notification and never answers it; it is a bad request.
    if isinstance(message, types.JSONRPCNotification):
        raw = pydantic_core.from_json(line)
        if "id" in raw:
            return _error(None, INVALID_REQUEST, f"Invalid request: {_problems(raw, None)}")
    return None


class _AnsweredLines:
    """stdin as the SDK's transport reads it (an async iterable of lines), less the lines that are not
    messages, which are answered on the transport's own write stream (so one writer owns stdout)."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._answers: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream: Any) -> None:
        self._answers = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue  # an empty line carries no message, so there is nothing to answer
            error = triage(line)
            if error is None:
                yield line
                continue
            await self._ready.wait()
            try:
                await self._answers.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server is shutting down


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[Any, Any]]:
    """`(read_stream, write_stream)` for `Server.run`, over this process's stdin and stdout."""
    # Invalid UTF-8 becomes U+FFFD rather than ending the transport (the SDK decodes the same way).
    stdin = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = _AnsweredLines(anyio.wrap_file(stdin))
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_on(write_stream)
            yield read_stream, write_stream
    finally:
        stdin.detach()  # sys.stdin's buffer is not ours to close
