"""FalkorDB's compact reply (`GRAPH.QUERY ... --compact`) turned into rows in one synchronous pass.

The client's own parser awaits a coroutine for every cell, on the event loop: a page of a few thousand rows held
every other session's calls for milliseconds (issue 37). This one is plain Python over the reply redis already
decoded, so a large reply is parsed in a worker thread (`parse_rows` below) while the loop serves on.

Values come out as `engines.base.plain` makes them (maps as dicts, points as maps). Nodes, relationships and paths
name their labels and properties by the graph's schema ids, which only the client's schema cache can resolve (and
it may ask the engine): a reply holding one raises `NeedsSchema`, and the caller hands it to the client's parser.
"""

import math
import sys
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from redis.exceptions import ResponseError

# Rows from which a reply is parsed in a worker thread: below, a thread hop costs more than the parse.
HEAVY_ROWS = 1_000

# The compact format's value types (FalkorDB's resultset_formatters).
_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY, _EDGE, _NODE, _PATH, _MAP, _POINT, _VECTORF32 = range(1, 13)
_DATETIME, _DATE, _TIME, _DURATION = range(13, 17)
_NEEDS_SCHEMA = {_EDGE, _NODE, _PATH}


class NeedsSchema(Exception):
    """The reply holds a node, relationship or path: only the client's schema cache can name their parts."""


class Reply:
    """A reply's column names, rows of plain values, and the engine's statistics lines."""

    def __init__(self, columns: list[str], rows: list[dict[str, Any]], stats: list[str]) -> None:
        self.columns = columns
        self.rows = rows
        self.stats = stats

    def stat(self, name: str) -> int:
        """A count from the statistics ("Nodes created: 3"), 0 when the engine did not report it."""
        for line in self.stats:
            if line.startswith(f"{name}: "):
                return int(float(line.split(": ", 1)[1].split(" ", 1)[0]))
        return 0


def raise_errors(response: list[Any]) -> None:
    """A run-time error comes as the reply's last element, not raised by the client (as the client's own parser
    checks)."""
    if response and isinstance(response[-1], ResponseError):
        raise response[-1]


def _value(cell: list[Any]) -> Any:
    kind, value = int(cell[0]), cell[1]
    if kind == _STRING:
        return value if isinstance(value, str) else str(value)
    if kind == _INTEGER:
        return int(value)
    if kind == _NULL:
        return None
    if kind == _DOUBLE:
        return _double(value)
    if kind == _BOOLEAN:
        return value == "true"
    if kind == _ARRAY:
        return [_value(item) for item in value]
    if kind == _MAP:
        return {str(value[i]): _value(value[i + 1]) for i in range(0, len(value), 2)}
    if kind == _POINT:
        return {"latitude": float(value[0]), "longitude": float(value[1])}
    if kind == _VECTORF32:
        return [float(v) for v in value]
    if kind == _DATETIME:
        return datetime.fromtimestamp(value, tz=UTC)
    if kind == _DATE:
        return datetime.fromtimestamp(value, tz=UTC).date()
    if kind == _TIME:
        return datetime.fromtimestamp(value, tz=UTC).time()
    if kind in _NEEDS_SCHEMA or kind == _DURATION:
        raise NeedsSchema
    return None  # an unknown type, as the client's parser answers it


def parse(response: list[Any]) -> Reply:
    """Rows of a compact reply: `[stats]` for a statement that returns nothing, else `[header, records, stats]`."""
    raise_errors(response)
    if len(response) == 1:
        return Reply([], [], list(response[0]))
    header, records, stats = response
    columns = [column[1] for column in header]
    rows = [dict(zip(columns, (_value(cell) for cell in record), strict=True)) for record in records]
    return Reply(columns, rows, list(stats))


async def parse_rows(response: list[Any]) -> Reply:
    """`parse`, in a worker thread when the reply is large."""
    if len(response) == 3 and len(response[1]) >= HEAVY_ROWS:
        return await anyio.to_thread.run_sync(parse, response)
    return parse(response)


_LARGEST = sys.float_info.max


def _double(text: str) -> float:
    """FalkorDB answers a double in 15 significant digits (`%.15g`): the largest ones round past the largest
    double (1.7976931348623157e308 answers `1.79769313486232e+308`, which reads as infinity, and then as null).
    Those are read as the largest double of their sign; an infinity the engine holds answers `inf`."""
    number = float(text)
    if number in (math.inf, -math.inf) and "inf" not in text:
        return math.copysign(_LARGEST, number)
    return number
