"""The ranked search's candidate reads: one statement for every label searched, one branch per label.

Through the engines' full-text indexes (`Dialect.text_search`): each label's best `$window` candidates by the
index's score after its best `$skip` (the ranked search reads them in blocks). Where no index can narrow the
query: every node of each label, narrowed only by words the query requires (`$required`, each contained in the
node's search text). Both return each candidate's search text (its properties too, with `fields`), for the judge
(`core.search_query`) to decide on; aliases are skipped and the claim filter (`claim_matches`) applied in the
engine.
"""

from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.reads import entity_conditions
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import KEY_FIELD, SEARCH_FIELD


def _candidate(with_properties: bool) -> str:
    """Each candidate's id, score, `_key` and search text; its properties too where the judge needs them (a
    query naming fields): they cost the engine and the driver far more than one string."""
    columns = f"id(n) AS id, score, n.{KEY_FIELD} AS key, n.{SEARCH_FIELD} AS text"
    return columns + (", properties(n) AS props" if with_properties else "")


def _where(filtered: bool, knowledge: bool, include_archived: bool) -> str:
    return " AND ".join(entity_conditions(filtered=filtered, knowledge=knowledge, include_archived=include_archived))


def indexed_candidates(
    dialect: Dialect,
    labels: list[str],
    *,
    filtered: bool,
    fields: bool = False,
    knowledge: bool = False,
    include_archived: bool = False,
) -> Statement:
    """Parameters: `query` (the engine's syntax), `skip` and `window`, `guarded` (the labels), the claim filter's when
    `filtered`, the knowledge filter's when `knowledge` (`reads.knowledge_matches`). Where the engine builds its
    indexes in the background (`Dialect.text_index_guard`), a row with a null `id` says a label's index cannot
    answer completely now: the other rows are then not to be trusted."""
    # Ordered and cut before the columns are read: the index answers every match, and reading each one's properties
    # before the sort cost a block of a field query 10.1 ms against 7.7 (1,000 matches in a million nodes; its
    # text alone cost the same either way).
    branches = [
        f"{dialect.text_search(label)}\n"
        f"WITH node AS n, score WHERE {_where(filtered, knowledge, include_archived)}\n"
        f"WITH n, score ORDER BY score DESC, n.{KEY_FIELD} SKIP $skip LIMIT $window\n"
        f"RETURN {_candidate(fields)}"
        for label in labels
    ]
    if branches and (guard := dialect.text_index_guard(SEARCH_FIELD)) is not None:
        # Asked with the candidates, not before them: one round trip, one consistent read.
        marker = "null AS id, null AS score, null AS key, null AS text" + (", null AS props" if fields else "")
        branches.insert(0, f"{guard}RETURN {marker}")
    return Statement("\nUNION ALL\n".join(branches))


def scanned_candidates(
    labels: list[str], *, filtered: bool, fields: bool = False, knowledge: bool = False, include_archived: bool = False
) -> Statement:
    """Parameters: `required` (folded words every match contains), the claim filter's when `filtered`, the
    knowledge filter's when `knowledge`."""
    where = _where(filtered, knowledge, include_archived)
    branches = [
        f"MATCH (n:{quote(label)})\n"
        f"WHERE all(w IN $required WHERE n.{SEARCH_FIELD} CONTAINS w) AND {where}\n"
        f"WITH n, 0.0 AS score\n"
        f"RETURN {_candidate(fields)}"
        for label in labels
    ]
    return Statement("\nUNION ALL\n".join(branches))
