"""The only statements the double rewrites: Memgraph's index and constraint DDL and its text search, which FalkorDB
does not parse, its join of strings, which FalkorDB runs wrongly, and its clock, which FalkorDB counts in
other units.

Every other statement reaches FalkorDB verbatim, so a statement shape the gate emits either runs there or fails
here, loudly. The table:

| Memgraph                                              | on FalkorDB                                         |
|-------------------------------------------------------|-----------------------------------------------------|
| CREATE INDEX ON :L(p)                                 | CREATE INDEX FOR (n:L) ON (n.p); "already indexed"  |
|                                                       | answers success with a notification, as Memgraph    |
| CREATE EDGE INDEX ON :T(p)                            | CREATE INDEX FOR ()-[r:T]-() ON (r.p); likewise     |
| CREATE CONSTRAINT ON (n:L) ASSERT n.p[, n.q] IS UNIQUE | recorded by the double, not enforced (see below)    |
| SHOW CONSTRAINT INFO                                  | answered from the double's record                   |
| CREATE TEXT INDEX i ON :L(p)                          | FalkorDB's full-text index on L.p, i recorded       |
| CALL text_search.search_all('i', $query)              | CALL db.idx.fulltext.queryNodes('L', $query), the   |
| (or $grams)                                           | query's AND / OR written as RediSearch's ' ' / ' | ' |
| reduce(v = '', v_s IN list | v + v_s)  (a join)       | string.join(list, '') (FalkorDB's + loses text)     |
| timestamp() (microseconds)                            | (timestamp() * 1000): FalkorDB counts milliseconds  |
| CREATE VECTOR INDEX i ON :L(p) WITH CONFIG {...}      | FalkorDB's vector index on L.p (cosine, the config's |
|                                                       | dimension), i recorded                              |
| CALL vector_search.search('i', k, $v)                 | CALL db.idx.vector.queryNodes('L', 'p', k,          |
| YIELD node, similarity                                | vecf32($v)) YIELD node, score, similarity 1 - score |
| (:L {..., p: expr, ...}) with a vector index on L.p   | p: vecf32(expr): Memgraph indexes a list of floats, |
|                                                       | FalkorDB only a vecf32 value                        |

A text or vector index statement is answered once FalkorDB has built the index (engine.py), as Memgraph builds one
within its CREATE.

Unique constraints are recorded, not created: FalkorDB's unique constraints crash its server on strings that are
empty or start or end with white space (see FalkorDBDialect), and FalkorDB serialises writes, so a MERGE cannot
duplicate a key there anyway. Memgraph's enforcement is proven only by the testcontainers tier; here the
violation path runs through the `unique_violation` fault hook.

One check runs before a write, where the engines differ in what they refuse: Memgraph refuses a plain `DELETE` of a
node that still has relationships ("Failed to remove node because of it's existing connections. Consider using
DETACH DELETE."), where FalkorDB drops the relationships silently. `node_delete_probes` finds each plain `DELETE v`
whose `v` is bound in a node pattern (`(v)`, `(v:L ...)`) and gives a read that counts v's relationships at that
point of the statement (the text before the DELETE, then the count); the engine refuses the statement, unrun,
when a count is not 0. Not covered, and passed through as before: a DELETE of a list element (UNWIND, FOREACH),
of an expression, or after a write in the same statement (the probe is read-only); the gate deletes nodes only
with DETACH DELETE, and plainly only relationships and relationship-free registry nodes."""

import re
from dataclasses import dataclass

