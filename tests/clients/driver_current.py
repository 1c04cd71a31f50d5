"""The client tier's driver for this repository's Python SDK (2.x), run inside pytest over a real transport:
the same checks and the same report as the other drivers (see driver_py1.py)."""

import json
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any

import jsonschema
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def _checker(schema: dict[str, Any]) -> tuple[Any, str | None]:
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return None, exc.message
    return cls(schema), None


async def drive(config: dict[str, Any]) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        if config["transport"] == "stdio":
            server: Any = StdioServerParameters(command=config["command"], args=config["args"], env=config["env"])
        else:
            http = await stack.enter_async_context(
                create_mcp_http_client(headers={"Authorization": f"Bearer {config['token']}"})
            )
            server = streamable_http_client(config["url"], http_client=http)
        client = await stack.enter_async_context(Client(server, read_timeout_seconds=60))
        report: dict[str, Any] = {"client": f"python-sdk {version('mcp')}", "tools": [], "schema_errors": []}
        report["calls"] = []
        outputs = {}
        for tool in (await client.list_tools()).tools:
            report["tools"].append(tool.name)
            _, error = _checker(tool.input_schema)
            if error:
                report["schema_errors"].append([tool.name, f"inputSchema: {error}"])
            if tool.output_schema is None:
                report["schema_errors"].append([tool.name, "no outputSchema"])
                continue
            outputs[tool.name], error = _checker(tool.output_schema)
            if error:
                report["schema_errors"].append([tool.name, f"outputSchema: {error}"])
        for call in config["calls"]:
            try:
                result = await client.call_tool(call["name"], call["arguments"])
            except MCPError as exc:
                report["calls"].append({"error": {"code": exc.code, "message": exc.message}})
                continue
            validator = outputs.get(call["name"])
            errors = [e.message for e in validator.iter_errors(result.structured_content)] if validator else ["none"]
            report["calls"].append(
                {
                    "isError": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": "\n".join(c.text for c in result.content if isinstance(c, types.TextContent)),
                    "outputValid": True if not errors else "; ".join(errors),
                }
            )
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource("write-gate://schema")
        ref = types.ResourceTemplateReference(uri="write-gate://schema/{name}")
        completion = await client.complete(ref, {"name": "name", "value": "Pe"})
        report["resources"] = {
            "list": [r.uri for r in resources.resources],
            "templates": [t.uri_template for t in templates.resource_templates],
            "readOk": bool(json.loads(read.contents[0].text)["node_labels"]),
            "completion": completion.completion.values,
        }
        return report
