"""The client tier's driver for the Python SDK 1.x (run by a venv that has `mcp<2` and nothing of this repo):
connect over stdio or streamable HTTP, check every tool's schemas with jsonschema, make the scenario's calls,
and print what the agent received as one JSON line. It asserts nothing: tests/clients/scenario.py decides."""

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from importlib.metadata import version

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError
from mcp.types import ResourceTemplateReference


def checker(schema: dict) -> tuple[jsonschema.protocols.Validator | None, str | None]:
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return None, exc.message
    return cls(schema), None


async def main(config: dict) -> dict:
    async with AsyncExitStack() as stack:
        if config["transport"] == "stdio":
            params = StdioServerParameters(command=config["command"], args=config["args"], env=config["env"])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            headers = {"Authorization": f"Bearer {config['token']}"}
            read, write, _ = await stack.enter_async_context(streamablehttp_client(config["url"], headers=headers))
        session = await stack.enter_async_context(ClientSession(read, write))
        init = await session.initialize()
        report: dict = {
            "client": f"python-sdk {version('mcp')}",
            "capabilities": init.capabilities.model_dump(by_alias=True, exclude_none=True),
            "tools": [],
            "schema_errors": [],
            "calls": [],
        }
        outputs = {}
        for tool in (await session.list_tools()).tools:
            report["tools"].append(tool.name)
            _, error = checker(tool.inputSchema)
            if error:
                report["schema_errors"].append([tool.name, f"inputSchema: {error}"])
            if tool.outputSchema is None:
                report["schema_errors"].append([tool.name, "no outputSchema"])
                continue
            outputs[tool.name], error = checker(tool.outputSchema)
            if error:
                report["schema_errors"].append([tool.name, f"outputSchema: {error}"])
        for call in config["calls"]:
            try:
                result = await session.call_tool(call["name"], call["arguments"])
            except McpError as exc:
                report["calls"].append({"error": {"code": exc.error.code, "message": exc.error.message}})
                continue
            except Exception as exc:  # noqa: BLE001 - what the agent would see: the client's own error
                report["calls"].append({"error": {"code": None, "message": f"{type(exc).__name__}: {exc}"}})
                continue
            validator = outputs.get(call["name"])
            errors = [e.message for e in validator.iter_errors(result.structuredContent)] if validator else ["none"]
            text = "\n".join(c.text for c in result.content if c.type == "text")
            report["calls"].append(
                {
                    "isError": bool(result.isError),
                    "structured": result.structuredContent,
                    "text": text,
                    "outputValid": True if not errors else "; ".join(errors),
                }
            )
        resources = await session.list_resources()
        templates = await session.list_resource_templates()
        read_result = await session.read_resource("write-gate://schema")
        completion = await session.complete(
            ResourceTemplateReference(type="ref/resource", uri="write-gate://schema/{name}"),
            {"name": "name", "value": "Pe"},
        )
        report["resources"] = {
            "list": [str(r.uri) for r in resources.resources],
            "templates": [t.uriTemplate for t in templates.resourceTemplates],
            "readOk": bool(json.loads(read_result.contents[0].text)["node_labels"]),
            "completion": completion.completion.values,
        }
        return report


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        print(json.dumps(asyncio.run(main(json.load(handle)))))
