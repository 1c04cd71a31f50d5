"""The gate's embeddings (issue 38): texts embedded before a write and their vectors sent in its statement,
the vector index made once, and the nearest texts of a query. Only built when WRITE_GATE_EMBEDDINGS is on."""

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from write_gate.core.clock import utc_now
from write_gate.core.cypher import embeddings as cypher
from write_gate.core.cypher.memory_writes import NAME_ABSENT
from write_gate.core.cypher.statement import Statement
from write_gate.core.embedding import (
    EmbeddingFailed,
    EmbeddingProvider,
    Text,
    embed_fields,
    normalized,
    text_hash,
    texts_of,
)
from write_gate.core.identity import KEY_FIELD
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.registry import SchemaRegistry
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend, Row
from write_gate.engines.errors import engine_failure

logger = logging.getLogger(__name__)

# Vectors kept by text hash: a text written again (an unchanged name, an observation re-stated) is not embedded
# again. 20,000 vectors of 256 floats are about 40 MB of Python lists at most.
CACHE_SIZE = 20_000
# How long a semantic search waits for a vector index the engine is still building (after its creation or a
# restart) before it answers that the index is being built, and how often it looks.
INDEX_WAIT_SECONDS = 5.0
INDEX_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Subject:
    """An entity a write embeds: its label, key (None: the statement's own `n._key`), and the values it writes."""

    label: str
    key: str | None
    values: Mapping[str, Any]


