"""What differs between the engines' Cypher, each difference in one place."""

from collections.abc import Hashable, Sequence
from typing import Protocol

from write_gate.core.cypher.statement import Statement
from write_gate.core.grams import GRAMS_FIELD
from write_gate.core.identifiers import quote, string_literal
from write_gate.core.identity import SEARCH_FIELD


class Dialect(Hashable, Protocol):  # statement builders cache by dialect
    name: str
    # Whether a label's nodes are paged in engine id order (a scan in id order that stops at the page: FalkorDB's
    # "Node By Label and ID Scan") or in `_key` order (Memgraph's label-property index, ordered by value).
    pages_by_id: bool
    # Whether one index scan answers ranges on two indexed properties together (FalkorDB builds one index query of
    # every indexed condition on a node); an engine that takes one index a scan may take the wrong one.
    two_ranges_in_one_scan: bool
    # Whether the engine's MERGE in an UNWIND gives the nodes and relationships it creates their ids last row first
    # (FalkorDB creates them together once every row is matched, from the end): a batch sends its rows reversed
    # there, so what it creates is listed in the order it was given, as one write at a time would be.
    merges_in_reverse: bool
    # The engine's clock, in whole milliseconds since the epoch: an expression a statement evaluates where it runs.
    # The one clock every gate shares (core.quarantine.replay_arrival); the gates' own clocks may disagree.
    clock: str

    def create_index(self, label: str, prop: str) -> str: ...

    def create_relationship_index(self, type_: str, prop: str) -> str: ...

    def create_unique_constraint(self, label: str, prop: str) -> str | None:
        """The DDL, or None where the engine gets no constraint (and why is said there)."""
        ...

    def drop_index(self, label: str, prop: str) -> str | None:
        """The DDL that drops an index (on a raw merge-key value, or one no statement reads), or None where it is
        kept."""
        ...

    def create_text_index(self, label: str) -> str:
        """The DDL of the label's full-text index on its search text (`_search`)."""
        ...

    def text_search(self, label: str) -> str:
        """A clause yielding `node, score` for the label's nodes that the full-text query `$query` finds."""
        ...

    def text_index_guard(self, field: str) -> str | None:
        """The start of a UNION ALL branch that goes on (to its RETURN of one marker row) only when not every label
        in `$guarded` has a full-text index on `field` that answers completely now: so a read and the state of the
        indexes it reads are one statement. None where an index answers completely as soon as it exists."""
        ...

    def create_gram_index(self, label: str) -> str:
        """The DDL of the label's full-text index on its trigrams (`_grams`, `core.grams`), after its text index."""
        ...

    def gram_search(self, label: str) -> str:
        """A clause yielding `node` for the label's nodes whose trigrams hold every one of `$grams`."""
        ...

    def gram_query(self, grams: Sequence[str]) -> str:
        """`$grams` for `gram_search`: all of these trigrams (letters and digits only: nothing to escape)."""
        ...

    def join(self, strings: str, var: str) -> str:
        """An expression: the strings of the list expression `strings`, joined; `var` names the accumulator where
        the engine needs one (unique among joins nested in one another)."""
        ...


class MemgraphDialect:
    name = "memgraph"
    # Memgraph finds `id(n) > $after` by scanning the label; its `_key` index is a skip list in value order.
    pages_by_id = False
    # Its planner takes one label-property index a scan and filters the rest: a millisecond's keys (`seq_k`, small
    # numbers in every millisecond) taken alone would read most of the history, so they get no index there.
    two_ranges_in_one_scan = False
    merges_in_reverse = False
    # Memgraph's timestamp() counts microseconds; a division of integers truncates.
    clock = "(timestamp() / 1000)"

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX ON :{quote(label)}({quote(prop)})"

    def create_relationship_index(self, type_: str, prop: str) -> str:
        return f"CREATE EDGE INDEX ON :{quote(type_)}({quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str, *more: str) -> str:
        # Memgraph's constraint creates no index; callers create the index as well. Several properties make one
        # composite constraint: unique as a combination, as merge keys are.
        props = ", ".join(f"n.{quote(p)}" for p in (prop, *more))
        return f"CREATE CONSTRAINT ON (n:{quote(label)}) ASSERT {props} IS UNIQUE"

    def drop_index(self, label: str, prop: str) -> None:
        # Memgraph's indexes find every string: an old one on a merge key is harmless.
        return None

    # Memgraph's text search (Tantivy; stable from 3.6, behind --experimental-enabled=text-search before).
    # One index per label, named after it, on the search text only.
    def create_text_index(self, label: str) -> str:
        return f"CREATE TEXT INDEX {quote(text_index_name(label))} ON :{quote(label)}({SEARCH_FIELD})"

    def text_search(self, label: str) -> str:
        return f"CALL text_search.search_all({string_literal(text_index_name(label))}, $query) YIELD node, score"

    def text_index_guard(self, field: str) -> None:
        # Memgraph builds a text index within CREATE TEXT INDEX, and its recovery before it serves.
        return None

    # The trigrams get a text index of their own: the ranked search's index holds the search text alone.
    def create_gram_index(self, label: str) -> str:
        return f"CREATE TEXT INDEX {quote(gram_index_name(label))} ON :{quote(label)}({GRAMS_FIELD})"

    def gram_search(self, label: str) -> str:
        return f"CALL text_search.search_all({string_literal(gram_index_name(label))}, $grams) YIELD node"

    def gram_query(self, grams: Sequence[str]) -> str:
        return " AND ".join(grams)

    def join(self, strings: str, var: str) -> str:
        return f"reduce({var} = '', {var}_s IN {strings} | {var} + {var}_s)"


