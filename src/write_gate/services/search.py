"""`search_nodes_ranked`: ranked, typo-tolerant, boolean search over every registered label, on the engines'
full-text indexes where they can narrow the query, by a scan where they cannot.

The query's meaning is the judge's (`core.search_query`), the same on every engine; the index only proposes
candidates (a scan, where it cannot: each answer says which, `searched_by`). The gate scores the matches itself,
by seed 004's TF-IDF over the candidates, so a ranking does not change with the engine (FalkorDB's scorer counts
a word once per document; Memgraph's is Tantivy's BM25). Pages are offsets into the ranking, so a write between
two pages can move an entity across them, as in any search engine.
"""

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from write_gate.core.cypher import embeddings as vectors
from write_gate.core.cypher import text_search as cypher
from write_gate.core.cypher.aliases import ALIAS_FOLD
from write_gate.core.cypher.statement import Statement
from write_gate.core.embedding import fused, has_word, question_query
from write_gate.core.identity import FOLD_PREFIX, LABEL_FOLD_FIELD, SEARCH_FIELD
from write_gate.core.knowledge import EntityFilter
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.search_query import (
    MAX_TERMS,
    And,
    Document,
    Node,
    QueryError,
    Syntax,
    Term,
    Words,
    document,
    leaves,
    matched_fields,
    parse,
    recall,
    search_text_document,
)
from write_gate.core.search_ranking import judge_and_score
from write_gate.engines import GraphBackend, Row
from write_gate.services.embeddings import Embeddings
from write_gate.services.reads import (
    Cursor,
    Entity,
    ImportanceBound,
    IncludeArchived,
    Labels,
    Reader,
    ReadRequest,
    Relation,
    ShowProvenance,
    TagsFilter,
    Text,
    claims_asked,
    decode_cursor,
    encode_cursor,
    read_text_search,
)

DEFAULT_RANKED_LIMIT = 20
MAX_RANKED_LIMIT = 200
# Candidates taken from the index per label, best first by its own score: a query matching more is ranked among
# these (an answer for a word in every node is not made better by reading them all).
MAX_CANDIDATES = 1000
# They are read in two blocks, each ranked by the gate, the first before the second: the first page of a query
# that matches much costs the first block, not a thousand rows (at 1,000,000 nodes a phrase in 0.1% of them took
# 37 ms, most of it reading and judging 1,000 candidates), and every page of one query reads the same blocks.
FIRST_BLOCK = 100

QUERY_HELP = (
    'Words (any may match; more rank higher); AND, OR, NOT or -word, (groups), "phrases", prefix*, typo~ or '
    "typo~2 (edits), field:word (name, type, observations or a property)."
)


SearchMode = Literal["fulltext", "semantic", "hybrid"]
# A hybrid search's full-text candidates per label (any of the question's words: common ones match much), best first
# by the index's score: fusion reads ranks, and ranks past these add almost nothing (1 / (60 + rank)).
HYBRID_CANDIDATES = 200
# Texts taken from the vector index: the page's entities are among the nearest, with room for filters to drop some.
MIN_NEAREST = 100


class RankedSearchRequest(ReadRequest):
    query: Annotated[Text, Field(description=QUERY_HELP)]
    mode: Annotated[SearchMode, Field(description="semantic and hybrid: by meaning, where embeddings are on.")] = (
        "fulltext"
    )
    labels: Labels = None
    fuzzy: Annotated[bool, Field(description="Tolerate typos in every word (1 edit from 3 letters, 2 from 6).")] = False
    limit: Annotated[int, Field(ge=1, le=MAX_RANKED_LIMIT, description="Page size.")] = DEFAULT_RANKED_LIMIT
    cursor: Cursor = None
    provenance: ShowProvenance = None
    tags: TagsFilter = None
    minImportance: ImportanceBound = None  # noqa: N815
    maxImportance: ImportanceBound = None  # noqa: N815
    includeArchived: IncludeArchived = False  # noqa: N815

    def entity_filter(self) -> EntityFilter:
        tags = tuple(self.tags) if self.tags is not None else None
        return EntityFilter(tags, self.minImportance, self.maxImportance)


class Scores(BaseModel):
    """Each ranking's score: TF-IDF; cosine similarity (of the closest text); reciprocal rank fusion (k=60)."""

    fulltext: float | None = None
    semantic: float | None = None
    hybrid: float | None = None


class RankedHit(BaseModel):
    entity: Entity
    score: float
    # A full-text answer is as it was before the other modes (no `scores`).
    scores: Scores | None = Field(default=None, exclude_if=lambda value: value is None)
    matched_fields: list[str]


class RankedResult(BaseModel):
    results: list[RankedHit] = Field(description="Best first.")
    relations: list[Relation]
    next_cursor: str | None = Field(default=None, description="Pass back as cursor for the next page.")
    truncated: list[str] = Field(default_factory=list)
    searched_by: Literal["index", "scan"]


