"""The `space` argument every tool takes when the server serves spaces: added to the schemas listed to an agent
whose grant gives it a choice of spaces, and taken off the arguments before the tool's own model sees them, so no
tool model knows of spaces (and a server without spaces advertises, and accepts, exactly what it did before)."""

from typing import Any

import mcp_types as types

SPACE = "space"
SPACE_PROPERTY = {"type": "string", "description": "Space (default: your first)"}


def with_space(tool: types.Tool) -> types.Tool:
    schema = dict(tool.input_schema)
    schema["properties"] = {**schema.get("properties", {}), SPACE: SPACE_PROPERTY}
    return tool.model_copy(update={"input_schema": schema})


def take_space(arguments: dict[str, Any] | None) -> tuple[object | None, dict[str, Any]]:
    """The requested space (None: the grant's default) and the tool's own arguments."""
    rest = dict(arguments or {})
    return rest.pop(SPACE, None), rest