class FalkorDBDialect:
    name = "falkordb"
    # Its string range index reads every match past the cursor, out of order, and the page sorts them all (a page
    # 3,000 nodes into 300,000 cost 572 ms); a label's scan by id reads the page and stops. A node keeps its id
    # while it lives, so a walk still meets every node that lives throughout it exactly once.
    pages_by_id = True
    two_ranges_in_one_scan = True
    merges_in_reverse = True
    clock = "timestamp()"  # milliseconds

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX FOR (n:{quote(label)}) ON (n.{quote(prop)})"

    def create_relationship_index(self, type_: str, prop: str) -> str:
        return f"CREATE INDEX FOR ()-[r:{quote(type_)}]-() ON (r.{quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str) -> None:
        # None on purpose. FalkorDB (the module falkordblite 0.11 ships) crashes the whole server in
        # EnforceUniqueEntity when a constrained string is empty or starts or ends with ASCII white
        # space, e.g. "Alice " (tests/integration/test_engine.py keeps the regression). It needs no
        # constraint for the gate's guarantee: it serialises writes, so two MERGEs of a new key
        # cannot both create it, and the gate never issues CREATE. The index keeps lookups fast.
        return None

    def drop_index(self, label: str, prop: str) -> str:
        # An index on a raw value misses strings edged with white space: identity lives in `_key` now.
        return f"DROP INDEX FOR (n:{quote(label)}) ON (n.{quote(prop)})"

    # FalkorDB's full-text index (RediSearch): one per label; no stop words, so every word can be found.
    def create_text_index(self, label: str) -> str:
        options = f"{{label: {string_literal(label)}, stopwords: []}}"
        return f"CALL db.idx.fulltext.createNodeIndex({options}, {string_literal(SEARCH_FIELD)})"

    def text_search(self, label: str) -> str:
        return f"CALL db.idx.fulltext.queryNodes({string_literal(label)}, $query) YIELD node, score"

    def text_index_guard(self, field: str) -> str:
        # FalkorDB builds an index over existing nodes in the background, after its creation and at every start
        # (from the append-only file), and until then answers a full-text query with nothing: measured, 10,000
        # nodes answered 0 matches for about 0.1 s after a restart. `status` is "OPERATIONAL" once complete.
        # Counted over every index (a label may be absent, and db.indexes() answers at least the graph's range
        # indexes, so the count always has its one row on a graph that exists; one that does not answers no rows,
        # and has nothing to find either).
        ready = (
            f"count(DISTINCT CASE WHEN label IN $guarded AND status = 'OPERATIONAL' "
            f"AND 'FULLTEXT' IN types.{quote(field)} THEN label END)"
        )
        return (
            "CALL db.indexes() YIELD label, types, status\n"
            f"WITH {ready} AS ready\n"
            "WITH ready WHERE ready < size($guarded)\n"
        )

    # The trigrams are a second field of the label's one full-text index, not stemmed (a trigram is no word); the
    # index has no stop words already (`the`, `and` are trigrams too). A search names the field it reads.
    def create_gram_index(self, label: str) -> str:
        return (
            f"CALL db.idx.fulltext.createNodeIndex({string_literal(label)}, {{field: '{GRAMS_FIELD}', nostem: true}})"
        )

    def gram_search(self, label: str) -> str:
        return f"CALL db.idx.fulltext.queryNodes({string_literal(label)}, $grams) YIELD node"

    def gram_query(self, grams: Sequence[str]) -> str:
        return f"@{GRAMS_FIELD}:({' '.join(grams)})"

    # Not `reduce` with `+`: FalkorDB 4.16's `+` loses characters where a string it built reaches 512 or 1,024 bytes
    # (("a" * 500 + "b" * 12) + "z" has 511 characters), and its reduce over strings has answered garbage.
    def join(self, strings: str, var: str) -> str:
        return f"string.join({strings}, '')"


# FalkorDB 4.16 keeps each label a write gives a node in the node-label matrix's pending part until a read looks at
# node labels (or the engine forks for a snapshot); that read merges the pending part into the matrix once it holds
# 10,000 entries or more (DELTA_MAX_PENDING_CHANGES). Until then every write that sets a property on a node after
# creating one looks the node's labels up and re-merges all of it: measured, a write_node took 20-25 ms at a million
# nodes written with no read between (0.5 ms once read). This is that read, on any one node: the backend sends it
# after every 10,000 nodes its writes create (engines/falkordb.py).
SETTLE_NODE_LABELS = Statement("MATCH (n) RETURN labels(n) AS labels LIMIT 1")


def text_index_name(label: str) -> str:
    return f"write_gate_text_{label}"


def gram_index_name(label: str) -> str:
    return f"write_gate_grams_{label}"
