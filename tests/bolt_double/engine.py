"""Run one statement on a real FalkorDB and describe the outcome as Memgraph would: fields, records (PackStream
values), the query type ("r", "w", "rw", "s"), change counters, notifications, and Memgraph's failure codes."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import redis.exceptions
from falkordb import Edge, Node, Path

from tests.bolt_double import packstream
from tests.bolt_double.translate import (
    MEMGRAPH_CONNECTED_DELETE,
    CreateIndex,
    CreateTextIndex,
    CreateUnique,
    CreateVectorIndex,
    ShowConstraints,
    memgraph_clock,
    node_delete_probes,
    redisearch_query,
    string_joins,
    text_searches,
    translate,
    vector_searches,
    vector_values,
)
from write_gate.engines.falkordb_client import done_sending, open_client, sending

# Memgraph's failure codes (communication/bolt/v1/states/handlers.hpp): query errors are ClientErrors,
# aborts (conflicts, timeouts) TransientErrors.
CLIENT_ERROR = "Memgraph.ClientError.MemgraphError.MemgraphError"
TRANSIENT_ERROR = "Memgraph.TransientError.MemgraphError.MemgraphError"
UNAUTHENTICATED = "Memgraph.ClientError.Security.Unauthenticated"
# Memgraph's default database, where a session names none.
DEFAULT_DATABASE = "memgraph"

_READ_ONLY_REFUSAL = "is to be executed only on read-only queries"
_NO_GRAPH_YET = "empty key"
_ALREADY_INDEXED = "already indexed"
_OTHER_FIELD = "Can not override index configuration"  # FalkorDB: options given for a label already indexed
# FalkorDB's change counters under the names Memgraph's summary `stats` uses.
_STATS = {
    "nodes-created": "nodes_created",
    "nodes-deleted": "nodes_deleted",
    "relationships-created": "relationships_created",
    "relationships-deleted": "relationships_deleted",
    "properties-set": "properties_set",
    "labels-added": "labels_added",
    "labels-removed": "labels_removed",
}


class MemgraphError(Exception):
    """A failure answered to the client with Memgraph's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EngineGone(Exception):
    """FalkorDB cannot be reached: the double drops the client's connection, as a dead Memgraph would. `applied`:
    a write had reached FalkorDB, which may have applied it (see server.py's in-doubt commit)."""

    def __init__(self, message: str, applied: bool = False) -> None:
        super().__init__(message)
        self.applied = applied


@dataclass
class Outcome:
    fields: list[str] = field(default_factory=list)
    records: list[list[Any]] = field(default_factory=list)
    type: str = "r"
    stats: dict[str, int] = field(default_factory=dict)
    notifications: list[dict[str, Any]] = field(default_factory=list)


