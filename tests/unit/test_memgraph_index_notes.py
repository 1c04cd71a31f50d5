"""Which index each Memgraph read uses, in its golden file's notes (tests/golden/memgraph/<shape>.cypher).

There is no Memgraph here to EXPLAIN a statement (no Docker), so FalkorDB's plan checks (tests/integration/
test_plans.py) have no Memgraph twin. Instead each Memgraph read shape opens with notes a reviewer wrote, one per
index it reads through, in the words of Memgraph's planner:

    // index: :Label(property)        a label-property index (ScanAllByLabelPropertyValue / ...Range)
    // index: [:TYPE(property)]       an edge-type property index (ScanAllByEdgeTypePropertyValue)
    // index: id                      nodes by their id (ScanAllById)
    // index: text <name>             a text index (text_search.search_all)
    // index: vector <name>           the vector index (vector_search.search)
    // index: none: <why>             a scan, and why it is allowed
    // index: never sent: <why>       a shape only FalkorDB's dialect sends

and this test holds each note to the statement and to the gate's DDL: the index exists (a migration's, one a
schema load or the embeddings make), and the statement gives Memgraph's planner something it can answer from it
(the property compared with `=`, `IN`, a range or `IS NOT NULL` in the MATCH's own pattern or WHERE, not behind a
WITH, not wrapped as FalkorDB's `+ ''`); every UNION part reads through a noted index or the shape says why it
scans. A new read shape without notes, or a statement rewritten so it no longer reaches its index, fails here.
What it cannot prove is the planner's choice between two usable indexes: the note names the one the statement
is shaped for (docs/development/testing.md).
"""

import json
import re
from functools import cache

import pytest

from tests.unit.test_golden import GOLDEN, READS, golden_notes, shapes
from write_gate.core.cypher import embeddings as embedding_cypher
from write_gate.core.cypher.dialect import MemgraphDialect, gram_index_name, text_index_name
from write_gate.core.identity import KEY_FIELD
from write_gate.core.stat_counts import DUE
from write_gate.store.bundled import bundled
from write_gate.store.migrations import JsonMigration, discover

MEMGRAPH_READS = sorted(name for name in shapes("memgraph") if name in READS)

# A clause that reads through an index: a MATCH, up to the clause after it (whose filters the planner does not
# push into the MATCH's scan).
_MATCH = re.compile(r"MATCH\b(.*?)(?=\b(?:WITH|RETURN|MATCH|OPTIONAL|UNWIND|CALL|ORDER|UNION)\b|\Z)", re.DOTALL)
_NODE = re.compile(r"\((\w+):`?(\w+)`?(?:\s*\{([^}]*)\})?\)")
_EDGE = re.compile(r"\[(\w+):`?(\w+)`?(?:\s*\{([^}]*)\})?\]")
_COMPARED = r"\b{var}\.`?(\w+)`?\s*(?:=|>=|<=|<(?!>)|>|\bIN\b|\bIS NOT NULL\b)"
_NAMED = {
    "text": re.compile(r"text_search\.search_all\('(\w+)'"),
    "vector": re.compile(r"vector_search\.search\('(\w+)'"),
}


def reachable(part: str) -> set[str]:
    """The index reads a statement part offers Memgraph's planner, in the notes' words."""
    found: set[str] = set()
    for clause in _MATCH.findall(part):
        for pattern, spell in ((_NODE, ":{}({})"), (_EDGE, "[:{}({})]")):
            for var, label, inline in pattern.findall(clause):
                props = re.findall(r"(\w+)\s*:", inline) + re.findall(_COMPARED.format(var=var), clause)
                found |= {spell.format(label, prop) for prop in props}
        if re.search(r"\bid\(\w+\)\s*(?:=|\bIN\b)", clause):
            found.add("id")
    for kind, named in _NAMED.items():
        found |= {f"{kind} {name}" for name in named.findall(part)}
    return found