class Embeddings:
    def __init__(self, provider: EmbeddingProvider, backend: GraphBackend) -> None:
        self.provider = provider
        self._backend = backend
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._indexed = False

    def fields_of(self, registry: SchemaRegistry, label: str) -> tuple[str, ...]:
        entry = registry.get_entry(label)
        return embed_fields(entry.embed if entry is not None else None)

    async def vectors(self, texts: Sequence[str], hashes: Sequence[str] | None = None) -> list[list[float]]:
        """One provider call for the texts not cached (by hash, where given). A provider that fails refuses the
        call: a write is never made without its vectors."""
        keys = list(hashes) if hashes is not None else None
        missing = [i for i in range(len(texts)) if keys is None or keys[i] not in self._cache]
        found: dict[int, list[float]] = {}
        if missing:
            asked = [texts[i] for i in missing]
            try:
                # A loaded static model takes microseconds, not worth a thread; its loading (seconds) and a network
                # call are made off the event loop.
                if getattr(self.provider, "loaded", False):
                    made = self.provider.embed(asked)
                else:
                    made = await anyio.to_thread.run_sync(self.provider.embed, asked)
            except EmbeddingFailed as exc:
                logger.warning("embedding provider failed: %s", exc)
                raise GateRejection(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    f"the embedding provider ({self.provider.name}) failed, nothing was written: {exc}",
                    reason="embeddings",
                ) from exc
            for i, vector in zip(missing, made, strict=True):
                found[i] = vector if self.provider.normalizes else normalized(vector)
                if keys is not None:
                    self._cache[keys[i]] = found[i]
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        out = []
        for i in range(len(texts)):
            if i in found:
                out.append(found[i])
            else:
                assert keys is not None
                self._cache.move_to_end(keys[i])
                out.append(self._cache[keys[i]])
        return out

    async def entries(
        self, registry: SchemaRegistry, subjects: Sequence[Subject], *, adding: bool = False
    ) -> list[dict[str, Any]]:
        """`replace_vectors`' `$embeddings` for what each subject writes, its texts embedded in one call. `adding`:
        the texts are added to those there (appended observations), none replaced."""
        planned: list[tuple[Subject, list[str], list[Text]]] = []
        for subject in subjects:
            fields, texts = texts_of(self.fields_of(registry, subject.label), subject.values)
            planned.append((subject, [] if adding else fields, texts))
        every = [t for _s, _f, texts in planned for t in texts]
        vectors = iter(await self.vectors([t.text for t in every], [t.hash for t in every]))
        return [
            {
                "label": subject.label,
                "key": subject.key,
                "fields": fields,
                "texts": [{"field": t.field, "hash": t.hash, "vector": next(vectors)} for t in texts],
            }
            for subject, fields, texts in planned
            if fields or texts
        ]

    def embedder(self) -> dict[str, Any]:
        p = self.provider
        return {"provider": p.name, "model": p.model, "dimension": p.dimension, "at": utc_now()}

    async def ensure_index(self) -> None:
        """The vector index, once per gate (refused as existing when another gate made it)."""
        if self._indexed:
            return
        if not self.provider.dimension:  # learnt from the provider's first answer
            await self.vectors(["dimension"])
        for statement in cypher.vector_indexes(self._backend.dialect, self.provider.dimension):
            try:
                await self._backend.write(statement)
            except BackendError as exc:
                if "already" not in str(exc).lower():
                    raise engine_failure(exc, "write") from exc
            except BackendUnavailable as exc:
                raise engine_failure(exc, "write") from exc
        self._indexed = True

    async def nearest(self, k: int, vector: list[float]) -> list[Row]:
        """The `k` texts nearest `vector` (`cypher.nearest_texts`' rows), the index made first if this gate has
        not. While the engine builds the vector index it refuses the query: the search waits for it, then answers
        BACKEND_UNAVAILABLE (reason "index_building", with the engine's progress) rather than an engine failure."""
        await self.ensure_index()
        dialect = self._backend.dialect
        statement = Statement(cypher.nearest_texts(dialect).text, {"k": k, "vector": vector})
        deadline = anyio.current_time() + INDEX_WAIT_SECONDS
        waited = False  # a build was seen: a refusal met as it ended is asked once more
        while True:
            try:
                return await self._backend.read(statement)
            except BackendError as exc:
                progress = await self._index_building()
                if progress is None:
                    if not waited:
                        raise engine_failure(exc, "read") from exc
                    # The build ended between the refusal and the look at the index (seen in CI).
                    waited = False
                    continue
                waited = True
                logger.info("a semantic search waits for the vector index: %s", progress)
            except BackendUnavailable as exc:
                raise engine_failure(exc, "read") from exc
            if anyio.current_time() >= deadline:
                raise GateRejection(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    f"the graph engine is still building its vector index ({progress}); semantic and hybrid "
                    "search answer once it is done: retry shortly, or search with mode 'fulltext'",
                    reason="index_building",
                    progress=progress,
                )
            await anyio.sleep(INDEX_POLL_SECONDS)

    async def _index_building(self) -> str | None:
        state = cypher.vector_index_state(self._backend.dialect)
        if state is None:
            return None
        try:
            return cypher.vector_index_building(await self._backend.read(state))
        except (BackendError, BackendUnavailable) as exc:
            raise engine_failure(exc, "read") from exc

    async def params(
        self, registry: SchemaRegistry, subjects: Sequence[Subject], *, adding: bool = False
    ) -> dict[str, Any]:
        """`replace_vectors`' parameters for what `subjects` write (the index made first, once)."""
        await self.ensure_index()
        return {"embeddings": await self.entries(registry, subjects, adding=adding), "embedder": self.embedder()}

    async def lead(self, statement: Statement, registry: SchemaRegistry, subjects: Sequence[Subject]) -> Statement:
        """`statement` with the vectors of what it writes replaced first, in the same statement."""
        params = await self.params(registry, subjects)
        text = "\n".join([*cypher.replace_vectors(self._backend.dialect), statement.text])
        return Statement(text, {**statement.params, **params})

    async def after_lookup(self, statement: Statement, registry: SchemaRegistry, subject: Subject) -> Statement:
        """A memory create (`create_node_if_name_absent`): the vectors replaced after its look-up found the name
        nowhere, so an entity that exists keeps its own."""
        params = await self.params(registry, [subject])
        lines = cypher.replace_vectors(self._backend.dialect, ("existing",))
        text = statement.text.replace(NAME_ABSENT, NAME_ABSENT + "\n" + "\n".join(lines), 1)
        return Statement(text, {**statement.params, **params})

    async def on_found_node(
        self, statement: Statement, registry: SchemaRegistry, subject: Subject, dropped: Sequence[str] = ()
    ) -> Statement:
        """A statement on a node it matches first (`n`, memory_writes' observations): texts added to its vectors
        (`subject.values`), and those of `dropped` observations deleted, after its first line."""
        fields = self.fields_of(registry, subject.label)
        params = await self.params(registry, [subject] if not dropped else [], adding=True)
        if dropped and "observations" in fields:
            drop = [text_hash("observations", text) for text in dropped]
            params["embeddings"] = [{"label": subject.label, "key": None, "fields": [], "texts": [], "drop": drop}]
        first, _, rest = statement.text.partition("\n")
        lines = cypher.replace_vectors(self._backend.dialect, ("n",), key=f"n.{KEY_FIELD}")
        return Statement("\n".join([first, *lines, rest]), {**statement.params, **params})
