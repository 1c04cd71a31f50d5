"""What the bytes of a redis append-only file hold: where its run of whole commands ends, and whether what follows
is only the beginning of one more (a write the engine was killed in the middle of) or something else (damage).

A command is a RESP array of bulk strings: `*<count>\\r\\n`, then `count` times `$<length>\\r\\n<bytes>\\r\\n`.
"""

from typing import NamedTuple


class Commands(NamedTuple):
    end: int  # the offset just after the last whole command of the leading run
    torn: bool  # everything after `end` is the beginning of one more command, cut short (nothing after: False)


class _Short(Exception):
    """The bytes end inside a command, and all of it so far is well-formed."""


class _Malformed(Exception):
    """The bytes are no command."""


def _number(data: bytes, at: int, kind: bytes) -> tuple[int, int]:
    """The number of a `kind` header line at `at` (`*3\\r\\n`, `$12\\r\\n`), and the offset after the line."""
    end = data.find(b"\r\n", at)
    if end < 0:  # the bytes end inside this line: is it well-formed so far?
        partial = data[at:].removesuffix(b"\r")
        if partial[:1] in (b"", kind) and (partial[1:] == b"" or partial[1:].isdigit()):
            raise _Short
        raise _Malformed
    line = data[at:end]
    if line[:1] != kind or not line[1:].isdigit():
        raise _Malformed
    return int(line[1:]), end + 2


def _command_end(data: bytes, at: int) -> int:
    """Where the command starting at `at` ends."""
    count, at = _number(data, at, b"*")
    for _ in range(count):
        length, at = _number(data, at, b"$")
        stop = at + length
        if len(data) < stop + 2:  # the bytes end inside this string, or before its line end is whole
            if data[stop:] not in (b"", b"\r"):
                raise _Malformed
            raise _Short
        if data[stop : stop + 2] != b"\r\n":
            raise _Malformed
        at = stop + 2
    return at


def whole_commands(data: bytes) -> Commands:
    """The leading run of whole commands in `data`, and whether the rest is one command cut short."""
    at = 0
    while at < len(data):
        try:
            at = _command_end(data, at)
        except _Short:
            return Commands(at, torn=True)
        except _Malformed:
            return Commands(at, torn=False)
    return Commands(at, torn=False)
