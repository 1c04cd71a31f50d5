"""MemoryMesh's refusal, `{error, context, suggestions}` (seed 000, section 7.2), from the gate's. Pure.

A MemoryMesh agent reads `error` and `suggestions`; the gate's own fields (`error_code`, `message`, `details`) stay
beside them, so a client of either kind reads the same refusal. The suggestions say what to do next, from the
rejection's code and the details it carries (the registered types, the allowed values, the missing fields).
"""

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from write_gate.core.model import ErrorCode, Rejected

_LISTED = 12  # names a suggestion lists at most: a registry may hold hundreds


def _one_of(what: str, names: Any) -> list[str]:
    if not isinstance(names, list) or not names:
        return []
    shown = ", ".join(str(name) for name in names[:_LISTED])
    return [f"Use one of the {what}: {shown}{', ...' if len(names) > _LISTED else ''}"]


def _unknown(details: Mapping[str, Any]) -> list[str]:
    if "known_labels" in details:
        return _one_of("registered node types", details["known_labels"])
    if "known_types" in details:
        return _one_of("registered edge types", details["known_types"])
    return _one_of("allowed labels", details.get("allowed"))


def _missing(details: Mapping[str, Any]) -> list[str]:
    missing = details.get("missing") or details.get("property")
    named = ", ".join(missing) if isinstance(missing, list) else str(missing) if missing else "the required fields"
    return [f"Provide {named}"]


_BY_CODE: dict[ErrorCode, Callable[[Mapping[str, Any]], list[str]]] = {
    ErrorCode.SCHEMA_UNKNOWN_LABEL: _unknown,
    ErrorCode.SCHEMA_TYPE_MISMATCH: lambda d: (
        _one_of("allowed values", d.get("allowed"))
        or [f"Give {d.get('property', 'the field')} as {d.get('expected', 'its declared type')}"]
    ),
    ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY: _missing,
    ErrorCode.ALREADY_EXISTS: lambda d: [
        f"Update it instead ({d.get('update_tool', 'update_nodes, update_edges')}), or choose another name"
    ],
    ErrorCode.ENTITY_NOT_FOUND: lambda _d: ["Check the name (names are case-sensitive), or add the node first"],
    ErrorCode.ENDPOINT_NOT_FOUND: lambda _d: ["Add both nodes before the edge between them"],
    ErrorCode.RELATION_NOT_FOUND: lambda _d: ["Add the edge first (add_edges); from, to and edgeType name it"],
    ErrorCode.BACKEND_UNAVAILABLE: lambda _d: ["Try again shortly: the graph's engine did not answer"],
    ErrorCode.QUERY_TIMEOUT: lambda _d: ["Narrow the read (a longer query, fewer names, a smaller limit)"],
    ErrorCode.PERMISSION_DENIED: lambda _d: ["Ask the operator for a grant that names this tool and type"],
    ErrorCode.INVALID_INPUT: lambda d: (
        ["Check the arguments against the tool's input schema"] if "problems" in d else []
    ),
}


class MeshRejected(Rejected):
    error: str
    context: dict[str, Any] = Field(default_factory=dict)
    suggestions: list[str] = Field(default_factory=list)


def _cause(rejected: Rejected) -> tuple[ErrorCode, Mapping[str, Any]]:
    """The code and details to suggest from: a batch's first rejected item's where the call names its items
    (`details.rejected`, as create_relations refuses), else the call's own."""
    items = rejected.details.get("rejected")
    first = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else None
    if first is not None and first.get("error_code") in ErrorCode.__members__:
        details = first.get("details")
        return ErrorCode(first["error_code"]), details if isinstance(details, dict) else {}
    return rejected.error_code, rejected.details


def mesh_rejection(rejected: Rejected) -> MeshRejected:
    """The gate's refusal with MemoryMesh's fields beside its own."""
    code, details = _cause(rejected)
    suggest = _BY_CODE.get(code)
    return MeshRejected(
        **rejected.model_dump(),
        error=rejected.message,
        context=rejected.details,
        suggestions=suggest(details) if suggest else [],
    )
