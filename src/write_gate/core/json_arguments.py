"""Arguments a client sent JSON-encoded: an array or an object given as its JSON text; and a boolean given where a
number is due, which validation would read as 1 or 0. Pure.

Models sometimes double-encode a structured argument (`"nodes": "[{...}]"`), and a command-line client that
does not know a tool's input schema (a tool its session does not list) sends every value as text. Where an
argument's schema takes no text at all, a string that decodes to an array or an object the schema takes is read as
that value. Anything else is left as it came, for validation to accept or refuse as before: an argument that may
be text is never decoded.
"""

import json
from collections.abc import Mapping
from typing import Any

_STRUCTURED = {"array": list, "object": dict}


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    """The JSON types a schema takes; None where it does not say (any value)."""
    if "anyOf" in schema or "oneOf" in schema:
        found: set[str] = set()
        for branch in schema.get("anyOf", schema.get("oneOf", [])):
            types = _types(branch)
            if types is None:
                return None
            found |= types
        return found
    kind = schema.get("type")
    if kind is None:
        return None
    return {kind} if isinstance(kind, str) else set(kind)


def structured_arguments(schema: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Each top-level argument that takes an array or an object and never a string, with the structured types
    it takes."""
    found = {}
    for name, spec in schema.get("properties", {}).items():
        types = _types(spec)
        if types is not None and "string" not in types and types & _STRUCTURED.keys():
            found[name] = frozenset(types & _STRUCTURED.keys())
    return found


def decoded(arguments: Mapping[str, Any], structured: Mapping[str, frozenset[str]]) -> dict[str, Any]:
    """The arguments, with each structured one given as JSON text read as the value it encodes."""
    out = arguments if isinstance(arguments, dict) else dict(arguments)
    for name, kinds in structured.items():
        value = out.get(name)
        if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
            continue
        try:
            parsed = json.loads(value)
        except ValueError:
            continue  # not JSON: validation says what it is not
        if any(isinstance(parsed, _STRUCTURED[kind]) for kind in kinds):
            out = {**out, name: parsed}  # the caller's mapping is left as it came
    return out


_NUMBERS = {"integer", "number"}


def numeric_arguments(schema: Mapping[str, Any]) -> frozenset[str]:
    """Each top-level argument that takes a number and never a boolean."""
    found = set()
    for name, spec in schema.get("properties", {}).items():
        types = _types(spec)
        if types is not None and types & _NUMBERS and "boolean" not in types:
            found.add(name)
    return frozenset(found)


def boolean_for_number(arguments: Mapping[str, Any], numeric: frozenset[str]) -> str | None:
    """The first numeric argument given true or false (JSON Schema's booleans are no numbers; pydantic's lax ints
    and floats would take them as 1 and 0), or None."""
    return next((name for name in numeric if isinstance(arguments.get(name), bool)), None)
