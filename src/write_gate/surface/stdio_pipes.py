"""stdin and stdout served on the event loop when they are pipes or sockets (as an MCP client starts a server).

The SDK reads each stdin line, and writes and then flushes each answer, in a worker thread: three thread
hand-offs a call, each a wake-up of another thread, which on a busy machine costs more than the gate's own
checks. A pipe can be read and written without blocking, so here the loop does both itself. Anything else (a
regular file, a terminal, /dev/null) is read by the SDK's threads, which serve every kind of file.
"""

import asyncio
import fcntl
import os
import stat
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

from write_gate.surface.malformed import decoded

# No bound of our own on a line's length, as the SDK's text reader has none: the gate's max_request_bytes
# answers an oversized call (this is only where asyncio's reader would otherwise refuse a long line).
LINE_LIMIT = 2**31 - 1


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop; None under another anyio backend (the SDK's threads serve there)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _pipe_reader(fd: int) -> asyncio.StreamReader | None:
    """A reader of a private duplicate of `fd`, or None when the loop cannot watch it."""
    loop = _asyncio_loop()
    mode = os.fstat(fd).st_mode
    # Pipes and sockets only: asyncio takes a character device too, and only then finds (in a callback, where no
    # caller sees it) that epoll refuses /dev/null: a server started with stdin from /dev/null waited forever.
    if loop is None or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    pipe = os.fdopen(os.dup(fd), "rb", buffering=0)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except (ValueError, OSError):  # a regular file or another kind the loop cannot watch
        pipe.close()
        return None
    return reader


async def pipe_lines(fd: int = 0) -> AsyncIterator[str] | None:
    """The lines of `fd` as text (a byte that is no UTF-8 as a lone surrogate, malformed.decoded; `\\r\\n` and
    a lone `\\r` ending a line, as the SDK's text reader reads them), or None when `fd` is not something the loop
    can watch."""
    reader = await _pipe_reader(fd)
    return None if reader is None else _lines(reader)


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str]:
    while line := await reader.readline():
        text = decoded(line)  # a byte that is no UTF-8 as a lone surrogate: malformed.readable judges it
        if "\r" not in text:
            yield text
            continue
        for piece in text.replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True):
            yield piece


class PipeWriter:
    """What the SDK's stdout writer calls (`write`, then `flush`), on a pipe the loop writes without a thread."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        if not self._writer.transport.is_closing():  # closed by the client: nobody reads what would follow
            self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        # With no high-water mark: until the pipe took every byte, as a flush does. A client that closed its end
        # reads nothing more; what is left for it is dropped, not a crash of the gate.
        with suppress(ConnectionResetError, BrokenPipeError):
            await self._writer.drain()


class _WatchedProtocol(asyncio.StreamReaderProtocol):
    """Tells when the pipe's reader has gone: asyncio watches a write pipe for its other end closing."""

    def __init__(self, on_closed: Callable[[], None]) -> None:
        super().__init__(asyncio.StreamReader())
        self._on_closed = on_closed

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._on_closed()


@asynccontextmanager
async def pipe_stdout(on_closed: Callable[[], None] = lambda: None) -> AsyncIterator[PipeWriter | None]:
    """The protocol's stdout as a PipeWriter, while fd 1 points at stderr (so a stray print cannot corrupt the
    protocol, as the SDK arranges for its own writer); None when stdout is not a pipe or socket. `on_closed` is
    called once the client has closed its end: no answer can reach it any more."""
    loop = _asyncio_loop()
    if loop is None:
        yield None
        return
    private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    pipe = os.fdopen(private, "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(lambda: _WatchedProtocol(on_closed), pipe)
    except (ValueError, OSError):
        pipe.close()
        yield None
        return
    transport.set_write_buffer_limits(high=0)
    diverted = os.dup(1)
    os.dup2(2, 1)
    try:
        yield PipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))
    finally:
        os.dup2(diverted, 1)  # the wire back on fd 1
        os.close(diverted)
        with suppress(Exception):
            transport.close()