@cache
def made_indexes() -> frozenset[str]:
    """Every index the gate makes on Memgraph for the golden shapes' labels and types: the bundled migrations'
    (a unique constraint brings an index: MemgraphBackend.ensure_unique), a registered label's identity, search
    text, trigram and statistics indexes (store/schema_files.py), a type's statistics index, the embeddings'."""
    made = set()
    for migration in discover(bundled("migrations")):
        if migration.path.suffix == ".json":
            spec = JsonMigration.model_validate(json.loads(migration.path.read_text(encoding="utf-8")))
            made |= {f":{label}({prop})" for label, prop in (*spec.indexes, *spec.unique)}
    texts = "\n".join(shapes("memgraph").values())
    for label in set(re.findall(r"\(\w+:`(\w+)`", texts)):  # a registered label is quoted; the gate's own are not
        made |= {f":{label}({KEY_FIELD})", f":{label}({DUE})"}
        made |= {f"text {text_index_name(label)}", f"text {gram_index_name(label)}"}
    for type_ in set(re.findall(r"\[\w*:`(\w+)`", texts)):
        made.add(f"[:{type_}({DUE})]")
    for ddl in embedding_cypher.vector_indexes(MemgraphDialect(), 256):
        if vector := re.match(r"CREATE VECTOR INDEX (\w+) ON", ddl.text):
            made.add(f"vector {vector.group(1)}")
        elif index := re.match(r"CREATE INDEX ON :(\w+)\((\w+)\)", ddl.text):
            made.add(f":{index.group(1)}({index.group(2)})")
    made.add("id")
    return frozenset(made)


def notes_of(name: str) -> list[str]:
    notes = golden_notes((GOLDEN / "memgraph" / f"{name}.cypher").read_text())
    assert notes, f"{name}: a Memgraph read's golden file opens with `// index:` notes (this module's docstring)"
    assert all(note.startswith("index: ") for note in notes), notes
    return [note.removeprefix("index: ") for note in notes]


def _access(note: str) -> str:
    """A note's index, without the words after it (`:L(p) — why`)."""
    return note.split(" — ")[0].strip()


@pytest.mark.parametrize("name", MEMGRAPH_READS)
def test_each_memgraph_read_names_the_index_it_reads_through(name: str) -> None:
    notes = notes_of(name)
    text = shapes("memgraph")[name]
    if any(note.startswith("never sent: ") for note in notes):
        # Only the pages by engine id are FalkorDB's alone: Memgraph's dialect pages by `_key`.
        assert not MemgraphDialect.pages_by_id and "id(" in text, name
        assert notes == [notes[0]], "a shape never sent needs no other note"
        return
    scans = [note for note in notes if note.startswith("none: ")]
    assert all(len(note) > len("none: ") + 10 for note in scans), f"{name}: a scan says why it is allowed"
    noted = {_access(note) for note in notes if note not in scans}
    parts = re.split(r"\n\s*UNION(?: ALL)?\s*\n", text)
    offered = set().union(*(reachable(part) for part in parts))
    assert noted <= made_indexes(), f"{name}: the gate makes no {sorted(noted - made_indexes())} on Memgraph"
    assert noted <= offered, f"{name}: the statement gives the planner no use of {sorted(noted - offered)}"
    for part in parts:
        assert reachable(part) & noted or scans, f"{name}: a part reads through no noted index:\n{part}"


def test_the_checker_sees_what_hides_an_index_from_memgraph() -> None:
    """What the planner can and cannot use, on statements written for the purpose."""
    assert reachable("MATCH (n:`P` {_key: $k}) RETURN n") == {":P(_key)"}
    assert reachable("MATCH (h:C) WHERE h.seq_n >= $low AND h.seq + '' > $s RETURN h") == {":C(seq_n)"}
    assert reachable("MATCH (n:`P`) WITH n WHERE n._key > $after RETURN n") == set()  # behind a WITH
    assert reachable("MATCH (n:`P`) WHERE n._key <> $k RETURN n") == set()
    assert reachable("MATCH ()-[r:`K`]->() WHERE r._due = 1 RETURN r") == {"[:K(_due)]"}
    assert reachable("UNWIND $ids AS i MATCH (n) WHERE id(n) = i RETURN n") == {"id"}
    assert reachable("MATCH (n) WHERE id(n) > $c RETURN n") == set()  # Memgraph seeks an id, not a range
    assert reachable("CALL text_search.search_all('t_P', $q) YIELD node RETURN node") == {"text t_P"}


def test_no_notes_outside_the_memgraph_reads() -> None:
    """Notes say what a read does on Memgraph: on a write, or on FalkorDB (whose plans test_plans checks), they
    would be prose nobody holds to the statement."""
    noted = {f"{path.parent.name}/{path.stem}" for path in GOLDEN.rglob("*.cypher") if golden_notes(path.read_text())}
    assert noted == {f"memgraph/{name}" for name in MEMGRAPH_READS}
