"""Embeddings (issue 38): vectors the gate computes at write time and keeps fresh, and search_nodes_ranked's
semantic and hybrid modes, through a real MCP client on the embedded engine with wordllama's shipped model.

The vectors are read back from the graph (`:_Embedding` nodes) to check what was stored; the answers are the
tools' own. The project's evaluation set and its recall targets live in their own test."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import ok, open_client, rejected, run_write_gate, settings_env
from tests.e2e.readme_blocks import block
from write_gate.core.cypher.statement import Statement
from write_gate.core.embedding import text_hash
from write_gate.engines import GraphBackend
from write_gate.services.reembedding import reembed
from write_gate.serving.assembly import open_gate
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

ENTITIES = [
    {"name": "Ada Vance", "entityType": "Person", "observations": ["aerospace engineer", "designs launch vehicles"]},
    {"name": "Ben Okafor", "entityType": "Person", "observations": ["bakes sourdough bread", "runs a bakery"]},
    {"name": "Cleo Park", "entityType": "Person", "observations": ["plays the cello in an orchestra"]},
]


def on(settings: Settings) -> Settings:
    return settings.model_copy(update={"embeddings": "local", "toolsets": "all"})


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await migrate(graph)
    async with open_client(on(settings), "in_process", "memory") as client:
        await ok(client, "create_entities", {"entities": ENTITIES})
        yield client


async def vectors(graph: GraphBackend, key_like: str | None = None) -> list[dict[str, Any]]:
    rows = await graph.read(
        Statement(
            "MATCH (v:_Embedding) RETURN v.label AS label, v.key AS key, v.field AS field, v.text_hash AS hash, "
            "v.provider AS provider, v.model AS model, v.dimension AS dimension, v.embedded_at AS at, "
            "id(v) AS id ORDER BY field, hash"
        )
    )
    return rows


async def ranked(client: Client, query: str, mode: str, **args: Any) -> dict[str, Any]:
    return await ok(client, "search_nodes_ranked", {"query": query, "mode": mode, **args})


def names(answer: dict[str, Any]) -> list[str]:
    return [hit["entity"]["name"] for hit in answer["results"]]


async def test_each_text_is_embedded_at_write_time_with_its_provenance(memory: Client, graph: GraphBackend) -> None:
    stored = await vectors(graph)
    ada = [v for v in stored if v["key"] == stored[0]["key"]]
    texts = {(v["field"], v["hash"]) for v in stored}
    assert ("name", text_hash("name", "Ada Vance")) in texts
    assert ("observations", text_hash("observations", "aerospace engineer")) in texts
    assert len(stored) == 3 + 5  # three names, five observations
    assert {(v["provider"], v["model"], v["dimension"]) for v in ada} == {("local", "wordllama-l2-supercat-256", 256)}
    assert all(v["at"] for v in stored)


async def test_semantic_finds_by_meaning_where_full_text_finds_nothing(memory: Client) -> None:
    assert names(await ranked(memory, "rockets", "fulltext")) == []
    answer = await ranked(memory, "who builds rockets and spacecraft?", "semantic")
    assert names(answer)[0] == "Ada Vance"
    first = answer["results"][0]
    assert first["score"] == first["scores"]["semantic"] and first["scores"]["fulltext"] is None
    scores = [hit["score"] for hit in answer["results"]]
    assert scores == sorted(scores, reverse=True) and -1 <= scores[-1] <= scores[0] <= 1


async def test_hybrid_fuses_both_rankings_and_shows_each_score(memory: Client) -> None:
    answer = await ranked(memory, "who plays music in an orchestra?", "hybrid")
    first = answer["results"][0]
    assert first["entity"]["name"] == "Cleo Park"
    assert first["scores"]["fulltext"] is not None and first["scores"]["semantic"] is not None
    assert first["score"] == first["scores"]["hybrid"] == round(2 / 61, 6)  # first in both rankings
    assert all(hit["scores"]["hybrid"] == hit["score"] for hit in answer["results"])


async def test_full_text_mode_answers_as_before(memory: Client) -> None:
    answer = await ranked(memory, "sourdough", "fulltext")
    assert names(answer) == ["Ben Okafor"]
    assert set(answer["results"][0]) == {"entity", "score", "matched_fields"}  # no `scores`: as without embeddings


async def test_an_unchanged_text_keeps_its_vector_and_a_changed_one_is_replaced(
    memory: Client, graph: GraphBackend
) -> None:
    before = {v["hash"]: v for v in await vectors(graph)}
    await ok(
        memory,
        "add_observations",
        {
            "observations": [
                {"entityName": "Ben Okafor", "contents": ["bakes sourdough bread", "flies rockets at weekends"]}
            ]
        },
    )
    await ok(
        memory, "delete_observations", {"deletions": [{"entityName": "Ben Okafor", "observations": ["runs a bakery"]}]}
    )
    after = {v["hash"]: v for v in await vectors(graph)}
    assert text_hash("observations", "runs a bakery") not in after
    assert text_hash("observations", "flies rockets at weekends") in after
    kept = text_hash("observations", "bakes sourdough bread")
    assert after[kept]["id"] == before[kept]["id"] and after[kept]["at"] == before[kept]["at"]  # not replaced
    assert len(after) == len(before)


async def test_deleting_an_entity_leaves_no_vector_behind(memory: Client, graph: GraphBackend) -> None:
    await ok(memory, "delete_entities", {"entityNames": ["Ada Vance", "Cleo Park"]})
    assert {v["field"] for v in await vectors(graph)} == {"name", "observations"}
    assert len(await vectors(graph)) == 3  # Ben's name and his two observations
    assert names(await ranked(memory, "who builds rockets?", "semantic")) == ["Ben Okafor"]


async def test_with_embeddings_off_semantic_and_hybrid_are_refused_and_nothing_is_stored(
    settings: Settings, graph: GraphBackend
) -> None:
    await migrate(graph)
    async with open_client(settings.model_copy(update={"toolsets": "all"}), "in_process", "memory") as client:
        await ok(client, "create_entities", {"entities": ENTITIES})
        for mode in ("semantic", "hybrid"):
            answer = await rejected(client, "search_nodes_ranked", {"query": "rockets", "mode": mode})
            assert answer["error_code"] == "INVALID_INPUT" and "WRITE_GATE_EMBEDDINGS" in answer["message"]
    assert await vectors(graph) == []


# --- the gate profile: the registry says which fields are embedded -----------------------------------------


@pytest.fixture
async def gate(settings: Settings, graph: GraphBackend, tmp_path: Path) -> AsyncIterator[Client]:
    entry = json.loads(block("semantic-entry").text)  # docs/tools/semantic-search.md's entry
    (tmp_path / "registry.json").write_text(json.dumps({"entries": [entry]}))
    await load_into_graph(graph, read_sources([tmp_path]))
    async with open_client(on(settings), "in_process") as client:
        yield client


def project(name: str, **properties: Any) -> dict[str, Any]:
    args = {"label": "Project", "merge_keys": {"name": name}, "properties": properties}
    return {**args, "source": "wiki", "extraction_method": "api"}


async def test_write_node_embeds_the_entry_s_fields_and_replaces_only_what_changed(
    gate: Client, graph: GraphBackend
) -> None:
    await ok(gate, "write_node", project("Apollo", summary="landing people on the moon", owner="NASA"))
    first = {v["field"]: v for v in await vectors(graph)}
    assert set(first) == {"name", "summary"}  # owner is not in the entry's embed list
    await ok(gate, "write_node", project("Apollo", owner="the agency"))  # no embedded field: vectors as they were
    assert {v["field"]: v for v in await vectors(graph)} == first
    await ok(gate, "write_node", project("Apollo", summary="a crewed lunar programme"))
    now = {v["field"]: v for v in await vectors(graph)}
    assert now["name"] == first["name"]  # the name was not written again: its vector stays
    assert now["summary"]["hash"] == text_hash("summary", "a crewed lunar programme")
    assert len(await vectors(graph)) == 2
    answer = await ranked(gate, "missions to the moon", "semantic")
    assert names(answer) == ["Apollo"]


async def test_a_batch_embeds_each_item_in_its_chunk_s_statement(gate: Client, graph: GraphBackend) -> None:
    items = [project(f"P{i}", summary=f"summary number {i}") for i in range(30)]
    answer = await ok(gate, "write_nodes", {"items": items})
    assert answer["written"] == 30
    stored = await vectors(graph)
    assert len(stored) == 60 and {v["field"] for v in stored} == {"name", "summary"}
    await ok(gate, "write_nodes", {"items": items})  # the same texts again: no vector replaced
    assert {v["id"] for v in await vectors(graph)} == {v["id"] for v in stored}


async def test_typed_tools_embed_what_they_write_and_their_delete_takes_the_vectors(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([bundled("schemas") / "examples" / "rpg"]))
    prov = {"source": "dm-notes", "extraction_method": "manual", "reliability": 0.8}
    async with open_client(on(settings), "in_process") as client:
        await ok(client, "add_location", {"location": {"name": "Rivendell"}, **prov})
        await ok(client, "add_npc", {"npc": {"name": "Gandalf", "role": "Wizard", "status": "Active"}, **prov})
        assert {(v["label"], v["field"]) for v in await vectors(graph)} == {("Location", "name"), ("Npc", "name")}
        assert names(await ranked(client, "Gandalf", "semantic", labels=["Npc"])) == ["Gandalf"]
        await ok(client, "delete_npc", {"npc": {"name": "Gandalf"}})
    assert [(v["label"], v["field"]) for v in await vectors(graph)] == [("Location", "name")]


async def test_a_merged_entity_leaves_no_vector_behind(gate: Client, graph: GraphBackend) -> None:
    await ok(gate, "write_node", project("Apollo", summary="landing people on the moon"))
    await ok(gate, "write_node", project("Apollo programme", summary="a crewed lunar programme"))
    survivor, merged = ({"label": "Project", "merge_keys": {"name": n}} for n in ("Apollo", "Apollo programme"))
    await ok(gate, "merge_entities", {"survivor": survivor, "merged": [merged]})
    assert {v["hash"] for v in await vectors(graph)} == {
        text_hash("name", "Apollo"),
        text_hash("summary", "landing people on the moon"),
    }
    assert names(await ranked(gate, "a crewed lunar programme", "semantic")) == ["Apollo"]


async def test_a_value_the_conflict_policy_keeps_keeps_its_vector(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    entry = {**json.loads(block("semantic-entry").text), "conflict_policy": "higher_confidence_wins"}
    (tmp_path / "registry.json").write_text(json.dumps({"entries": [entry]}))
    await load_into_graph(graph, read_sources([tmp_path]))
    async with open_client(on(settings), "in_process") as client:
        await ok(client, "write_node", {**project("Apollo", summary="landing people on the moon"), "reliability": 0.9})
        weaker = {**project("Apollo", summary="baking sourdough bread"), "source": "rumour", "reliability": 0.1}
        answer = await ok(client, "write_node", weaker)
        assert answer["conflicts"]  # met the stronger claim, which stays
    summary = [v["hash"] for v in await vectors(graph) if v["field"] == "summary"]
    assert summary == [text_hash("summary", "landing people on the moon")]


# --- a model change: re-embedded by a command, resumably ----------------------------------------------------


async def models(graph: GraphBackend) -> dict[str, int]:
    rows = await graph.read(Statement("MATCH (v:_Embedding) RETURN v.model AS model, count(v) AS n"))
    return {row["model"]: row["n"] for row in rows}


async def test_reembed_replaces_another_model_s_vectors_and_a_second_run_has_nothing_to_do(
    settings: Settings, memory: Client, graph: GraphBackend
) -> None:
    # As if the vectors were made by another model before WRITE_GATE_EMBEDDINGS changed.
    await graph.write(
        Statement("MATCH (v:_Embedding) WHERE v.key CONTAINS 'Ada' OR v.key CONTAINS 'Ben' SET v.model = 'old'")
    )
    assert await models(graph) == {"old": 6, "wordllama-l2-supercat-256": 2}
    seen: list[tuple[str, int, int]] = []
    async with open_gate(on(settings)) as gate:  # in process: its statements count for this tier
        first = await reembed(gate, 1, lambda label, done, total: seen.append((label, done, total)))
    assert (first.entities, first.current) == (2, 1)
    assert [s for s in seen if s[0] == "Person"] == [("Person", 1, 3), ("Person", 2, 3), ("Person", 3, 3)]
    assert await models(graph) == {"wordllama-l2-supercat-256": 8}
    assert names(await ranked(memory, "who builds rockets?", "semantic"))[0] == "Ada Vance"
    await graph.write(Statement("MATCH (v:_Embedding) WHERE v.key CONTAINS 'Cleo' SET v.model = 'old'"))
    env = {**settings_env(settings), "WRITE_GATE_EMBEDDINGS": "local"}
    command = run_write_gate("embeddings", "reembed", env=env)
    assert command.returncode == 0, command.stderr
    assert "re-embedded 1 entities" in command.stdout and "2 were already embedded by it" in command.stdout
    assert "Person: 3/3" in command.stderr  # progress, label by label
    async with open_gate(on(settings)) as gate:
        again = await reembed(gate)
    assert (again.entities, again.current) == (0, 3)


async def test_reembed_needs_embeddings_on(settings: Settings) -> None:
    done = run_write_gate("embeddings", "reembed", env=settings_env(settings))
    assert done.returncode == 2 and "WRITE_GATE_EMBEDDINGS" in done.stderr


async def test_a_query_with_no_word_is_refused_in_every_mode(memory: Client) -> None:
    for mode in ("semantic", "hybrid", "fulltext"):
        answer = await rejected(memory, "search_nodes_ranked", {"query": " ?! ", "mode": mode})
        assert answer["error_code"] == "INVALID_INPUT" and answer["details"]["field"] == "query"


async def test_an_entity_create_entities_skips_keeps_its_own_vectors(memory: Client, graph: GraphBackend) -> None:
    before = await vectors(graph)
    again = {"name": "Ada Vance", "entityType": "Person", "observations": ["bakes bread"]}
    answer = await ok(memory, "create_entities", {"entities": [again]})
    assert answer.get("entities", []) == [] or all(e["name"] != "Ada Vance" for e in answer["entities"])
    assert await vectors(graph) == before  # the look-up found the name: nothing embedded, nothing replaced
