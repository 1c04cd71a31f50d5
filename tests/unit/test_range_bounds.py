"""Every comparison the gate makes between an indexed property and a bound, in every FalkorDB statement, has its
copy past the index.

FalkorDB's range index answers a comparison on a string loosely (FalkorDB #2239): an upper bound alone matched
every row (the history prune once deleted the whole history); beside a lower bound, or inside an OR beside one, it
still answers rows past the bound (the change feed answered changes inside its settle window, and could skip
some); a lower bound that is no stored value is loosened too. The copy `expr + ''` (core/cypher/ranges.py) is
evaluated on each row the index gives and makes the answer exact. This test reads every FalkorDB statement shape
(the golden files) for a comparison on a property some migration or schema load indexes without that copy beside
it; tests/integration/test_exact_ranges.py proves the statements right against the engine on random windows.
"""

import json
import re

from tests.unit.test_golden import shapes
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL
from write_gate.core.cypher.ranges import exactly
from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED, SEQ_NUMBER
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL
from write_gate.core.identity import KEY_FIELD
from write_gate.store.bundled import bundled
from write_gate.store.migrations import JsonMigration, discover

# `var.prop op bound`, the bound a parameter, a variable or a string literal; `expr + '' op` (the copy) never matches.
_COMPARED = re.compile(r"(?<![\w.])(\w+)\.(\w+) ([<>]=?) (\$?\w+|'[^']*')")
_REVERSED = re.compile(r"(\$?\w+|'[^']*') ([<>]=?) (\w+)\.(\w+)(?![\w.(])")  # `bound < var.prop`: say it the other way
_LABEL_OF = re.compile(r"\((\w+):`?(\w+)`?")


# Indexed numbers: FalkorDB answers a numeric range exactly (tests/integration/test_exact_ranges.py holds the feed's
# windows to it), so their bounds need no copy; but its index loses most zeros when built again from a snapshot, so
# none is read there (SEQ_KEY_INDEXED; tests/integration/test_zero_keys.py).
NUMERIC = {
    (CHANGE_LABEL, SEQ_NUMBER),
    (CHANGE_LABEL, SEQ_KEY),
    (CHANGE_LABEL, SEQ_KEY_INDEXED),
    (CONFLICT_LABEL, SEQ_NUMBER),
    (IDEMPOTENCY_LABEL, SEQ_NUMBER),
}


def indexed() -> set[tuple[str, str]]:
    """(label, property) of every index on text the bundled migrations make; `*` for every registered label's
    `_key`."""
    found = {("*", KEY_FIELD)}
    for migration in discover(bundled("migrations")):
        if migration.path.suffix == ".json":
            spec = JsonMigration.model_validate(json.loads(migration.path.read_text(encoding="utf-8")))
            found |= {tuple(pair) for pair in (*spec.indexes, *spec.indexes_beside, *spec.unique)}
    return found - NUMERIC


def uncopied_bounds(text: str, index: set[tuple[str, str]]) -> list[str]:
    """The `var.prop op bound` of `text` on an indexed property without `var.prop + '' op bound` in the text too."""
    labels = dict(_LABEL_OF.findall(text))
    found = []
    for match in _COMPARED.finditer(text):
        var, prop, op, bound = match.groups()
        if (labels.get(var), prop) not in index and ("*", prop) not in index:
            continue
        if f"{var}.{prop} + '' {op} {bound}" not in text:
            found.append(match.group(0))
    for match in _REVERSED.finditer(text):
        bound, op, var, prop = match.groups()
        if (labels.get(var), prop) in index or ("*", prop) in index:
            found.append(match.group(0))  # written the other way round: say it as `var.prop op bound`
    return found


def test_the_check_finds_the_bounds_that_answered_too_much() -> None:
    index = indexed()
    assert ("WriteGateChange", "at") in index and ("WriteGateChange", "seq") in index
    emptied = "MATCH (r:WriteGateChange) WHERE r.at < $cutoff\nDETACH DELETE r"
    assert uncopied_bounds(emptied, index) == ["r.at < $cutoff"]
    # The feed's window before this rule: a lower bound beside the upper one did not make it exact, nor itself.
    feed = "MATCH (h:WriteGateChange)\nWHERE h.seq >= $after_seq AND h.seq <= $horizon AND h.label IN $labels"
    assert uncopied_bounds(feed, index) == ["h.seq >= $after_seq", "h.seq <= $horizon"]
    low, high = exactly("h.seq", ">=", "$after_seq"), exactly("h.seq", "<=", "$horizon")
    fixed = f"MATCH (h:WriteGateChange)\nWHERE {low} AND {high}"
    assert uncopied_bounds(fixed, index) == []
    # Inside an OR, bounded by a variable or a literal, written back to front: the same rule.
    paged = "MATCH (r:WriteGateChange) WHERE ($a IS NULL OR r.seq < $a OR (r.seq = $a AND r.key < $k))"
    assert uncopied_bounds(paged, index) == ["r.seq < $a", "r.key < $k"]
    assert uncopied_bounds("WITH max(x) AS high MATCH (r:WriteGateChange) WHERE r.seq <= high", index) == [
        "r.seq <= high"
    ]
    assert uncopied_bounds("MATCH (n:`Person`) WHERE n._key > ''", index) == ["n._key > ''"]
    assert uncopied_bounds("MATCH (n:`Person`) WHERE $after < n._key", index) == ["$after < n._key"]
    # Not indexed, or an equality: nothing to say.
    assert uncopied_bounds("MATCH (k:WriteGateIdempotency {id: $id}) WHERE k.at < $cutoff", index) == []
    assert uncopied_bounds("MATCH (h:WriteGateChange) WHERE h.key = $key AND h.op > $after_op", index) == []
    indexed_id = "MATCH (h:WriteGateChange) WHERE h.key = $key AND h.change_id > $after_id"  # migration 0019
    assert uncopied_bounds(indexed_id, index) == ["h.change_id > $after_id"]


def test_every_falkordb_statement_copies_its_bounds_on_indexed_properties_past_the_index() -> None:
    index = indexed()
    offending = {name: found for name, text in shapes("falkordb").items() if (found := uncopied_bounds(text, index))}
    assert offending == {}
