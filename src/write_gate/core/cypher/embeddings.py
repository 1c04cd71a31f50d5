"""Embedding vectors in the graph (issue 38): each text's vector on a node of its own, `:_Embedding`, naming
its entity by label and `_key`, with its provenance (provider, model, dimension, embedded_at, text_hash).

FalkorDB 4.16 loses a vector `SET` over an indexed one (FalkorDB #2099, #2179); a vector node deleted and
created anew stays findable and exact (../shared/DESIGN.md). So a text's vector is never updated: a write
deletes the vectors of the texts it replaces and creates those of texts not already there.
"""

from typing import Any

from write_gate.core.cypher.aliases import not_alias
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.ranges import exactly
from write_gate.core.cypher.reads import entity_conditions
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote, string_literal
from write_gate.core.identity import KEY_FIELD

EMBEDDING_LABEL = "_Embedding"
VECTOR_FIELD = "vector"
MEMGRAPH_INDEX = "write_gate_embeddings"
# Memgraph's vector index is sized when created (it grows past this, at a cost).
MEMGRAPH_CAPACITY = 100_000


def _vector(expr: str, dialect: Dialect) -> str:
    return f"vecf32({expr})" if dialect.name == "falkordb" else expr


def replace_vectors(dialect: Dialect, carried: tuple[str, ...] = (), key: str = "e.key") -> list[str]:
    """Clauses that go before a write (the write's own statement, no second round trip): for each entry of
    `$embeddings` (`label`, `key`, `fields`: the embedded fields the write replaces, `texts`: [{field, hash,
    vector}], `drop`: hashes of texts it removes), the vectors of texts no longer there are deleted and those
    of new texts created; a text already embedded (by this model) is left as it is. `$embedder` is the
    provenance. Ends with one row (per row of `carried`, the variables before it), `key` the entity's key
    expression."""
    keep = "".join(f"{v}, " for v in carried)
    make = (
        f"CREATE (:{EMBEDDING_LABEL} {{label: e.label, key: {key}, field: t.field, text_hash: t.hash, "
        f"{VECTOR_FIELD}: {_vector('t.vector', dialect)}, provider: $embedder.provider, model: $embedder.model, "
        "dimension: $embedder.dimension, embedded_at: $embedder.at})"
    )
    return [
        "UNWIND $embeddings AS e",
        f"OPTIONAL MATCH (o:{EMBEDDING_LABEL} {{key: {key}, label: e.label}})",
        f"WITH {keep}e, collect(o) AS olds",
        # A vector of another model (WRITE_GATE_EMBEDDINGS changed) is as good as none: its text is embedded again.
        f"WITH {keep}e, olds, [o IN olds WHERE o.model = $embedder.model | o.text_hash] AS had,"
        " [t IN e.texts | t.hash] AS hashes",
        "FOREACH (o IN [o IN olds WHERE (o.field IN e.fields AND NOT o.text_hash IN hashes)"
        " OR o.text_hash IN coalesce(e.drop, []) OR (o.text_hash IN hashes AND o.model <> $embedder.model)]"
        " | DELETE o)",
        f"FOREACH (t IN [t IN e.texts WHERE NOT t.hash IN had] | {make})",
        f"WITH {keep}count(*) AS _embedded",
    ]


def with_vectors(
    statement: Statement, dialect: Dialect, embeddings: list[dict[str, Any]], embedder: dict[str, Any]
) -> Statement:
    """`statement` led by `replace_vectors` (it starts a statement: nothing carried)."""
    text = "\n".join([*replace_vectors(dialect), statement.text])
    return Statement(text, {**statement.params, "embeddings": embeddings, "embedder": embedder})


def drop_vectors_of(nodes: str) -> list[str]:
    """Before deleting the nodes of the list `nodes` (a variable): their vectors, so none is left behind. Keeps
    only `nodes` in scope."""
    # Node by node, gathered again with no grouping key: grouped by the list `nodes`, every row hashed the whole
    # list (a delete of N entities cost N squared).
    return [
        f"UNWIND {nodes} AS m",
        f"OPTIONAL MATCH (o:{EMBEDDING_LABEL} {{key: m.{KEY_FIELD}}}) WHERE o.label = head(labels(m))",
        f"WITH collect(DISTINCT m) AS {nodes}, collect(o) AS vectors",
        "FOREACH (o IN vectors | DELETE o)",
        f"WITH {nodes}",
    ]