def to_packstream(value: Any) -> Any:
    if isinstance(value, Node):
        return packstream.node(value.id, list(value.labels or []), to_packstream(value.properties))
    if isinstance(value, Edge):
        return packstream.relationship(
            value.id, value.src_node, value.dest_node, value.relation, to_packstream(value.properties)
        )
    if isinstance(value, Path):
        nodes = [to_packstream(n) for n in value.nodes()]
        rels, indices = [], []
        for i, edge in enumerate(value.edges()):
            rels.append(packstream.unbound_relationship(edge.id, edge.relation, to_packstream(edge.properties)))
            forward = edge.src_node == value.nodes()[i].id
            indices += [i + 1 if forward else -(i + 1), i + 1]
        return packstream.path(nodes, rels, indices)
    if isinstance(value, Mapping):
        return {str(k): to_packstream(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_packstream(v) for v in value]
    return value


def _check_parameters(value: Any) -> None:
    if isinstance(value, packstream.Structure):
        raise MemgraphError(CLIENT_ERROR, "the double takes no structures as parameters")
    if isinstance(value, dict):
        for item in value.values():
            _check_parameters(item)
    elif isinstance(value, list):
        for item in value:
            _check_parameters(item)


class FalkorDBEngine:
    def __init__(self, url: str) -> None:
        # The gate's own client: it never sends a statement twice by itself, and says whether one reached FalkorDB.
        self._db = open_client(url, None)
        self._graphs: dict[str, Any] = {}
        # Unique constraints the gate asked for, per database: recorded, not enforced (see translate.py).
        self.constraints: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
        self.ddl: list[str] = []  # every index and constraint statement received, verbatim, in order
        self.text_indexes: dict[str, dict[str, str]] = {}  # per database: text index name -> its label
        self.vector_indexes: dict[str, dict[str, tuple[str, str]]] = {}  # per database: name -> label, property

    def _graph(self, name: str) -> Any:
        if name not in self._graphs:
            self._graphs[name] = self._db.select_graph(name)
        return self._graphs[name]

    async def execute(self, database: str | None, text: str, params: dict[str, Any], read_only: bool) -> Outcome:
        database = database or DEFAULT_DATABASE
        _check_parameters(params)
        match translate(text):
            case CreateIndex() as ddl:
                self.ddl.append(text)
                return await self._create_index(database, ddl)
            case CreateUnique(label, props):
                self.ddl.append(text)
                self.constraints.setdefault(database, set()).add((label, props))
                return Outcome(type="s")
            case CreateTextIndex() as ddl:
                self.ddl.append(text)
                return await self._create_text_index(database, ddl)
            case CreateVectorIndex() as ddl:
                self.ddl.append(text)
                return await self._create_vector_index(database, ddl)
            case ShowConstraints():
                rows = sorted(self.constraints.get(database, set()))
                return Outcome(
                    fields=["constraint type", "label", "properties"],
                    records=[["unique", label, list(props)] for label, props in rows],
                    type="r",
                )
        text = string_joins(text)
        if (searched := text_searches(text, self.text_indexes.get(database, {}))) is not None:
            text, names = searched
            params = {**params, **{name: redisearch_query(params[name]) for name in names}}
        vectors = self.vector_indexes.get(database, {})
        text = vector_values(vector_searches(memgraph_clock(text), vectors), vectors)
        graph = self._graph(database)
        record, token = sending()
        try:
            try:
                if not read_only:
                    await self._refuse_connected_node_deletes(graph, text, params)
                    record.reached = False  # the probes above are reads: only the write itself counts
                result = await (graph.ro_query if read_only else graph.query)(text, params)
            except redis.exceptions.ResponseError as exc:
                if not (read_only and _NO_GRAPH_YET in str(exc)):
                    raise
                # FalkorDB creates a graph on its first write, Memgraph's database is always there: create the
                # empty graph and read again, so a write in a read is still found out below.
                await graph.query("RETURN 0")
                result = await graph.ro_query(text, params)
        except redis.exceptions.ResponseError as exc:
            if read_only and _READ_ONLY_REFUSAL in str(exc):
                # Memgraph would run it and report type "w" in the summary; the double reports the same without
                # running it, so the client's type check refuses it and nothing changes (as Memgraph's rollback).
                return Outcome(type="w")
            raise MemgraphError(CLIENT_ERROR, str(exc)) from exc
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise EngineGone(str(exc), applied=not read_only and record.reached) from exc
        finally:
            done_sending(token)
        fields = [column[1] for column in getattr(result, "header", [])]
        stats = {name: int(getattr(result, attr)) for name, attr in _STATS.items() if getattr(result, attr)}
        if read_only:
            kind = "r"
        elif stats:
            kind = "rw" if fields else "w"
        else:
            kind = "r"  # no change reported: FalkorDB's counters cannot tell a write that changed nothing
        records = [[to_packstream(v) for v in row] for row in getattr(result, "result_set", [])]
        return Outcome(fields=fields, records=records, type=kind, stats=stats)

    async def _refuse_connected_node_deletes(self, graph: Any, text: str, params: dict[str, Any]) -> None:
        """Memgraph refuses a plain DELETE of a node that has relationships; FalkorDB would drop them (translate.py)."""
        for probe in node_delete_probes(text):
            try:
                result = await graph.ro_query(probe, params)
            except redis.exceptions.ResponseError:
                continue  # not a read-only prefix (or no graph yet): not checked, as the docstring says
            if any(row[0] for row in result.result_set):
                raise MemgraphError(CLIENT_ERROR, MEMGRAPH_CONNECTED_DELETE)

    async def _index_ddl(self, database: str, text: str, another_field: str | None = None) -> bool:
        """FalkorDB's DDL of an index; False where FalkorDB says the property is already indexed. `another_field`
        adds a field to a label's full-text index, where FalkorDB has one already (it has one per label)."""
        try:
            try:
                await self._graph(database).query(text)
            except redis.exceptions.ResponseError as exc:
                if another_field is None or _OTHER_FIELD not in str(exc):
                    raise
                await self._graph(database).query(another_field)
        except redis.exceptions.ResponseError as exc:
            if _ALREADY_INDEXED not in str(exc):
                raise MemgraphError(CLIENT_ERROR, str(exc)) from exc
            return False
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise EngineGone(str(exc)) from exc
        return True

    async def _create_index(self, database: str, ddl: CreateIndex) -> Outcome:
        if not await self._index_ddl(database, ddl.falkordb):
            # Memgraph: an index that exists is a notification, not an error.
            notice = f"Index on label {ddl.label} on properties {ddl.prop} already exists."
            notification = {"code": "IndexAlreadyExists", "title": notice, "severity": "INFO"}
            return Outcome(type="s", notifications=[notification])
        # Memgraph's CREATE INDEX answers once the index is built; FalkorDB's lists a label's index being rebuilt
        # as a second row meanwhile (seen in a fresh-clone run), so it is waited for.
        await self._until_built(database, ddl.label)
        return Outcome(type="s", stats={"indexes-added": 1})

    def _name_index(self, kind: str, indexes: dict[str, Any], name: str, what: Any) -> Outcome:
        """Memgraph refuses a second index of a name (an error, unlike a second plain index)."""
        if name in indexes:
            raise MemgraphError(CLIENT_ERROR, f"{kind} index {name} already exists.")
        indexes[name] = what
        return Outcome(type="s", stats={"indexes-added": 1})

    async def _create_text_index(self, database: str, ddl: CreateTextIndex) -> Outcome:
        # FalkorDB's index first, whatever the record says: a graph deleted by a test takes its indexes with it.
        await self._index_ddl(database, ddl.falkordb, ddl.falkordb_field)
        await self._until_built(database, ddl.label)
        return self._name_index("Text", self.text_indexes.setdefault(database, {}), ddl.name, ddl.label)

    async def _create_vector_index(self, database: str, ddl: CreateVectorIndex) -> Outcome:
        await self._index_ddl(database, ddl.falkordb)
        await self._until_built(database, ddl.label)
        indexes = self.vector_indexes.setdefault(database, {})
        return self._name_index("Vector", indexes, ddl.name, (ddl.label, ddl.prop))

    async def _until_built(self, database: str, label: str) -> None:
        """Until FalkorDB's indexes on the label answer completely: Memgraph builds an index within its CREATE, and
        FalkorDB in the background after it (a vector query meanwhile is refused: "Invalid arguments for procedure
        'db.idx.vector.queryNodes'", seen in CI; a full-text query answers part of the label)."""
        state = "CALL db.indexes() YIELD label, status WHERE label = $label RETURN collect(status) AS states"
        for _ in range(3000):  # 30 s
            rows = (await self._graph(database).ro_query(state, {"label": label})).result_set
            if all(status == "OPERATIONAL" for status in (rows[0][0] if rows else [])):
                return
            await anyio.sleep(0.01)
        raise MemgraphError(CLIENT_ERROR, f"FalkorDB's index on {label} was not built within 30 s")

    async def close(self) -> None:
        connection = self._db.connection
        await connection.aclose()
        await connection.connection_pool.disconnect()
