"""The client connections a server is speaking with, for what it tells them unasked (tools/list_changed).

A low-level handler's context names the request's session, which lives for that request only: a set of
sessions forgets every client once its request has answered, so a registry change noticed later (by the
poller: another gate, the CLI) told no one. The connection a session wraps outlives it; it is kept here until
it closes.
"""

import contextlib

from mcp.server.connection import Connection

from write_gate.surface.mcp_context import GateContext


def connection_of(ctx: GateContext) -> Connection:
    """The client connection a request came on. The low-level handlers' context names only the request's session
    (which lives for that request); the connection it wraps outlives it."""
    return ctx.session._connection  # noqa: SLF001 - the SDK's handler context exposes no other way to it


class Connections:
    def __init__(self) -> None:
        self._open: set[Connection] = set()

    def add(self, ctx: GateContext) -> None:
        connection = connection_of(ctx)
        if connection not in self._open:
            self._open.add(connection)
            connection.exit_stack.callback(self._open.discard, connection)

    async def tools_changed(self) -> None:
        """`notifications/tools/list_changed` to every open connection."""
        for connection in list(self._open):
            with contextlib.suppress(Exception):  # a gone or deaf client loses nothing
                await connection.send_tool_list_changed()
