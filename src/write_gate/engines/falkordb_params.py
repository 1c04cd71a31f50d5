"""A statement's parameters as FalkorDB takes them: a `CYPHER name=value ...` header of Cypher literals.

The falkordb client builds the same header value by value in Python (`falkordb.helpers.stringify_param_value`),
which a batch of 1,000 rows spent about 150 ms on. Here each string is quoted by the json module's C encoder where
FalkorDB reads its escapes alike (`\\n`, `\\t`, `\\r`, `\\b`, `\\f`, `\\"`, `\\\\`; non-ASCII kept as it is), and as
the client quotes it (only `\\` and `"` escaped) where it holds another control character, whose `\\uXXXX` escape
FalkorDB does not read. Maps' keys are backtick-quoted, as the client quotes them; a key the client refuses (empty,
or holding a backtick) is refused here too.
"""

import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C encoder, non-ASCII kept
from typing import Any

# Control characters json would write as \uXXXX (it writes \b \t \n \f \r as FalkorDB reads them).
_UNICODE_ESCAPED = re.compile("[\x00-\x07\x0b\x0e-\x1f]")


def _string(text: str) -> str:
    if _UNICODE_ESCAPED.search(text) is None:
        return str(encode_basestring(text))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(name: Any) -> str:
    key = name if isinstance(name, str) else str(name)
    if not key or "`" in key:
        raise ValueError(f"FalkorDB takes no parameter or map key {key!r}")
    return "`" + key + "`"


def literal(value: Any) -> str:
    """One value as a Cypher literal."""
    encode = _BY_TYPE.get(type(value))
    if encode is not None:
        return encode(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return _map(value)
    if isinstance(value, list | tuple):
        return _list(value)
    return str(value)


def _list(values: Any) -> str:
    return "[" + ",".join([literal(v) for v in values]) + "]"


def _map(values: Mapping[Any, Any]) -> str:
    return "{" + ",".join([_key(k) + ":" + literal(v) for k, v in values.items()]) + "}"


_BY_TYPE: dict[type, Callable[[Any], str]] = {
    str: _string,
    int: str,
    float: repr,
    bool: lambda v: "true" if v else "false",
    list: _list,
    tuple: _list,
    dict: _map,
}


def params_header(params: Mapping[str, Any]) -> str:
    """`CYPHER a=1 b="x" ` (empty without parameters), to put before the statement's text."""
    if not params:
        return ""
    return "CYPHER " + "".join([_key(name) + "=" + literal(value) + " " for name, value in params.items()])
