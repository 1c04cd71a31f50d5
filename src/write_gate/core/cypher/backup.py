"""The lossless backup's statements: every node and relationship as stored, out by pages and back by batches.

Pages walk the engine's own ids upward (keyset paging: no SKIP rescans). Restore creates one label set's or one
relationship type's batch per statement (labels and types cannot be parameters); values travel as parameters.
"""

from collections.abc import Sequence

from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import quote

COUNT_NODES = Statement("MATCH (n) RETURN count(n) AS nodes")

NODE_PAGE = Statement(
    "MATCH (n) WHERE id(n) > $cursor\n"
    "RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props\n"
    "ORDER BY id LIMIT $limit"
)

RELATIONSHIP_PAGE = Statement(
    "MATCH (a)-[r]->(b) WHERE id(r) > $cursor\n"
    "RETURN id(r) AS id, id(a) AS from_id, id(b) AS to_id, type(r) AS type, properties(r) AS props\n"
    "ORDER BY id LIMIT $limit"
)


def restore_nodes(labels: Sequence[str]) -> Statement:
    """`$rows`: [{pos, props}]; answers each row's position with the engine id its node got."""
    spelled = "".join(f":{quote(label)}" for label in labels)
    return Statement(f"UNWIND $rows AS row CREATE (n{spelled}) SET n = row.props\nRETURN row.pos AS pos, id(n) AS id")


def restore_relationships(type_: str) -> Statement:
    """`$rows`: [{from, to, props}], endpoints by the engine ids restore_nodes answered."""
    return Statement(
        "UNWIND $rows AS row MATCH (a) WHERE id(a) = row.from MATCH (b) WHERE id(b) = row.to\n"
        f"CREATE (a)-[r:{quote(type_)}]->(b) SET r = row.props\n"
        "RETURN count(r) AS created"
    )
