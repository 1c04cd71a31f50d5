"""Stored values to JSON and back with the same type: what JSON cannot carry exactly is tagged.

A float that is not finite becomes {"$float": "NaN" | "Infinity" | "-Infinity"}; an integer beyond 2^53 (where
JSON readers other than Python's round) {"$int": "<digits>"}; a map {"$map": {...}}. Since every map is tagged,
any object in a tagged value is a tag: nothing stored can pass for one.
"""

import math
from typing import Any

SAFE_INT = 2**53
_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_FLOAT_NAMES = {str(value): name for name, value in _FLOATS.items()}  # "nan", "inf", "-inf": their tags


class UntaggableValue(TypeError):
    """A value of a kind the backup does not carry (the gate stores none: its timestamps are ISO text)."""


def tag(value: Any) -> Any:
    kind = type(value)
    if value is None or kind is str or kind is bool:
        return value
    if kind is int:
        return value if -SAFE_INT <= value <= SAFE_INT else {"$int": str(value)}
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": _FLOAT_NAMES[str(value)]}
    if isinstance(value, list | tuple):
        return [tag(v) for v in value]
    if isinstance(value, dict):
        return {"$map": {str(k): tag(v) for k, v in value.items()}}
    raise UntaggableValue(f"a stored value of type {kind.__name__} has no backup form")


def untag(value: Any) -> Any:
    """The stored value again; ValueError for an object that is no known tag."""
    if isinstance(value, list):
        return [untag(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        [(name, inner)] = value.items()
        if name == "$int" and isinstance(inner, str) and inner.lstrip("-").isdigit():
            return int(inner)
        if name == "$float" and inner in _FLOATS:
            return _FLOATS[inner]
        if name == "$map" and isinstance(inner, dict):
            return {k: untag(v) for k, v in inner.items()}
    raise ValueError("an object that is no known value tag ($int, $float, $map)")


def untag_properties(props: dict[str, Any]) -> dict[str, Any]:
    return {name: untag(value) for name, value in props.items()}


def tag_properties(props: dict[str, Any]) -> dict[str, Any]:
    return {name: tag(value) for name, value in props.items()}
