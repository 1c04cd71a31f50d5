"""What each server lists, beside what its tools answer: tools (name, title, description, hints), resources
and resource templates, and the capabilities at `initialize`. Pure: `note` records an id of compare.EXPECTED."""

from collections.abc import Callable
from typing import Any

Report = list[str]
# The writes whose idempotentHint is true here and false there: a repeat skips what exists (README, Capabilities).
IDEMPOTENT_HERE = {"create_entities", "create_relations", "add_observations"}
KNOWLEDGE_GRAPH = "memory://knowledge-graph"
SCHEMA_RESOURCES = {"write-gate://schema", "write-gate://schema/{name}"}


def compare_listings(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None]) -> Report:
    """`ours` and `theirs`: {"tools": {name: {title, description, annotations}}, "resources": [uri...],
    "capabilities": {...}} (templates among the resources, by their URI template)."""
    report = _tools(ours["tools"], theirs["tools"], note)
    report += _resources(set(ours["resources"]), set(theirs["resources"]), note)
    return report + _capabilities(ours["capabilities"], theirs["capabilities"], note)


def _tools(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None]) -> Report:
    if set(ours) != set(theirs):
        return [f"tools: ours {sorted(ours)} theirs {sorted(theirs)}"]
    report = []
    for name in sorted(theirs):
        mine, tool = ours[name], theirs[name]
        if mine["title"] != tool["title"]:
            report.append(f"{name} title: ours {mine['title']!r} theirs {tool['title']!r}")
        if mine["description"] != tool["description"]:
            note("tool_descriptions")
        for hint in sorted(set(mine["annotations"]) | set(tool["annotations"])):
            here, there = mine["annotations"].get(hint), tool["annotations"].get(hint)
            if here == there:
                continue
            if (hint, here, there) == ("idempotentHint", True, False) and name in IDEMPOTENT_HERE:
                note("idempotent_hint")
            else:
                report.append(f"{name} {hint}: ours {here} theirs {there}")
    return report


def _resources(ours: set[str], theirs: set[str], note: Callable[[str], None]) -> Report:
    report = [f"resource only theirs: {uri}" for uri in sorted(theirs - ours - {KNOWLEDGE_GRAPH})]
    report += [f"resource only ours: {uri}" for uri in sorted(ours - theirs - SCHEMA_RESOURCES)]
    if KNOWLEDGE_GRAPH in theirs - ours or ours - theirs:
        note("resources")
    return report


def _capabilities(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None]) -> Report:
    """Resources: theirs can be subscribed to, ours (the registry) cannot. Tools: theirs may announce a changed
    list; the memory profile's list is fixed. Ours adds logging and completions."""
    expected = {
        ("resources", "subscribe"): (False, True),
        ("resources", "listChanged"): (False, True),
        ("tools", "listChanged"): (False, True),
        ("logging", None): (True, False),
        ("completions", None): (True, False),
    }
    report = []
    for part in sorted(set(ours) | set(theirs)):
        mine, there = ours.get(part), theirs.get(part)
        if mine is None or there is None:
            key, seen = (part, None), (mine is not None, there is not None)
        else:
            for flag in sorted(set(mine) | set(there)):
                key, seen = (part, flag), (bool(mine.get(flag)), bool(there.get(flag)))
                if seen[0] != seen[1]:
                    report += _capability(key, seen, expected, note)
            continue
        report += _capability(key, seen, expected, note)
    return report


def _capability(
    key: tuple[str, str | None], seen: tuple[bool, bool], expected: dict[Any, Any], note: Callable[[str], None]
) -> Report:
    if expected.get(key) == seen:
        note("capabilities")
        return []
    return [f"capability {'.'.join(k for k in key if k)}: ours {seen[0]} theirs {seen[1]}"]
