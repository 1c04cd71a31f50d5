"""Spaces: isolated graphs in one engine (per team or project), chosen by the agent's grant. Pure.

A space's name becomes part of a graph's or a database's name, never Cypher text; so it is held to a narrower
rule than identifiers: lower-case letters, digits and `_`, starting with a letter, at most 48 characters.
"""

import re
from collections.abc import Collection, Sequence

from write_gate.core.model import ErrorCode, GateRejection

MAX_SPACE_LENGTH = 48
_SPACE = re.compile(r"[a-z][a-z0-9_]*")
# Between the base graph (or database) name and a space's name: `write_gate__team_a`.
SEPARATOR = "__"
# A grant's `spaces` entry meaning every space the server serves.
ANY_SPACE = "*"


def is_space_name(name: object) -> bool:
    return isinstance(name, str) and len(name) <= MAX_SPACE_LENGTH and _SPACE.fullmatch(name) is not None


def check_space_name(name: str) -> str:
    """The name, or ValueError (for settings and grants: the message never repeats the text)."""
    if not is_space_name(name):
        raise ValueError(
            f"a space name is lower-case letters, digits and _, starting with a letter, "
            f"at most {MAX_SPACE_LENGTH} characters"
        )
    return name


def storage_name(base: str, space: str, default: str) -> str:
    """The graph (FalkorDB) or database (Memgraph) that holds a space: the default space keeps the base name, so
    turning spaces on leaves today's graph where it is; every other space is `<base>__<space>`."""
    return base if space == default else f"{base}{SEPARATOR}{space}"


def granted_spaces(granted: Sequence[str], served: Sequence[str], default: str) -> list[str]:
    """The served spaces a grant covers, its own default first: `()` is the server's default space only, `*`
    is every served space (the server's default first)."""
    if not granted:
        return [default]
    if ANY_SPACE in granted:
        rest = [s for s in granted if s != ANY_SPACE]
        return [s for s in dict.fromkeys([*rest, default, *served]) if s in served]
    return [s for s in dict.fromkeys(granted) if s in served]


def choose_space(granted: Sequence[str], served: Collection[str], default: str, requested: object | None) -> str:
    """The space a call works in: the requested one if the grant covers it, else the grant's first.
    SPACE_NOT_GRANTED names the space (a valid name only: other text is never echoed); a grant none of whose
    spaces is served has no space to work in."""
    allowed = granted_spaces(granted, list(served), default)
    if requested is None:
        if not allowed:
            raise GateRejection(
                ErrorCode.SPACE_NOT_GRANTED, "this agent's grant lists no space this server serves", space=None
            )
        return allowed[0]
    if not is_space_name(requested):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            "space is not a space name (lower-case letters, digits and _, starting with a letter)",
            field="space",
        )
    if requested not in allowed:
        raise GateRejection(
            ErrorCode.SPACE_NOT_GRANTED, f"this agent may not use the space {requested}", space=requested
        )
    return str(requested)
