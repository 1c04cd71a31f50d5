"""Property values both engines store the same way: scalars and homogeneous lists of scalars."""

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from write_gate.core.identifiers import PROTECTED_FIELDS, is_protected, normalize_identifier
from write_gate.core.model import ErrorCode, GateRejection

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# NUL ends a string on FalkorDB, and a lone surrogate is not UTF-8 at all: neither engine stores them.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Limits:
    """What one write may carry; beyond these a call is INVALID_INPUT, with the limit in details."""

    max_properties: int = 200
    max_string_length: int = 65_536
    max_list_length: int = 10_000


def _over(what: str, limit_name: str, limit: int, **details: Any) -> GateRejection:
    return GateRejection(
        ErrorCode.INVALID_INPUT, f"{what} is over the limit of {limit}", limit=limit_name, max=limit, **details
    )


def check_source(source: str, limits: Limits) -> None:
    """`source` is stamped on what a write makes: a text property like any other, held to the same length."""
    if len(source) > limits.max_string_length:
        raise _over("source", "max_string_length", limits.max_string_length, field="source")


def _scalar_kind(value: Any) -> str | None:
    # bool before int: bool is an int subclass in Python, but a different type in Cypher.
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _check_scalar(key: str, value: Any, limits: Limits) -> str:
    kind = _scalar_kind(value)
    if kind is None:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"property {key!r} must be a string, number, boolean or a list of one of those",
            property=key,
            got=type(value).__name__,
        )
    if kind == "integer" and not INT64_MIN <= value <= INT64_MAX:
        raise GateRejection(
            ErrorCode.INVALID_INPUT, f"property {key!r} is outside the 64-bit integer range", property=key
        )
    if kind == "number" and not math.isfinite(value):
        raise GateRejection(ErrorCode.INVALID_INPUT, f"property {key!r} must be a finite number", property=key)
    if kind == "string" and len(value) > limits.max_string_length:
        raise _over(f"property {key!r}", "max_string_length", limits.max_string_length, property=key)
    if kind == "string" and unstorable(value):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"property {key!r} contains a NUL character or a lone surrogate, which no engine stores",
            property=key,
        )
    return kind


def unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def check_storable(arguments: Any, path: str = "") -> None:
    """Every string of a call, keys included, at any depth: one no engine can take is INVALID_INPUT, naming
    where it is (never the value), before anything else looks at it."""
    if isinstance(arguments, str):
        if unstorable(arguments):
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"{path or 'an argument'} contains a NUL character or a lone surrogate, which no engine stores",
                field=path,
            )
    elif isinstance(arguments, Mapping):
        for key, value in arguments.items():
            where = f"{path}.{key}" if path else str(key)
            check_storable(key, f"{where} (the key)")
            check_storable(value, where)
    elif isinstance(arguments, list):
        for i, value in enumerate(arguments):
            check_storable(value, f"{path}[{i}]")


def value_kind(key: str, value: Any, limits: Limits = Limits()) -> str:  # noqa: B008 - frozen
    """Validate one value and name its type: 'string', 'integer', 'number', 'boolean' or 'array<kind>'."""
    if not isinstance(value, list):
        return _check_scalar(key, value, limits)
    if len(value) > limits.max_list_length:
        raise _over(f"list property {key!r}", "max_list_length", limits.max_list_length, property=key)
    kinds = {_check_scalar(key, item, limits) for item in value}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    if len(kinds) > 1:
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"list property {key!r} mixes types {sorted(kinds)}; lists must be homogeneous",
            property=key,
        )
    return f"array<{kinds.pop() if kinds else 'any'}>"


def check_protected(*maps: Mapping[str, Any], protected_fields: frozenset[str] = PROTECTED_FIELDS) -> None:
    protected = sorted({key.lstrip(":") for m in maps for key in m if is_protected(key, protected_fields)})
    if protected:
        raise GateRejection(
            ErrorCode.SCHEMA_PROTECTED_FIELD,
            "these fields are computed by the gate and cannot be set by a write: " + ", ".join(protected),
            fields=protected,
        )


def clean_map(
    raw: Mapping[str, Any],
    what: str,
    limits: Limits = Limits(),  # noqa: B008 - frozen
) -> tuple[dict[str, Any], dict[str, str]]:
    """Validate keys and values; return the map with normalised keys and each key's value kind."""
    if len(raw) > limits.max_properties:
        raise _over(what, "max_properties", limits.max_properties, field=what)
    cleaned: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for raw_key, value in raw.items():
        key = normalize_identifier(raw_key, f"{what} key")
        if key in cleaned:
            raise GateRejection(ErrorCode.INVALID_INPUT, f"{what} key {key!r} is given twice", property=key)
        kinds[key] = value_kind(key, value, limits)
        cleaned[key] = value
    return cleaned, kinds
