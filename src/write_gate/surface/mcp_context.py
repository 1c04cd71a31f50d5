"""The request context the SDK hands every MCP handler of the gate, named once.

Its lifespan state is the gate's `Services`; its `request` is the Starlette request over streamable HTTP
and None over stdio.
"""

from mcp.server.context import ServerRequestContext
from starlette.requests import Request

from write_gate.surface.tool_spec import Services

GateContext = ServerRequestContext[Services, Request]
