"""A statement's parameters as FalkorDB takes them: a `CYPHER name=value ...` header of Cypher literals.

The falkordb client builds the same header value by value in Python (`falkordb.helpers.stringify_param_value`),
which a batch of 1,000 rows spent about 150 ms on. Here each string is quoted by the json module's C encoder where
FalkorDB reads its escapes alike (`\\n`, `\\t`, `\\r`, `\\b`, `\\f`, `\\"`, `\\\\`; non-ASCII kept as it is), and as
the client quotes it (only `\\` and `"` escaped) where it holds another control character, whose `\\uXXXX` escape
FalkorDB does not read. Maps' keys are backtick-quoted, as the client quotes them; a key the client refuses (empty,
or holding a backtick) is refused here too.
"""

import functools
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring  # the C encoder, non-ASCII kept
from typing import Any

# Control characters json would write as \uXXXX (it writes \b \t \n \f \r as FalkorDB reads them).
_UNICODE_ESCAPED = re.compile("[\x00-\x07\x0b\x0e-\x1f]")


def _string(text: str) -> str:
    if _UNICODE_ESCAPED.search(text) is None:
        return str(encode_basestring(text))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.lru_cache(maxsize=4096)  # a batch's rows repeat their keys' names
def _key(name: Any) -> str:
    key = name if isinstance(name, str) else str(name)
    if not key or "`" in key:
        raise ValueError(f"FalkorDB takes no parameter or map key {key!r}")
    return "`" + key + "`"


def literal(value: Any, seen: dict[int, str] | None = None) -> str:
    """One value as a Cypher literal. `seen`: the lists written so far in one header, by identity (a batch's rows
    share their claim lists: each is written once, then reused)."""
    kind = type(value)
    encode = _SCALARS.get(kind)
    if encode is not None:
        return encode(value)
    seen = {} if seen is None else seen
    if kind is dict:
        return "{" + ",".join([_key(k) + ":" + literal(v, seen) for k, v in value.items()]) + "}"
    if kind is list:
        done = seen.get(id(value))
        if done is None:
            done = seen[id(value)] = "[" + _items(value, seen) + "]"
        return done
    if value is None:
        return "null"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return "{" + ",".join([_key(k) + ":" + literal(v, seen) for k, v in value.items()]) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join([literal(v, seen) for v in value]) + "]"
    return str(value)


def _items(values: list[Any], seen: dict[int, str]) -> str:
    """A list's items, comma-separated. A list of floats alone (an embedding's 256 or more) in one pass in C: value
    by value it cost about 2 ms a write of three vectors."""
    if values and type(values[0]) is float:
        try:
            return ",".join(map(float.__repr__, values))
        except TypeError:  # not floats alone: value by value
            pass
    return ",".join([literal(v, seen) for v in values])


_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _string,
    int: str,
    float: repr,
    bool: lambda v: "true" if v else "false",
}


def params_header(params: Mapping[str, Any]) -> str:
    """`CYPHER a=1 b="x" ` (empty without parameters), to put before the statement's text."""
    if not params:
        return ""
    seen: dict[int, str] = {}  # alive while the header is written: an id stays its object's
    return "CYPHER " + "".join([_key(name) + "=" + literal(value, seen) + " " for name, value in params.items()])
