"""Messages that are not JSON-RPC 2.0, and the answer JSON-RPC (section 5.1) gives them, for both transports.

What is not JSON is a parse error (-32700, id null); JSON that is not a message is an invalid request
(-32600, with its id when one can be read). JSON the SDK's parser refuses but Python's reads (a lone surrogate's
escape, which is valid JSON but no Unicode text; nesting past the parser's depth) is answered with its id where one
can be read, so the client's request is answered rather than left waiting; a lone surrogate in a `tools/call` is
made a NUL first (`readable`), so the tool refuses it as its own INVALID_INPUT, as errors.md has it. Over stdio
each line goes through `triage`; over HTTP `AnswerMalformedPosts` does the same for each POST body, so both
transports answer alike (the SDK's HTTP transport says -32602 for an invalid request, and takes `{"id": true,
...}` for a notification).
"""

import json
import re
from typing import Any

import mcp_types as types
import pydantic_core
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from write_gate.core.model import ErrorCode

# Which member of the message union a JSON object most likely meant, by the keys it has.
_MEANT = (("result", "JSONRPCResponse"), ("error", "JSONRPCError"))


def _error(request_id: Any, code: int, message: str, data: Any = None) -> types.JSONRPCError:
    error = types.ErrorData(code=code, message=message, data=data)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


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


def read_line(line: str) -> tuple[types.JSONRPCMessage | None, types.JSONRPCError | None]:
    """`(message, None)` for a line that is a JSON-RPC message; `(None, error)` with the error to answer a line
    that is not. Pure."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        try:
            raw = pydantic_core.from_json(line)
        except ValueError as parse_error:  # the same words as the SDK's HTTP transport
            return None, _unparsed(line, parse_error)
        return None, _error(_readable_id(raw), INVALID_REQUEST, f"Invalid request: {_problems(raw, exc)}")
    # The SDK reads {"id": true, "method": ...} as a notification and never answers it; it is a bad request.
    if isinstance(message, types.JSONRPCNotification):
        raw = pydantic_core.from_json(line)
        if "id" in raw:
            return None, _error(None, INVALID_REQUEST, f"Invalid request: {_problems(raw, None)}")
    return message, None


def _unparsed(line: str, parse_error: ValueError) -> types.JSONRPCError:
    """The answer to a line the SDK's parser refuses: with its id where Python's own parser reads one."""
    try:
        raw = json.loads(line)
    except RecursionError:  # nested past Python's parser too: its id read without descending
        return _error(_shallow_id(line), PARSE_ERROR, f"Parse error: {parse_error}")
    except ValueError:
        return _error(None, PARSE_ERROR, f"Parse error: {parse_error}")
    if not _is_unicode(raw):
        message = (
            "Invalid params: a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is "
            "not Unicode text and which no engine stores"
        )
        return _error(_readable_id(raw), INVALID_PARAMS, message, {"error_code": ErrorCode.INVALID_INPUT.value})
    return _error(_readable_id(raw), PARSE_ERROR, f"Parse error: {parse_error}")


_NUMBER = re.compile(r"-?\d+")


def _shallow_id(line: str) -> str | int | None:
    """The `id` of a top-level JSON object, read without parsing what is nested in it (a message nested past
    every parser's depth still has its request answered, not left waiting); None where there is none to read."""
    depth, i, end = 0, 0, len(line)
    while i < end:
        c = line[i]
        if c == '"':
            close = i + 1
            while close < end and line[close] != '"':
                close += 2 if line[close] == "\\" else 1
            key, i = line[i + 1 : close], close + 1
            rest = line[i:].lstrip()
            if depth == 1 and key == "id" and rest[:1] == ":":
                value = rest[1:].lstrip()
                if value[:1] == '"':
                    try:
                        found = json.JSONDecoder().raw_decode(value)[0]
                    except ValueError:
                        return None
                    return found if isinstance(found, str) else None
                number = _NUMBER.match(value)
                return (
                    int(number.group())
                    if number and value[number.end() : number.end() + 1] in (",", "}", " ", "")
                    else None
                )
            continue
        depth += c in "[{"
        depth -= c in "]}"
        i += 1
    return None


def _is_unicode(raw: Any) -> bool:
    try:
        json.dumps(raw, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True


def readable(line: str) -> str:
    """The line, with each lone surrogate in a `tools/call` request's strings made a NUL: the SDK's parser takes
    that, and the call path refuses it as it refuses a NUL (INVALID_INPUT, a tool's structured rejection, naming
    where it is), as errors.md has it for either character. A lone surrogate comes as an escape (`\\udc00`), or as
    a byte that is no UTF-8, which the transports decode with `surrogateescape` (`decoded`): in any other message
    such a byte is U+FFFD, as the SDK reads it. Pure."""
    # Cheap first, on every message: an ASCII line holds no raw surrogate (isascii reads a flag), and an escape's
    # case is one of two spellings, found without a lowered copy of the line.
    raw_bytes = not line.isascii() and not _text(line)
    if not raw_bytes and "\\ud" not in line and "\\uD" not in line:
        return line
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        raw = None
    if not isinstance(raw, dict) or raw.get("method") != "tools/call" or _is_unicode(raw):
        return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if raw_bytes else line
    return json.dumps(_surrogates_as_nul(raw), ensure_ascii=False)


def decoded(data: bytes) -> str:
    """A line or body as text, a byte that is no UTF-8 kept as a lone surrogate for `readable` to judge."""
    return data.decode("utf-8", "surrogateescape")


def _surrogates_as_nul(value: Any) -> Any:
    if isinstance(value, str):
        return "".join("\x00" if "\ud800" <= c <= "\udfff" else c for c in value) if not _text(value) else value
    if isinstance(value, dict):
        return {_surrogates_as_nul(k): _surrogates_as_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_surrogates_as_nul(v) for v in value]
    return value


def _text(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def triage(line: str) -> types.JSONRPCError | None:
    """None for a line that is a JSON-RPC message; otherwise the error to answer it with. Pure."""
    return read_line(line)[1]


class AnswerMalformedPosts:
    """ASGI wrapper for the MCP endpoint: a POST body that is not a JSON-RPC message gets HTTP 400 with the
    JSON-RPC error `triage` gives; anything else (and a body over `max_body`, which the SDK refuses with
    413) goes on to the app as it came."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        size, complete = 0, False
        while size <= self.max_body:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                complete = True
                break
        if complete and size <= self.max_body:
            body = b"".join(m.get("body", b"") for m in received)
            text = decoded(body)
            if (rewritten := readable(text)) is not text:  # lone surrogates in a tools/call: the call refuses them
                received = [{"type": "http.request", "body": rewritten.encode(), "more_body": False}]
                text = rewritten
            error = triage(text)
            if error is not None:
                await _answer(send, error)
                return

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)


async def _answer(send: Send, error: types.JSONRPCError) -> None:
    body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
