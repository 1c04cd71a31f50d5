"""The JSON Schemas a tool advertises, generated from its pydantic models and made compact.

One source of truth: the models that validate a call and shape its answer are the models the schemas
come from. What is sent is trimmed of what no client or agent uses (titles, `additionalProperties: true`,
`default: null`, `$defs` used once), so every agent pays less context for the same contract.

An output schema only tells a success from a rejection: TypeScript SDK v1 clients validate
`structuredContent` against it even when `isError` is true, and answer -32602 when it does not match. So it
names `status` with its two values (`written` or `rejected`, say) where the success has a status, and else the
fields a success always carries against a rejection's `error_code`; what the fields hold is the answer's, and
the tool's description names the ones that matter. The top level stays `type: object`, as MCP requires.
"""

import json
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from pydantic import BaseModel

from write_gate.core.json_arguments import numeric_arguments, structured_arguments
from write_gate.core.model import Rejected

Schema = dict[str, Any]

# Keywords whose value is one schema, or a list of schemas, or a map of names to schemas.
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "patternProperties")
_REF = "#/$defs/"
_REJECTED = Rejected.model_fields["status"].default


@cache
def input_schema(model: type[BaseModel], description_depth: int | None = None) -> Schema:
    """`description_depth=1`: describe the top-level arguments only (a batch's items are described by the
    single-item tool they repeat)."""
    schema = model.model_json_schema(by_alias=True)
    return compact(schema, keep_descriptions=True, description_depth=description_depth)


@cache
def structured_inputs(model: type[BaseModel]) -> dict[str, frozenset[str]]:
    """The arguments a call may give as JSON text (core.json_arguments), once per tool."""
    return structured_arguments(input_schema(model))


@cache
def numeric_inputs(model: type[BaseModel]) -> frozenset[str]:
    """The arguments that take a number and never true or false (core.json_arguments), once per tool."""
    return numeric_arguments(input_schema(model))


@cache
def output_schema(success: type[BaseModel]) -> Schema:
    """How a client tells the two outcomes apart, in few bytes: `status` and its two values where the success
    has a status, else the fields a success always carries against a rejection's error_code."""
    schema = compact(success.model_json_schema(by_alias=True, mode="serialization"), keep_descriptions=False)
    properties, defs = schema.get("properties", {}), schema.get("$defs", {})
    status = properties.get("status", {}).get("const")
    if status is not None:
        return {"type": "object", "properties": {"status": {"enum": [status, _REJECTED]}}, "required": ["status"]}
    required = schema.get("required", [])
    fields = {name: _top_level(properties[name], defs) for name in required}
    # Each branch declares what it requires: Ajv's strict mode (TypeScript clients) wants it there.
    rejected = {"properties": {"error_code": {"type": "string"}}, "required": ["error_code"]}
    return {"type": "object", "anyOf": [{"properties": fields, "required": required}, rejected]}


def _top_level(spec: Schema, defs: dict[str, Schema]) -> Schema:
    """A field's JSON type at the answer's top level (an array, not what it holds)."""
    ref = spec.get("$ref", "")
    if ref.startswith(_REF) and ref[len(_REF) :] in defs:
        spec = defs[ref[len(_REF) :]]
    return {"type": spec["type"]} if "type" in spec else {}


def compact(schema: Schema, *, keep_descriptions: bool, description_depth: int | None = None) -> Schema:
    """The same constraints in fewer bytes (pure: returns a new schema)."""
    defs = schema.get("$defs", {})
    opts = _Options(keep_descriptions, description_depth)
    walked = {name: _walk(d, {}, opts) for name, d in defs.items()}
    uses = _count_refs({k: v for k, v in schema.items() if k != "$defs"} | {"$defs": walked})
    # Inline a definition used once, or smaller than a reference to it; keep the rest (never a recursive one).
    inline = {
        name: d
        for name, d in walked.items()
        if not _refers(d, name) and (uses.get(name, 0) <= 1 or len(json.dumps(d)) <= len(_REF + name) + 12)
    }
    top = {k: v for k, v in schema.items() if k not in ("$defs", "description")}  # the tool's text says it
    out = _walk(top, inline, opts)
    kept = {name: _walk(d, inline, opts) for name, d in walked.items() if name not in inline}
    kept = {name: d for name, d in kept.items() if name in _count_refs({"root": out, "defs": kept})}
    if kept:
        out["$defs"] = kept
    return out


@dataclass(frozen=True)
class _Options:
    keep_descriptions: bool
    description_depth: int | None = None  # how many levels of `properties` keep their descriptions
    depth: int = 0

    def deeper(self) -> "_Options":
        return replace(self, depth=self.depth + 1)

    @property
    def describe(self) -> bool:
        return self.keep_descriptions and (self.description_depth is None or self.depth <= self.description_depth)


def _walk(node: Schema, inline: dict[str, Schema], opts: _Options) -> Schema:
    ref = node.get("$ref", "")
    if ref.startswith(_REF) and ref[len(_REF) :] in inline:
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        node = {**inline[ref[len(_REF) :]], **siblings}
    out: Schema = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "description" and not opts.describe:
            continue
        if key == "default" and (value is None or not opts.keep_descriptions):
            continue
        if key == "additionalProperties" and value is True and "properties" not in node:
            continue  # a plain map's; beside declared properties it says the object is open on purpose
        if key == "type" and "const" in node:
            continue  # the constant says it
        if key in _ONE and isinstance(value, dict):
            out[key] = _walk(value, inline, opts)
        elif key in _MANY:
            out[key] = [_walk(v, inline, opts) for v in value]
        elif key in _NAMED:
            inner = opts.deeper() if key == "properties" else opts
            out[key] = {name: _walk(v, inline, inner) for name, v in value.items()}
        else:
            out[key] = value
    return _merge_types(out)


def _merge_types(node: Schema) -> Schema:
    """`anyOf` of plain types (`string | null`, `str | int | float | bool`) as one `type` list."""
    options = node.get("anyOf")
    if not options or any("type" not in o or "enum" in o or "const" in o for o in options):
        return node
    plain = [o for o in options if set(o) == {"type"} and isinstance(o["type"], str)]
    richer = [o for o in options if o not in plain]
    if len(richer) > 1 or (richer and not isinstance(richer[0]["type"], str)):
        return node
    types = [o["type"] for o in [*richer, *plain]]
    merged = {k: v for k, v in node.items() if k != "anyOf"}
    if richer:
        merged |= richer[0]
    merged["type"] = types[0] if len(types) == 1 else types
    return merged


def _count_refs(node: Any) -> dict[str, int]:
    counts: dict[str, int] = {}

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF):
                counts[ref[len(_REF) :]] = counts.get(ref[len(_REF) :], 0) + 1
            for v in value.values():
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)

    visit(node)
    return counts


def _refers(node: Schema, name: str) -> bool:
    return name in _count_refs(node)


def schema_bytes(tools: list[Schema]) -> int:
    """The size of a tools/list answer's tools as sent: compact JSON, UTF-8."""
    return len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
