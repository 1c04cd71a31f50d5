"""A search page's candidates from the labels' trigram indexes (`core.grams`), instead of a scan of every node.

For each label in turn (its place in `labels` is the `part` column), the nodes whose trigrams hold every one of
`$grams` (the index's answer, `Dialect.gram_search`), at most `$cap` of them; each confirmed by `CONTAINS` on
its search text, as the scan does, and filtered as a page is; then the label's first `$limit` in its page order
(`Dialect.pages_by_id`: engine id, or `_key`), after `$after` in the first label and from the start in the
others. The index answers in its own order, so a label's candidates are sorted: what that costs grows with the
candidates, so past `$cap` of them the label answers one row with a null `id` instead (`overflow`), and the caller
pages it by the scan (`reads.page_of_labels`), which finds a common substring's page in its first nodes.
"""

import functools

from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.reads import entity_conditions, position_after
from write_gate.core.cypher.statement import Statement
from write_gate.core.grams import GRAMS_FIELD
from write_gate.core.identity import KEY_FIELD, SEARCH_FIELD

NOT_READY = -1  # the `part` of the row saying a label's trigram index cannot answer completely now


@functools.lru_cache(maxsize=64)
def gram_page(
    dialect: Dialect,
    labels: tuple[str, ...],
    *,
    filtered: bool = False,
    knowledge: bool = False,
    include_archived: bool = False,
) -> Statement | None:
    """Columns `part`, `id` (null: the label overflowed) and `key` (the page position). Parameters: `grams`
    (`Dialect.gram_query`), `query` (folded), `cap`, `after` (-1 or '' for the first page), `limit`, `guarded`
    (the labels), the claim filter's when `filtered`, the knowledge filter's when `knowledge`; archived nodes only
    with `include_archived`. Where the engine builds its indexes in the background (`Dialect.text_index_guard`),
    a row with `part` NOT_READY says a label's trigram index could not answer completely: the page's
    other rows are then not to be trusted. None for no labels."""
    by_id = dialect.pages_by_id
    start = "-1" if by_id else "''"
    position = "id(n)" if by_id else f"n.{KEY_FIELD}"
    parts = []
    for part, label in enumerate(labels):
        conditions = [
            position_after("n", by_id, "$after" if part == 0 else start),
            f"n.{SEARCH_FIELD} CONTAINS $query",
            *entity_conditions(filtered=filtered, knowledge=knowledge, include_archived=include_archived),
        ]
        parts.append(
            f"{dialect.gram_search(label)}\n"
            "WITH node AS n LIMIT $cap\n"  # the index streams: a common trigram's nodes are never all read
            "WITH collect(n) AS found\n"
            "UNWIND CASE WHEN size(found) < $cap THEN found ELSE [null] END AS n\n"
            f"WITH n WHERE n IS NULL OR ({' AND '.join(conditions)})\n"
            f"RETURN {part} AS part, id(n) AS id, {position} AS key\n"
            "ORDER BY key\n"
            "LIMIT $limit"
        )
    if parts and (guard := dialect.text_index_guard(GRAMS_FIELD)) is not None:
        # Asked with the page, not before it: one round trip, one consistent read.
        parts.insert(0, f"{guard}RETURN {NOT_READY} AS part, null AS id, null AS key")
    return Statement("\nUNION ALL\n".join(parts)) if parts else None
