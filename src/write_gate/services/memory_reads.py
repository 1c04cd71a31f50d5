"""The memory profile's search_nodes and open_nodes, one statement each (core/cypher/memory_reads.py), answered
exactly as the shared reads answer them (services/reads.py: the same page, order, cursor and shape).

The drop-in's clients ask plainly (a query; some names), and each call's round trips are most of its cost, so
those are read with their neighbours in one go. What the one statement does not cover is read the shared way,
two statements or more: a search or open that shows or filters by claims, a search by tags or importance, an
open that continues from a cursor, and an open that found an alias (followed to its survivor)."""

from write_gate.core.cypher.memory_reads import open_with_neighbours, search_with_neighbours
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import KEY_FIELD, fold, identity_key
from write_gate.services.reads import (
    DEFAULT_RELATIONS_LIMIT,
    GraphResult,
    OpenNodesRequest,
    Reader,
    SearchNodesRequest,
    decode_cursor,
    encode_cursor,
    shape,
)


async def search_nodes(reader: Reader, request: SearchNodesRequest) -> GraphResult:
    if request.provenance is not None or request.entity_filter().active:
        return await reader.search_nodes(request)
    position = decode_cursor(request.cursor, "search", l=str, a=str)
    labels = reader.labels_to_read(request.labels)
    if position is not None:
        labels = [label for label in labels if label >= position["l"]]
    statement = search_with_neighbours(tuple(labels), request.includeArchived)
    if statement is None:
        return GraphResult(entities=[], relations=[], next_cursor=None)
    params = {
        "query": fold(request.query),
        "after": position["a"] if position is not None and labels[0] == position["l"] else "",
        "limit": request.limit,
        "take": request.limit + 1,  # one more from each label: is there a next page
        "per_node": DEFAULT_RELATIONS_LIMIT,
        "include_archived": request.includeArchived,
    }
    rows = await reader.read(Statement(statement.text, params))
    # The page in its order: label after label (sorted), each in `_key` order.
    placed = sorted({(row["at"], row["id"]) for row in rows})
    page = [node_id for _, node_id in placed]
    next_cursor = None
    if rows and rows[0]["next"]:
        last = next(row for row in rows if row["id"] == page[-1])
        label = next(label for label in labels if label in last["labels"])
        next_cursor = encode_cursor("search", l=label, a=last["props"][KEY_FIELD])
    expanded = shape(rows, page)
    return expanded.result.model_copy(update={"next_cursor": next_cursor})


async def open_nodes(reader: Reader, request: OpenNodesRequest) -> GraphResult:
    names = list(dict.fromkeys(request.names))
    scope = reader.name_scope()
    statement = open_with_neighbours(scope.keyed_by_name, scope.other)
    if request.cursor is not None or request.provenance is not None or statement is None or not names:
        return await reader.open_nodes(request)
    params = {
        "names": names,
        "name_keys": [identity_key({"name": name}) for name in names],
        "per_node": request.relations_limit,
        "include_archived": request.includeArchived,
    }
    rows = await reader.read(Statement(statement.text, params))
    if any(row["alias_key"] is not None for row in rows):
        return await reader.open_nodes(request)  # an alias opens its survivor: found the shared way
    if not request.includeArchived:
        rows = [row for row in rows if not row["archived"]]
    expanded = shape(rows, sorted({row["id"] for row in rows}))
    resume = expanded.resume_after
    next_cursor = encode_cursor("open", r=resume) if resume is not None else None
    return expanded.result.model_copy(update={"next_cursor": next_cursor})
