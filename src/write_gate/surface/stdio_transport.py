"""MCP over stdio that answers every line, as JSON-RPC 2.0 (section 5.1) says.

The SDK's stdio transport drops a line it cannot read as a message, so the client waits for its timeout.
Here each line is looked at first (malformed.triage): what is not JSON is answered -32700 (id null), JSON
that is not a JSON-RPC 2.0 message -32600 (with its id when one can be read); the line is then dropped and
serving goes on. Lines that are messages go to the SDK's transport unchanged. While serving, fd 1 points at stderr
(the SDK's arrangement, or stdio_pipes' when it writes the pipe itself), so stray prints cannot corrupt the protocol.
The end of stdin reaches the SDK only once every request read has been answered (answers_owed).
"""

import sys
from collections.abc import AsyncIterable, AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from write_gate.surface.answers_owed import AnswersOwed, CountedAnswers
from write_gate.surface.malformed import read_line, readable
from write_gate.surface.stdio_pipes import pipe_lines, pipe_stdout


class _AnsweredLines:
    """stdin as the SDK's transport reads it (an async iterable of lines), less the lines that are not
    messages, which are answered on the transport's own write stream (so one writer owns stdout). Its end is
    held back until the requests it passed on are answered."""

    def __init__(self, source: AsyncIterable[str], owed: AnswersOwed) -> None:
        self._source = source
        self._owed = owed
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
            line = readable(line)  # lone surrogates in a tools/call: the call refuses them (malformed.readable)
            message, error = read_line(line)
            if message is not None:
                self._owed.read(message)
                yield line
                continue
            assert error is not None  # read_line answers a message or the error for a line that is none
            await self._ready.wait()
            try:
                await self._answers.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server is shutting down
        await self._owed.settled()


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[Any, Any]]:
    """`(read_stream, write_stream)` for `Server.run`, over this process's stdin and stdout: on the event loop
    when they are pipes (stdio_pipes), else through the SDK's threads."""
    source: AsyncIterable[str] | None = await pipe_lines(0)
    stdin = None
    if source is None:
        # Invalid UTF-8 is kept as lone surrogates rather than ending the transport: malformed.readable makes them
        # a tool call's refusal, and U+FFFD elsewhere (as the SDK decodes them).
        stdin = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
        source = anyio.wrap_file(stdin)
    owed = AnswersOwed()
    lines = _AnsweredLines(source, owed)
    try:
        async with (
            # None: the SDK claims stdout and writes it from its thread. Once the client has closed it, the answers
            # owed are owed to nobody: stdin's end goes on to the SDK at once, which cancels the calls running.
            pipe_stdout(on_closed=owed.nobody_reads) as stdout,
            # The SDK types stdin as an anyio AsyncFile but only iterates its lines, which _AnsweredLines gives.
            stdio_server(stdin=lines, stdout=stdout) as (read_stream, write_stream),  # type: ignore[arg-type]
        ):
            lines.answer_on(write_stream)
            yield read_stream, CountedAnswers(write_stream, owed)
    finally:
        if stdin is not None:
            stdin.detach()  # sys.stdin's buffer is not ours to close
