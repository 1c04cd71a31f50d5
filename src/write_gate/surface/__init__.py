"""The MCP surface: tool specs and profiles, the server, its transports and HTTP security.
The only code that imports the MCP SDK or Starlette.
"""
