"""Each registered label's full-text index on its search text, for the ranked search (`services/search.py`).

Search text written before migration 0007 joined its values with a newline, which FalkorDB's tokenizer does
not split words on; it is rewritten with the tab that writes use now, label by label, then indexed.
"""

from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote
from write_gate.core.identity import OLD_SEPARATOR, SEARCH_FIELD, SEPARATOR
from write_gate.engines import GraphBackend
from write_gate.store.graph_registry import GraphRegistrySource


def resplit_search_text(label: str) -> Statement:
    return Statement(
        f"MATCH (n:{quote(label)}) WHERE n.{SEARCH_FIELD} CONTAINS $old\n"
        f"SET n.{SEARCH_FIELD} = replace(n.{SEARCH_FIELD}, $old, $new)\n"
        "RETURN count(n) AS changed",
        {"old": OLD_SEPARATOR, "new": SEPARATOR},
    )


async def index_search_text(backend: GraphBackend) -> list[str]:
    """Rewrite old search text and index every registered node label; returns the labels indexed."""
    registry = await GraphRegistrySource(backend).load()
    indexed = []
    for label in registry.all_canonical_labels():
        await backend.write(resplit_search_text(label))
        if await backend.ensure_text_index(label):
            indexed.append(label)
    return indexed