def vector_indexes(dialect: Dialect, dimension: int) -> list[Statement]:
    """The vector index (cosine) and the look-up by entity key; each refused as existing when it is."""
    if dialect.name == "falkordb":
        return [
            Statement(
                f"CREATE VECTOR INDEX FOR (v:{EMBEDDING_LABEL}) ON (v.{VECTOR_FIELD}) "
                f"OPTIONS {{dimension: {int(dimension)}, similarityFunction: 'cosine'}}"
            ),
            Statement(f"CREATE INDEX FOR (v:{EMBEDDING_LABEL}) ON (v.key)"),
        ]
    config = f'{{"dimension": {int(dimension)}, "capacity": {MEMGRAPH_CAPACITY}, "metric": "cos"}}'
    return [
        Statement(f"CREATE VECTOR INDEX {MEMGRAPH_INDEX} ON :{EMBEDDING_LABEL}({VECTOR_FIELD}) WITH CONFIG {config}"),
        Statement(f"CREATE INDEX ON :{EMBEDDING_LABEL}(key)"),
    ]


def nearest_texts(dialect: Dialect) -> Statement:
    """Read-only: the `$k` texts nearest `$vector`, with their entity's label and key and the cosine similarity.
    FalkorDB answers a cosine distance (1 - similarity); Memgraph the similarity itself."""
    if dialect.name == "falkordb":
        call = (
            f"CALL db.idx.vector.queryNodes({string_literal(EMBEDDING_LABEL)}, {string_literal(VECTOR_FIELD)}, $k, "
            "vecf32($vector)) YIELD node, score\nWITH node, 1 - score AS similarity"
        )
    else:
        call = f"CALL vector_search.search({string_literal(MEMGRAPH_INDEX)}, $k, $vector) YIELD node, similarity"
    return Statement(f"{call}\nRETURN node.label AS label, node.key AS key, similarity")


# Parameters: none. FalkorDB builds its vector index in the background, after its creation (and at a start that
# loads it), and until it is done refuses a k-NN query ("Invalid arguments for procedure
# 'db.idx.vector.queryNodes'"): measured, 6,000 vectors of 256 floats in about a second, 25,000 in about twelve.
# Memgraph builds its index in the CREATE itself.
VECTOR_INDEX_STATE = Statement(
    f"CALL db.indexes() YIELD label, types, status WHERE label = {string_literal(EMBEDDING_LABEL)} RETURN types, status"
)


def vector_index_state(dialect: Dialect) -> Statement | None:
    """The statement that tells whether the vector index is still being built; None where it never is."""
    return VECTOR_INDEX_STATE if dialect.name == "falkordb" else None


def vector_index_building(rows: list[dict[str, Any]]) -> str | None:
    """From `VECTOR_INDEX_STATE`'s rows: the engine's progress (e.g. "[Indexing] 3058/20000: UNDER CONSTRUCTION")
    while the vector index is being built, None when it answers (or does not exist)."""
    for row in rows:
        if VECTOR_FIELD in (row.get("types") or {}) and row.get("status") != "OPERATIONAL":
            return str(row.get("status"))
    return None


def entities_of_texts(labels: list[str], *, filtered: bool, knowledge: bool, include_archived: bool) -> Statement:
    """Read-only: the entities the texts `$hits` ([{label, key, similarity}]) belong to, among `labels`, that pass
    the search's filters (aliases, archived, claims, tags, importance); one branch per label."""
    where = " AND ".join(entity_conditions(filtered=filtered, knowledge=knowledge, include_archived=include_archived))
    branches = [
        f"UNWIND $hits AS h\nWITH h WHERE h.label = {string_literal(label)}\n"
        f"MATCH (n:{quote(label)} {{{KEY_FIELD}: h.key}})\nWHERE {where}\n"
        f"RETURN id(n) AS id, n.{KEY_FIELD} AS key, h.similarity AS similarity"
        for label in labels
    ]
    return Statement("\nUNION ALL\n".join(branches))


def embedded_page(label: str) -> Statement:
    """Read-only: a page of `label`'s entities after `$after` (by `_key`), `$limit` of them, with their
    properties and the models of their vectors (`write-gate embeddings reembed`)."""
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE {exactly(f'n.{KEY_FIELD}', '>', '$after')} AND {not_alias('n')}\n"
        f"WITH n ORDER BY n.{KEY_FIELD} LIMIT $limit\n"
        f"OPTIONAL MATCH (o:{EMBEDDING_LABEL} {{key: n.{KEY_FIELD}, label: {string_literal(label)}}})\n"
        f"RETURN n.{KEY_FIELD} AS key, properties(n) AS props, collect(o.model) AS models\n"
        f"ORDER BY key"
    )


def vectors_alone(dialect: Dialect) -> Statement:
    """`replace_vectors` as a statement of its own (a re-embedding writes vectors, no values)."""
    return Statement("\n".join([*replace_vectors(dialect), "RETURN _embedded"]))
