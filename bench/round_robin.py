"""A plain round-robin HTTP load balancer, as small as one can be: each request goes to the next upstream in turn,
on a connection of its own (`Connection: close`), and the answer is relayed as it comes (an event stream too).
What `serve --stateless` replicas are for; bench/fleet.py and tests/e2e/test_stateless_replicas.py start it.

It knows no MCP and keeps nothing per client: a request with a session id may land on a replica that never saw
that session. Request bodies are read by Content-Length (what MCP clients send); chunked request bodies are not
supported.
"""

import asyncio
import itertools
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

HOP_BY_HOP = {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"upgrade"}


class RoundRobin:
    def __init__(self, upstreams: list[tuple[str, int]]) -> None:
        self.upstreams = upstreams
        self._next = itertools.cycle(range(len(upstreams)))
        self.served: Counter[int] = Counter()  # requests sent to each upstream, by its index
        self.relaying: set[asyncio.Task[None]] = set()  # closed with the balancer: a client may hold one open

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        request_line, *lines = head[:-4].split(b"\r\n")
        headers = [line for line in lines if line.split(b":", 1)[0].strip().lower() not in HOP_BY_HOP]
        length = next((int(h.split(b":", 1)[1]) for h in headers if h.lower().startswith(b"content-length:")), 0)
        body = await reader.readexactly(length) if length else b""
        index = next(self._next)
        self.served[index] += 1
        host, port = self.upstreams[index]
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        up_writer.write(b"\r\n".join([request_line, *headers, b"connection: close", b"", b""]) + body)
        await up_writer.drain()
        try:
            while chunk := await up_reader.read(65536):  # the upstream closes after its answer
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            up_writer.close()
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.relaying.add(task)
        try:
            await self._one(reader, writer)
        except ConnectionError:
            pass
        finally:
            self.relaying.discard(task)
            writer.close()

    async def close(self) -> None:
        for task in list(self.relaying):
            task.cancel()
        await asyncio.gather(*self.relaying, return_exceptions=True)


@asynccontextmanager
async def round_robin(upstreams: list[tuple[str, int]], port: int = 0) -> AsyncIterator[tuple[RoundRobin, str]]:
    """The balancer on 127.0.0.1 (a free port unless one is given), and its URL, until the block ends."""
    balancer = RoundRobin(upstreams)
    server = await asyncio.start_server(balancer._serve, "127.0.0.1", port)  # noqa: SLF001 - its own handler
    bound = server.sockets[0].getsockname()[1]
    async with server:
        try:
            yield balancer, f"http://127.0.0.1:{bound}"
        finally:
            await balancer.close()