# --- pure helpers --------------------------------------------------------------------------------------

# The gate's own folded fields, as an answer names them: the label (and the type as written), and the names
# of nodes merged into this one.
_FIELD_NAMES = {LABEL_FOLD_FIELD[len(FOLD_PREFIX) :]: "type", ALIAS_FOLD[len(FOLD_PREFIX) :]: "aliases"}


def folded_fields(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """A node's folded text by field (`_f_name` -> `name`), what the judge reads."""
    return {key[len(FOLD_PREFIX) :]: value for key, value in props.items() if key.startswith(FOLD_PREFIX)}


def required_words(tree: Node) -> list[str]:
    """Words every match contains as they are (those of the whole query, or of an AND's terms, but typos): a
    scan reads only nodes whose search text contains each."""
    terms = tree.children if isinstance(tree, And) else (tree,)
    return [word for t in terms if isinstance(t, Term) and not t.edits for word in t.words]


@dataclass(frozen=True)
class Hit:
    score: float
    key: str
    id: int


def shown_fields(tree: Node, stored: Mapping[str, Any]) -> list[str]:
    """The fields a hit matched in, named as agents write them (`type` for the label)."""
    fields = matched_fields(tree, document(folded_fields(stored)))
    return sorted(_FIELD_NAMES.get(f, f) for f in fields)


def _fingerprint(request: RankedSearchRequest, words: Words, starts: bool = False) -> str:
    """Ties a cursor to the search that made it: a page of one query is no place to continue another (nor of
    the same query read with its words all required, or as prefixes)."""
    filters = (request.entity_filter(), request.includeArchived)
    what = repr((request.query, sorted(request.labels or []), request.fuzzy, filters, words))
    what += " starts" if starts else ""  # a cursor of the other searches reads as before
    what += "" if request.mode == "fulltext" else f" {request.mode}"  # a full-text cursor reads as before
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def _syntax(dialect_name: str) -> Syntax:
    return "tantivy" if dialect_name == "memgraph" else "redisearch"


def in_search_text(engine_query: str, syntax: Syntax) -> str:
    """The query, on the search text alone: FalkorDB's index of a label holds its trigrams (`core.grams`) as a
    second field, which a word could otherwise find (Memgraph's trigrams have an index of their own)."""
    return f"@{SEARCH_FIELD}:({engine_query})" if syntax == "redisearch" else engine_query


@dataclass(frozen=True)
class TextRanking:
    hits: list[Hit]
    searched_by: Literal["index", "scan"]
    more: bool  # the index may hold candidates past those read


def judged_document(row: Row) -> Document:
    """What the judge reads of a candidate: its folded values by field where the read brought its properties,
    else its search text's values under one field (enough for a query that names no field)."""
    if "props" in row:
        return document(folded_fields(row["props"]))
    return search_text_document(row["text"] or "")


def any_word(text: str, fuzzy: bool) -> Node | None:
    """The full-text half of a hybrid search: any of the plain text's content words (a question is not a query:
    "who works on rockets?" must not need every word, nor rank what holds "who"); None when it has none."""
    query = question_query(text, MAX_TERMS)
    try:
        return parse(query, fuzzy=fuzzy) if query is not None else None
    except QueryError:
        return None


def names_fields(tree: Node) -> bool:
    return any(term.field is not None for term, _positive in leaves(tree))


class Searcher:
    def __init__(self, backend: GraphBackend, reader: Reader, embeddings: Embeddings | None = None) -> None:
        self._backend = backend
        self._reader = reader
        self._embeddings = embeddings

    async def _read(self, statement: Statement) -> list[Row] | None:
        return await read_text_search(self._backend, statement)

    async def _indexed(
        self,
        labels: list[str],
        engine_query: str,
        filter_params: dict[str, Any] | None,
        fields: bool,
        knowledge_params: dict[str, Any] | None,
        include_archived: bool,
        window: int,
        skip: int,
    ) -> list[Row] | None:
        """The index's candidates, best first by its score, `window` per label after its best `skip`; None when
        an index cannot answer completely (missing, still being built, or no text search at all)."""
        filtered, knowledge = filter_params is not None, knowledge_params is not None
        statement = cypher.indexed_candidates(
            self._backend.dialect,
            labels,
            filtered=filtered,
            fields=fields,
            knowledge=knowledge,
            include_archived=include_archived,
        )
        params = {
            "query": engine_query,
            "skip": skip,
            "window": window,
            "guarded": labels,
            **(filter_params or {}),
            **(knowledge_params or {}),
        }
        rows = await self._read(Statement(statement.text, params))
        # The candidates are kept only where every index answered completely (the statement says: a null id).
        return None if rows is None or any(row["id"] is None for row in rows) else rows

    async def _scanned(
        self,
        labels: list[str],
        tree: Node,
        filter_params: dict[str, Any] | None,
        fields: bool,
        knowledge_params: dict[str, Any] | None = None,
        include_archived: bool = False,
    ) -> list[Row]:
        statement = cypher.scanned_candidates(
            labels,
            filtered=filter_params is not None,
            fields=fields,
            knowledge=knowledge_params is not None,
            include_archived=include_archived,
        )
        params = {"required": required_words(tree), **(filter_params or {}), **(knowledge_params or {})}
        return await self._reader.read(Statement(statement.text, params))

    @staticmethod
    def _ranked(rows: Sequence[Row], tree: Node) -> list[Hit]:
        """The candidates the judge keeps, once per node, scored by TF-IDF over all the candidates, best first."""
        docs = {row["id"]: judged_document(row) for row in rows}
        keys = {row["id"]: row["key"] or "" for row in rows}
        judged = judge_and_score(tree, list(docs.values()))
        hits = [Hit(round(j.score, 6), keys[i], i) for i, j in zip(docs, judged, strict=True) if j.matches]
        return sorted(hits, key=lambda h: (-h.score, h.key, h.id))

    async def _fulltext(
        self,
        tree: Node,
        labels: list[str],
        filter_params: dict[str, Any] | None,
        knowledge_params: dict[str, Any] | None,
        include_archived: bool,
        window: int,
        skip: int = 0,
    ) -> TextRanking:
        """The full-text ranking: the index's candidates (`window` per label after `skip`; a scan where it cannot
        answer), judged and scored."""
        fields = names_fields(tree)
        rows = None
        syntax = _syntax(self._backend.dialect.name)
        engine_query = recall(tree, syntax)
        if labels and engine_query is not None:
            rows = await self._indexed(
                labels,
                in_search_text(engine_query, syntax),
                filter_params,
                fields,
                knowledge_params,
                include_archived,
                window,
                skip,
            )
        if rows is not None:
            # A label may hold more candidates where as many rows came as one label's window (with several
            # labels, maybe fewer: a further block is then read for nothing, never missed).
            return TextRanking(self._ranked(rows, tree), "index", more=len(rows) >= window)
        rows = (
            await self._scanned(labels, tree, filter_params, fields, knowledge_params, include_archived)
            if labels
            else []
        )
        return TextRanking(self._ranked(rows, tree), "scan", more=False)

    async def _fulltext_blocks(
        self,
        tree: Node,
        wanted: int,
        labels: list[str],
        filter_params: dict[str, Any] | None,
        knowledge_params: dict[str, Any] | None,
        include_archived: bool,
    ) -> TextRanking:
        """The full-text ranking in `FIRST_BLOCK` candidates per label, then the rest to `MAX_CANDIDATES`, read
        only when the first block's matches do not reach past `wanted` (the page's end): the second block's
        matches come after the first's, so every page of a query reads one ranking."""
        filters = (labels, filter_params, knowledge_params, include_archived)
        first = await self._fulltext(tree, *filters, FIRST_BLOCK)
        if not first.more or len(first.hits) > wanted:
            return first
        rest = await self._fulltext(tree, *filters, MAX_CANDIDATES - FIRST_BLOCK, FIRST_BLOCK)
        seen = {hit.id for hit in first.hits}  # the graph may change between the two reads
        return TextRanking([*first.hits, *(h for h in rest.hits if h.id not in seen)], first.searched_by, rest.more)

    async def _semantic(
        self,
        embeddings: Embeddings,
        query: str,
        window: int,
        labels: list[str],
        filter_params: dict[str, Any] | None,
        knowledge_params: dict[str, Any] | None,
        include_archived: bool,
    ) -> list[Hit]:
        """The semantic ranking: the texts nearest the query (vector index k-NN), then their entities that pass
        the filters, each scored by its closest text's cosine similarity, best first."""
        if not labels:
            return []
        [vector] = await embeddings.vectors([query])
        k = min(MAX_CANDIDATES, max(MIN_NEAREST, window * 5))
        nearest = await embeddings.nearest(k, vector)
        present = {row["label"] for row in nearest}
        labels = [label for label in labels if label in present]  # a branch per label the texts name, no more
        if not labels:
            return []
        statement = vectors.entities_of_texts(
            labels,
            filtered=filter_params is not None,
            knowledge=knowledge_params is not None,
            include_archived=include_archived,
        )
        params = {"hits": nearest, **(filter_params or {}), **(knowledge_params or {})}
        best: dict[int, Hit] = {}
        for row in await self._reader.read(Statement(statement.text, params)):
            score = round(float(row["similarity"]), 6)
            if row["id"] not in best or best[row["id"]].score < score:
                best[row["id"]] = Hit(score, row["key"] or "", row["id"])
        return sorted(best.values(), key=lambda h: (-h.score, h.key, h.id))

    async def search(
        self,
        request: RankedSearchRequest,
        *,
        words: Words = "any",
        starts: bool = False,
        parent_type: str | None = None,
    ) -> RankedResult:
        """A page of the ranking. `words`: what a query's words side by side mean, any of them (seed 004's ranked
        search, whose TF-IDF scores every entity holding a word) or all (its boolean search); `starts`: every plain
        word is a prefix (its boolean search, where a field contains the value); `parent_type`: the hierarchy's, each
        entity with its parent's name (memory-mcp's `parentId`, the memory profile's)."""
        embeddings = self._embeddings
        if request.mode != "fulltext" and embeddings is None:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"mode '{request.mode}' needs embeddings, which are off on this gate: set WRITE_GATE_EMBEDDINGS "
                "to local or openai (docs/tools/semantic-search.md), or search with mode 'fulltext'",
                field="mode",
            )
        tree: Node | None
        if request.mode == "fulltext":
            try:
                tree = parse(request.query, fuzzy=request.fuzzy, words=words, starts=starts)
            except QueryError as exc:
                raise GateRejection(ErrorCode.INVALID_INPUT, f"query: {exc}", field="query") from exc
        elif not has_word(request.query):
            raise GateRejection(ErrorCode.INVALID_INPUT, "query: the query has no word to search for", field="query")
        else:
            tree = any_word(request.query, request.fuzzy)
        fingerprint = _fingerprint(request, words, starts)
        position = decode_cursor(request.cursor, "ranked", o=int, h=str)
        if position is not None and position["h"] != fingerprint:
            raise GateRejection(ErrorCode.INVALID_INPUT, "cursor belongs to another search", field="cursor")
        offset = position["o"] if position is not None else 0
        claims, show = claims_asked(request.provenance)
        filter_params = claims.params() if claims is not None and claims.active else None
        knowledge = request.entity_filter()
        knowledge_params = knowledge.params() if knowledge.active else None
        labels = self._reader.labels_to_read(request.labels)
        filters = (labels, filter_params, knowledge_params, request.includeArchived)
        searched_by: Literal["index", "scan"] = "index"
        text_hits: list[Hit] = []
        if tree is not None and request.mode != "semantic":
            text = (
                await self._fulltext_blocks(tree, offset + request.limit, *filters)
                if request.mode == "fulltext"
                else await self._fulltext(tree, *filters, HYBRID_CANDIDATES)
            )
            text_hits, searched_by = text.hits, text.searched_by
        meaning_hits: list[Hit] = []
        if embeddings is not None and request.mode != "fulltext":
            meaning_hits = await self._semantic(embeddings, request.query, offset + request.limit, *filters)
        found, scores = _combined(request.mode, text_hits, meaning_hits)
        page = found[offset : offset + request.limit]
        more = len(found) > offset + request.limit
        expanded = await self._reader.expand(
            [hit.id for hit in page],
            100,
            outgoing_only=False,
            show_claims=show,
            include_archived=request.includeArchived,
            parent_type=parent_type,
        )
        score = {hit.id: hit.score for hit in page}
        results = [
            RankedHit(
                entity=entity,
                score=score[node_id],
                scores=scores.get(node_id),
                matched_fields=shown_fields(tree, expanded.stored[node_id]) if tree is not None else [],
            )
            for node_id, entity in zip(expanded.ids, expanded.result.entities, strict=True)
        ]
        next_cursor = encode_cursor("ranked", o=offset + request.limit, h=fingerprint) if more else None
        return RankedResult(
            results=results,
            relations=expanded.result.relations,
            next_cursor=next_cursor,
            truncated=expanded.result.truncated,
            searched_by=searched_by,
        )


def _combined(mode: str, text_hits: list[Hit], meaning_hits: list[Hit]) -> tuple[list[Hit], dict[int, Scores]]:
    """The mode's ranking, best first, and each hit's scores (none in full-text mode, which answers as it did);
    hybrid fuses the two rankings by reciprocal rank."""
    text = {h.id: h.score for h in text_hits}
    meaning = {h.id: h.score for h in meaning_hits}
    if mode == "fulltext":
        return text_hits, {}
    if mode == "semantic":
        return meaning_hits, {h.id: Scores(semantic=h.score) for h in meaning_hits}
    fusion = fused([[h.id for h in text_hits], [h.id for h in meaning_hits]])
    keys = {h.id: h.key for h in (*text_hits, *meaning_hits)}
    hits = sorted(
        (Hit(round(value, 6), keys[i], i) for i, value in fusion.items()), key=lambda h: (-h.score, h.key, h.id)
    )
    return hits, {h.id: Scores(fulltext=text.get(h.id), semantic=meaning.get(h.id), hybrid=h.score) for h in hits}
