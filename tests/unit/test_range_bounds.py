"""No statement the gate sends to FalkorDB compares an indexed property with only an upper bound.

FalkorDB's range index drops a lone upper bound on a parameterised string (FalkorDB #2239): with migration 0006's
index on `WriteGateChange.at`, `r.at < $cutoff` matched every record, and the history prune deleted the whole
history. The same comparison with a lower bound beside it, inside an `OR`, or past the index (`r.at + ''`) is
answered right (checked against the engine; see test_history_retention). Every FalkorDB statement shape (the
golden files) is read here for the bare form on a property some migration or schema load indexes.
"""

import json
import re

from tests.unit.test_golden import shapes
from write_gate.core.identity import KEY_FIELD
from write_gate.store.bundled import bundled
from write_gate.store.migrations import JsonMigration, discover

_BOUND_BY = re.compile(r"(\w+)\.(\w+) (<=?) \$\w+")
_BOUND_FROM = r"{var}\.{prop} >=? "
_LABEL_OF = re.compile(r"\((\w+):(\w+)")


def indexed() -> set[tuple[str, str]]:
    """(label, property) of every index the bundled migrations make; `*` for every registered label's `_key`."""
    found = {("*", KEY_FIELD)}
    for migration in discover(bundled("migrations")):
        if migration.path.suffix == ".json":
            spec = JsonMigration.model_validate(json.loads(migration.path.read_text(encoding="utf-8")))
            found |= {tuple(pair) for pair in spec.indexes} | {tuple(pair) for pair in spec.unique}
    return found


def lone_upper_bounds(text: str, index: set[tuple[str, str]]) -> list[str]:
    """The `var.prop < $x` of `text` on an indexed property, with no lower bound on it and not inside an OR."""
    labels = dict(_LABEL_OF.findall(text))
    found = []
    for match in _BOUND_BY.finditer(text):
        var, prop, _ = match.groups()
        if (labels.get(var), prop) not in index and ("*", prop) not in index:
            continue
        if re.search(_BOUND_FROM.format(var=var, prop=prop), text):
            continue  # a range with both ends: answered right
        if in_an_or(text, match.start()):
            continue  # part of one arm of an OR: the planner does not take the index for it
        found.append(match.group(0))
    return found


def in_an_or(text: str, at: int) -> bool:
    """Whether position `at` lies in one arm of an OR: some parenthesised group around it has an OR of its own."""
    opened: list[int] = []
    groups = []
    for position, char in enumerate(text):
        if char == "(":
            opened.append(position)
        elif char == ")" and opened:
            groups.append((opened.pop(), position))
    for start, end in groups:
        if start < at < end:
            depth = 0
            for position in range(start + 1, end):
                depth += {"(": 1, ")": -1}.get(text[position], 0)
                if depth == 0 and text.startswith(" OR ", position):
                    return True
    return False


def test_the_check_finds_the_statement_that_emptied_the_history() -> None:
    index = indexed()
    assert ("WriteGateChange", "at") in index
    bad = "MATCH (r:WriteGateChange) WHERE r.at < $cutoff\nDETACH DELETE r"
    assert lone_upper_bounds(bad, index) == ["r.at < $cutoff"]
    assert lone_upper_bounds(bad.replace("r.at <", "r.at + '' <"), index) == []
    assert lone_upper_bounds("MATCH (k:WriteGateIdempotency) WHERE k.at < $cutoff", index) == []  # not indexed
    paged = "MATCH (r:WriteGateChange) WHERE ($a IS NULL OR r.at < $a OR (r.at = $a AND r.key < $k))"
    assert lone_upper_bounds(paged, index) == []
    assert lone_upper_bounds("MATCH (r:WriteGateChange) WHERE (r.at < $a) AND r.x OR r.y", index) == ["r.at < $a"]


def test_no_falkordb_statement_bounds_an_indexed_property_from_above_alone() -> None:
    index = indexed()
    offending = {name: found for name, text in shapes("falkordb").items() if (found := lone_upper_bounds(text, index))}
    assert offending == {}
