"""`write-gate embeddings reembed`: after a model change, every entity's texts embedded again by the configured
model, label by label in chunks (one provider call and one statement a chunk), with progress. Resumable: an
entity whose vectors are all this model's is skipped, so a run stopped halfway goes on where it stopped. Reads keep
answering throughout (an entity not yet reached is found by its old vectors)."""

from collections.abc import Callable
from dataclasses import dataclass

from write_gate.core.cypher import embeddings as cypher
from write_gate.core.cypher.reads import label_count
from write_gate.core.cypher.statement import Statement
from write_gate.core.embedding import texts_of
from write_gate.services.embeddings import Subject
from write_gate.services.gate import Gate, run_write

DEFAULT_CHUNK = 500


@dataclass
class Reembedded:
    entities: int = 0  # embedded again (or for the first time)
    current: int = 0  # already this model's: skipped


Progress = Callable[[str, int, int], None]  # label, entities of it seen, entities it has


def _stale(models: list[str], model: str) -> bool:
    return not models or any(m != model for m in models)


async def reembed(gate: Gate, chunk: int = DEFAULT_CHUNK, progress: Progress | None = None) -> Reembedded:
    embeddings = gate.embeddings
    assert embeddings is not None, "the command checks WRITE_GATE_EMBEDDINGS first"
    await embeddings.ensure_index()
    model, done = embeddings.provider.model, Reembedded()
    for label in gate.registry.all_canonical_labels():
        [total] = await gate.reader.read(label_count(label))
        fields, after, seen = embeddings.fields_of(gate.registry, label), "", 0
        page = cypher.embedded_page(label)
        while rows := await gate.reader.read(Statement(page.text, {"after": after, "limit": chunk})):
            after, seen = rows[-1]["key"], seen + len(rows)
            subjects = []
            for row in rows:
                values = {f: row["props"][f] for f in fields if f in row["props"]}
                if not texts_of(fields, values)[1]:
                    continue  # nothing to embed
                if not _stale(row["models"], model):
                    done.current += 1
                    continue
                subjects.append(Subject(label, row["key"], values))
            if subjects:
                params = await embeddings.params(gate.registry, subjects)
                await run_write(gate.backend, Statement(cypher.vectors_alone(gate.backend.dialect).text, params))
                done.entities += len(subjects)
            if progress is not None:
                progress(label, seen, total["count"])
    return done