_NAME = r"(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_CREATE_INDEX = re.compile(rf"^\s*CREATE\s+(EDGE\s+)?INDEX\s+ON\s+:{_NAME}\s*\(\s*{_NAME}\s*\)\s*;?\s*$", re.IGNORECASE)
_CREATE_UNIQUE = re.compile(
    rf"^\s*CREATE\s+CONSTRAINT\s+ON\s+\(\s*(\w+)\s*:{_NAME}\s*\)\s+ASSERT\s+(.+?)\s+IS\s+UNIQUE\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ASSERTED = re.compile(rf"^\s*(\w+)\.{_NAME}\s*$")
_CREATE_TEXT_INDEX = re.compile(
    rf"^\s*CREATE\s+TEXT\s+INDEX\s+{_NAME}\s+ON\s+:{_NAME}\s*\(\s*{_NAME}\s*\)\s*;?\s*$", re.IGNORECASE
)
_TEXT_SEARCH = re.compile(r"CALL\s+text_search\.search_all\(\s*'(\w+)'\s*,\s*\$(query|grams)\s*\)")
_CREATE_VECTOR_INDEX = re.compile(
    rf"^\s*CREATE\s+VECTOR\s+INDEX\s+{_NAME}\s+ON\s+:{_NAME}\s*\(\s*{_NAME}\s*\)\s+WITH\s+CONFIG\s+(\{{.*\}})\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DIMENSION = re.compile(r'"dimension"\s*:\s*(\d+)')
_VECTOR_SEARCH = re.compile(
    r"CALL\s+vector_search\.search\(\s*'(\w+)'\s*,\s*(\$\w+|\d+)\s*,\s*(\$\w+)\s*\)\s+YIELD\s+node\s*,\s*similarity"
)
_TIMESTAMP = re.compile(r"\btimestamp\(\s*\)", re.IGNORECASE)
_SHOW_CONSTRAINTS = re.compile(r"^\s*SHOW\s+CONSTRAINT\s+INFO\s*;?\s*$", re.IGNORECASE)
_DELETE = re.compile(r"\b(DETACH\s+)?DELETE\s+(\w+(?:\s*,\s*\w+)*)", re.IGNORECASE)
MEMGRAPH_CONNECTED_DELETE = (
    "Failed to remove node because of it's existing connections. Consider using DETACH DELETE."  # sic, Memgraph's
)


def unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class CreateIndex:
    label: str  # or, `edge`, a relationship type
    prop: str
    edge: bool = False

    @property
    def falkordb(self) -> str:
        if self.edge:
            return f"CREATE INDEX FOR ()-[r:{quote(self.label)}]-() ON (r.{quote(self.prop)})"
        return f"CREATE INDEX FOR (n:{quote(self.label)}) ON (n.{quote(self.prop)})"


@dataclass(frozen=True)
class CreateUnique:
    label: str
    props: tuple[str, ...]


@dataclass(frozen=True)
class ShowConstraints:
    pass


@dataclass(frozen=True)
class CreateTextIndex:
    name: str
    label: str
    prop: str

    @property
    def falkordb(self) -> str:
        return f"CALL db.idx.fulltext.createNodeIndex({{label: '{self.label}', stopwords: []}}, '{self.prop}')"

    @property
    def falkordb_field(self) -> str:
        """A second index of a label (its trigrams): FalkorDB has one per label, this adds the field to it."""
        return f"CALL db.idx.fulltext.createNodeIndex('{self.label}', '{self.prop}')"


@dataclass(frozen=True)
class CreateVectorIndex:
    name: str
    label: str
    prop: str
    dimension: int

    @property
    def falkordb(self) -> str:
        return (
            f"CREATE VECTOR INDEX FOR (n:{quote(self.label)}) ON (n.{quote(self.prop)}) "
            f"OPTIONS {{dimension: {self.dimension}, similarityFunction: 'cosine'}}"
        )


Translated = CreateIndex | CreateUnique | ShowConstraints | CreateTextIndex | CreateVectorIndex


def translate(text: str) -> Translated | None:
    """What a Memgraph-only statement means, or None: pass the statement through verbatim."""
    if m := _CREATE_INDEX.match(text):
        return CreateIndex(unquote(m[2]), unquote(m[3]), edge=m[1] is not None)
    if m := _CREATE_UNIQUE.match(text):
        variable, label, asserted = m[1], unquote(m[2]), m[3]
        props = []
        for part in asserted.split(","):
            item = _ASSERTED.match(part)
            if item is None or item[1] != variable:
                return None  # not a shape Memgraph accepts either: let FalkorDB refuse it
            props.append(unquote(item[2]))
        return CreateUnique(label, tuple(props))
    if _SHOW_CONSTRAINTS.match(text):
        return ShowConstraints()
    if m := _CREATE_TEXT_INDEX.match(text):
        return CreateTextIndex(unquote(m[1]), unquote(m[2]), unquote(m[3]))
    if (m := _CREATE_VECTOR_INDEX.match(text)) and (dimension := _DIMENSION.search(m[4])):
        return CreateVectorIndex(unquote(m[1]), unquote(m[2]), unquote(m[3]), int(dimension[1]))
    return None


def vector_searches(text: str, indexes: dict[str, tuple[str, str]]) -> str:
    """The statement with each `vector_search.search` on a recorded vector index made FalkorDB's query of its label
    and property; FalkorDB's score is the cosine distance, Memgraph's similarity 1 less it. An index the double
    never created stays as it is, for FalkorDB to refuse."""

    def on_falkordb(m: re.Match[str]) -> str:
        if m[1] not in indexes:
            return m[0]
        label, prop = indexes[m[1]]
        return (
            f"CALL db.idx.vector.queryNodes('{label}', '{prop}', {m[2]}, vecf32({m[3]})) YIELD node, score\n"
            "WITH node, 1 - score AS similarity"
        )

    return _VECTOR_SEARCH.sub(on_falkordb, text)


def vector_values(text: str, indexes: dict[str, tuple[str, str]]) -> str:
    """The statement with each value given to an indexed vector property in a node pattern's map (`(:L {p: e})`)
    made FalkorDB's vector, `vecf32(e)`: a list there is stored as a list, which its vector index never holds."""
    for label, prop in set(indexes.values()):
        pattern = re.compile(rf"\(\s*\w*\s*:\s*{re.escape(label)}\s*\{{")
        at = 0
        while m := pattern.search(text, at):
            text, at = _wrap_value(text, m.end(), prop)
    return text


def _wrap_value(text: str, start: int, prop: str) -> tuple[str, int]:
    """`prop`'s value in the map opened just before `start` wrapped in vecf32(); the map's end, to search on from."""
    depth, i, key_at = 0, start, start
    while i < len(text):
        c = text[i]
        if c in "'\"":  # a string literal: skip it whole
            i = text.index(c, i + 1) + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth > 0:
            depth -= 1
        elif depth == 0 and c in ",}":
            key, sep, value = text[key_at:i].partition(":")
            if sep and unquote(key.strip()) == prop and not value.strip().startswith("vecf32("):
                wrapped = f"{key}: vecf32({value.strip()})"
                text = text[:key_at] + wrapped + text[i:]
                i = key_at + len(wrapped)
                c = text[i]
            if c == "}":
                return text, i + 1
            key_at = i + 1
        i += 1
    return text, len(text)


def text_searches(text: str, labels: dict[str, str]) -> tuple[str, set[str]] | None:
    """The statement with each `text_search.search_all` on a recorded index made FalkorDB's query of that label,
    and the parameters those queries take (`query`, or `grams` for the trigrams' index: on FalkorDB, a query of
    the label's one index, which holds the search text too, so it finds more, never less); None when it has none.
    An index the double never created stays as it is, for FalkorDB to refuse."""
    if not _TEXT_SEARCH.search(text):
        return None
    searched: set[str] = set()

    def on_falkordb(m: re.Match[str]) -> str:
        label = labels.get(m[1])
        if label is None:
            return m[0]
        searched.add(m[2])
        return f"CALL db.idx.fulltext.queryNodes('{label}', ${m[2]})"

    return _TEXT_SEARCH.sub(on_falkordb, text), searched


_JOIN_START = re.compile(r"reduce\((\w) = '', \1_s IN ")
_JOIN_END = re.compile(r" \| (\w) \+ \1_s\)")


def string_joins(text: str) -> str:
    """Memgraph's join of a list of strings (`MemgraphDialect.join`: `reduce(v = '', v_s IN list | v + v_s)`) as
    FalkorDB's `string.join(list, '')`: FalkorDB 4.16's `+` loses characters of a string it built to 512 or 1,024
    bytes, where Memgraph's does not. Both ends are rewritten on their own, so joins nested in joins are too."""
    return _JOIN_END.sub(", '')", _JOIN_START.sub("string.join(", text))


def memgraph_clock(text: str) -> str:
    """The statement with each `timestamp()` counting microseconds, as Memgraph's does (FalkorDB's counts
    milliseconds), so a statement that gets the units wrong fails on the Bolt tier."""
    return _TIMESTAMP.sub("(timestamp() * 1000)", text)


def redisearch_query(tantivy: str) -> str:
    """The gate's Tantivy queries use words, phrases, parentheses, AND and OR only: RediSearch writes AND as a
    space and OR as `|`."""
    return tantivy.replace(" AND ", " ").replace(" OR ", " | ")


def node_delete_probes(text: str) -> list[str]:
    """For each plain DELETE of a node-pattern variable: a read of how many relationships that node has there."""
    probes = []
    for m in _DELETE.finditer(text):
        if m[1]:
            continue  # DETACH DELETE: Memgraph removes the relationships too
        before = text[: m.start()]
        for variable in re.split(r"\s*,\s*", m[2]):
            if re.search(rf"\(\s*{re.escape(variable)}\s*[:){{]", before):
                probes.append(f"{before}\nWITH DISTINCT {variable} AS d\nMATCH (d)-[x]-()\nRETURN count(x) AS c")
    return probes
