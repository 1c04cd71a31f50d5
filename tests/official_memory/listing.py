"""What each server lists, beside what its tools answer: tools (name, title, description, hints), resources
and resource templates, and the capabilities at `initialize`. Pure: `note` records an id of compare.EXPECTED."""

from collections.abc import Callable
from typing import Any

Report = list[str]
# The writes whose idempotentHint is true here and false there: a repeat skips what exists
# (docs/clients/capabilities.md).
IDEMPOTENT_HERE = {"create_entities", "create_relations", "add_observations"}
KNOWLEDGE_GRAPH = "memory://knowledge-graph"
# The registry's resources, and the graph's statistics (get_graph_stats).
SCHEMA_RESOURCES = {
    "write-gate://schema",
    "write-gate://schema/{name}",
    "write-gate://stats",
    "write-gate://changes",
    "write-gate://changes/{label}",
}
# The reads' optional arguments beside the official ones: paging, a label filter, relations per entity, MemoryMesh's
# neighbours.
READ_ARGUMENTS = {
    "limit",
    "cursor",
    "labels",
    "relations_limit",
    "provenance",
    "tags",
    "minImportance",
    "maxImportance",
    "includeArchived",
    "neighbors",
}


def compare_listings(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None]) -> Report:
    """`ours` and `theirs`: {"tools": {name: {title, description, annotations, input, output}}, "resources": [uri...],
    "capabilities": {...}} (templates among the resources, by their URI template)."""
    report = _tools(ours["tools"], theirs["tools"], note)
    report += _resources(set(ours["resources"]), set(theirs["resources"]), note)
    return report + _capabilities(ours["capabilities"], theirs["capabilities"], note)


def _tools(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None]) -> Report:
    """The same tools, no more (the profile's other tools are toolsets it lists only when asked: issue 27)."""
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
        report += [f"{name} input {line}" for line in _input(mine["input"], tool["input"], note)]
        report += [f"{name} output {line}" for line in _output(mine["output"], tool["output"], note)]
    return report


def _input(ours: dict[str, Any], theirs: dict[str, Any], note: Callable[[str], None], path: str = "") -> Report:
    """An argument's schema, level by level: the same properties, types and required keys."""
    if ours.get("type") != theirs.get("type"):
        return [f"{path or '.'}: type ours {ours.get('type')} theirs {theirs.get('type')}"]
    if ours.get("description") != theirs.get("description"):
        note("tool_descriptions")
    report = []
    if "items" in theirs:
        report += _input(ours.get("items", {}), theirs["items"], note, path + "[]")
    mine, there = ours.get("properties", {}), theirs.get("properties", {})
    for key in sorted(set(mine) - set(there)):
        if path == "" and key in READ_ARGUMENTS:
            note("read_arguments")
        elif path == "" and key == "idempotency_key":
            note("idempotency_key")
        elif path == ".entities[]" and key in ("tags", "importance"):
            note("memory_mcp_fields")
        else:
            report.append(f"{path}.{key}: only ours")
    report += [f"{path}.{key}: only theirs" for key in sorted(set(there) - set(mine))]
    for key in sorted(set(mine) & set(there)):
        report += _input(mine[key], there[key], note, f"{path}.{key}")
    for key in sorted(set(theirs.get("required", [])) - set(ours.get("required", []))):
        if (path, key) == (".entities[]", "observations"):
            note("observations_optional")
        else:
            report.append(f"{path}.{key}: required there, optional here")
    return report


def _output(ours: dict[str, Any] | None, theirs: dict[str, Any] | None, note: Callable[[str], None]) -> Report:
    """Ours is anyOf its success and the rejection (told apart by the rejection's required error_code); the
    success names every official key."""
    if theirs is None:
        return [] if ours is None else ["only ours has one"]
    branches = (ours or {}).get("anyOf", [])
    if len(branches) != 2 or branches[1].get("required") != ["error_code"]:
        return [f"not anyOf a success and the rejection: {ours}"]
    note("output_schemas")
    missing = sorted(set(theirs.get("properties", {})) - set(branches[0].get("properties", {})))
    return [f"official keys missing: {missing}"] if missing else []


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
