"""export_graph through a real MCP client on every engine tier: identity kept in every format (a Person "Mercury"
and a Project "Mercury" are two nodes), the filters evaluated by the engine, archived entities left out unless asked
for, progress while paging, the admin group; every output read back by a parser (networkx for graphml and gexf,
pydot for DOT, csv and json for theirs)."""

import csv
import io
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import networkx as nx
import pydot
import pytest
from mcp import Client

from tests.conftest import TESTS, CommandRun, ok, open_client, rejected, run_write_gate, settings_env
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

EXPORT_SCHEMAS = TESTS / "schemas" / "exports"
PERSON = 'Person:{"name":"Mercury"}'
PROJECT = 'Project:{"name":"Mercury"}'
ADA = 'Person:{"name":"Ada"}'
PARIS = 'City:{"country":"FR","name":"Paris"}'


def node(
    label: str, keys: dict[str, Any], reliability: float = 0.9, method: str = "manual", **properties: Any
) -> dict[str, Any]:
    return {
        "label": label,
        "merge_keys": keys,
        "properties": properties,
        "source": "notes",
        "extraction_method": method,
        "reliability": reliability,
    }


def rel(type_: str, from_: tuple[str, dict], to: tuple[str, dict], **properties: Any) -> dict[str, Any]:
    return {
        "type": type_,
        "from_label": from_[0],
        "from_keys": from_[1],
        "to_label": to[0],
        "to_keys": to[1],
        "properties": properties,
        "source": "notes",
        "extraction_method": "manual",
    }


P_MERCURY = ("Person", {"name": "Mercury"})
J_MERCURY = ("Project", {"name": "Mercury"})
P_ADA = ("Person", {"name": "Ada"})
C_PARIS = ("City", {"name": "Paris", "country": "FR"})


@pytest.fixture
async def graph_with_data(graph: GraphBackend) -> GraphBackend:
    await load_into_graph(graph, read_sources([EXPORT_SCHEMAS]))
    return graph


async def fill(client: Client) -> None:
    """Two Mercurys (a person and a project), Ada (tagged, important, with observations), Paris (a composite
    key), a relation from each person to the project, Ada's hierarchy under Mercury, and one low-confidence node."""
    await ok(client, "write_node", node(*P_MERCURY, age=40, tags=["astro"], importance=3))
    await ok(client, "write_node", node(*J_MERCURY, budget=1.5))
    ada = node(*P_ADA, observations=["wrote the first program", 'said "hello"'], tags=["math", "astro"], importance=9)
    await ok(client, "write_node", ada)
    await ok(client, "write_node", node(*C_PARIS, population=2_100_000))
    await ok(client, "write_node", node("Entity", {"name": "Rumour"}, reliability=0.1, method="llm"))
    await ok(client, "write_relationship", rel("WORKS_ON", P_MERCURY, J_MERCURY, role="lead"))
    await ok(client, "write_relationship", rel("WORKS_ON", P_ADA, J_MERCURY))
    await ok(client, "write_relationship", rel("LIVES_IN", P_ADA, C_PARIS))
    await ok(client, "write_relationship", rel("CHILD_OF", P_ADA, P_MERCURY))


@pytest.fixture
async def client(settings: Settings, graph_with_data: GraphBackend) -> AsyncIterator[Client]:
    async with open_client(settings, "in_process") as client:
        await fill(client)
        yield client


def dot_id(quoted: str) -> str:
    """A quoted DOT id's text, its escapes (`\\"`, `\\\\`) read."""
    assert quoted.startswith('"') and quoted.endswith('"'), quoted
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


async def export(client: Client, format_: str, **args: Any) -> dict[str, Any]:
    return await ok(client, "export_graph", {"format": format_, **args})


async def test_json_keeps_each_nodes_identity_and_every_field(client: Client) -> None:
    answer = await export(client, "json")
    document = json.loads(answer["content"])
    assert (document["format"], document["version"]) == ("write-gate/json", 1)
    entities = {e["id"]: e for e in document["entities"]}
    assert set(entities) == {ADA, PERSON, PROJECT, PARIS, 'Entity:{"name":"Rumour"}'}
    assert (answer["entities"], answer["relations"]) == (5, 4)
    ada = entities[ADA]
    assert ada["label"] == ada["entityType"] == "Person" and ada["keys"] == {"name": "Ada"} and ada["name"] == "Ada"
    assert ada["observations"] == ["wrote the first program", 'said "hello"']
    assert ada["tags"] == ["math", "astro"] and ada["importance"] == 9  # as written and ada["parentId"] == "Mercury"
    assert ada["properties"] == {} and ada["lastModified"] == ada["provenance"]["last_updated"]
    assert ada["createdAt"] and set(ada["provenance"]) >= {"source", "extraction_method", "confidence", "written_by"}
    assert entities[PARIS]["keys"] == {"name": "Paris", "country": "FR"}
    assert entities[PARIS]["properties"] == {"population": 2_100_000}
    assert entities[PERSON]["properties"] == {"age": 40} and entities[PROJECT]["properties"] == {"budget": 1.5}
    relations = {(r["from_id"], r["relationType"], r["to_id"]): r for r in document["relations"]}
    assert set(relations) == {
        (PERSON, "WORKS_ON", PROJECT),
        (ADA, "WORKS_ON", PROJECT),
        (ADA, "LIVES_IN", PARIS),
        (ADA, "CHILD_OF", PERSON),
    }
    lead = relations[(PERSON, "WORKS_ON", PROJECT)]
    assert (lead["from"], lead["to"], lead["weight"], lead["properties"]) == (
        "Mercury",
        "Mercury",
        1.0,
        {"role": "lead"},
    )
    assert lead["provenance"]["source"] == "notes"


async def test_jsonl_is_the_official_servers_lines_with_identity_beside(client: Client) -> None:
    lines = [json.loads(line) for line in (await export(client, "jsonl"))["content"].splitlines()]
    assert [line["type"] for line in lines] == ["entity"] * 5 + ["relation"] * 4
    assert all(list(line)[:4] == ["type", "name", "entityType", "observations"] for line in lines[:5])
    works = [line for line in lines if line.get("relationType") == "WORKS_ON" and line["from"] == "Mercury"]
    assert [(w["from_id"], w["to_id"]) for w in works] == [(PERSON, PROJECT)]


async def test_csv_has_two_sections_that_csv_reads_back(client: Client) -> None:
    content = (await export(client, "csv"))["content"]
    entities_part, relations_part = content.split("\n\n# RELATIONS\n")
    assert entities_part.startswith("# ENTITIES\n")
    entities = list(csv.DictReader(io.StringIO(entities_part.removeprefix("# ENTITIES\n"))))
    relations = list(csv.DictReader(io.StringIO(relations_part)))
    by_id = {row["id"]: row for row in entities}
    assert set(by_id) >= {PERSON, PROJECT, ADA, PARIS}
    assert json.loads(by_id[ADA]["observations"])[1] == 'said "hello"' and json.loads(by_id[ADA]["tags"]) == [
        "math",
        "astro",
    ]
    assert json.loads(by_id[PARIS]["keys"]) == {"name": "Paris", "country": "FR"}
    assert float(by_id[ADA]["importance"]) == 9 and float(by_id[ADA]["confidence"]) > 0
    assert {(r["from_id"], r["relationType"], r["to_id"]) for r in relations} >= {(PERSON, "WORKS_ON", PROJECT)}


async def test_graphml_and_gexf_read_back_with_their_types(client: Client) -> None:
    read = nx.read_graphml(io.StringIO((await export(client, "graphml"))["content"]))
    assert set(read.nodes) >= {PERSON, PROJECT, ADA, PARIS} and read.is_directed()
    ada = read.nodes[ADA]
    assert ada["label"] == "Person" and ada["name"] == "Ada" and json.loads(ada["tags"]) == ["math", "astro"]
    assert isinstance(ada["confidence"], float) and ada["importance"] == 9.0
    assert read.nodes[PERSON]["p_age"] == 40 and isinstance(read.nodes[PROJECT]["p_budget"], float)
    assert read.nodes[PARIS]["p_population"] == 2_100_000
    edges = {(a, d["relationType"], b): d for a, b, d in read.edges(data=True)}
    assert set(edges) >= {(PERSON, "WORKS_ON", PROJECT), (ADA, "CHILD_OF", PERSON)}
    assert edges[(PERSON, "WORKS_ON", PROJECT)]["weight"] == 1.0
    assert json.loads(edges[(PERSON, "WORKS_ON", PROJECT)]["properties"]) == {"role": "lead"}

    gexf = nx.read_gexf(io.BytesIO((await export(client, "gexf"))["content"].encode()))
    assert set(gexf.nodes) >= {PERSON, PROJECT, ADA, PARIS}
    assert gexf.nodes[ADA]["label"] == "Ada" and gexf.nodes[ADA]["entityType"] == "Person"  # Gephi shows the name
    assert gexf.nodes[ADA]["importance"] == 9.0 and gexf.nodes[PERSON]["p_age"] == 40
    assert {(a, d["relationType"], b) for a, b, d in gexf.edges(data=True)} >= {(PERSON, "WORKS_ON", PROJECT)}


async def test_graphml_and_gexf_stay_well_formed_with_characters_xml_cannot_hold(client: Client) -> None:
    """A name with U+0001 or U+FFFE (which JSON and the graph hold, XML 1.0 not even escaped) is written as the text
    `\\u0001`: graphml once failed inside the gate, gexf was not XML."""
    await ok(client, "write_node", node("Entity", {"name": "bell\x01here"}, flag="odd\ufffe"))
    for format_ in ("graphml", "gexf"):
        content = (await export(client, format_))["content"]
        read = nx.read_graphml(io.StringIO(content)) if format_ == "graphml" else nx.read_gexf(io.StringIO(content))
        names = {data.get("name") for _, data in read.nodes(data=True)}
        assert "bell\\u0001here" in names, (format_, names)


async def test_dot_mermaid_and_markdown_name_every_node_by_identity(client: Client) -> None:
    [parsed] = pydot.graph_from_dot_data((await export(client, "dot"))["content"])
    assert {dot_id(n.get_name()) for n in parsed.get_nodes()} >= {PERSON, PROJECT, ADA, PARIS}
    ends = {(dot_id(e.get_source()), dot_id(e.get_destination())) for e in parsed.get_edges()}
    assert ends >= {(PERSON, PROJECT), (ADA, PROJECT), (ADA, PERSON), (ADA, PARIS)}

    mermaid = (await export(client, "mermaid"))["content"].splitlines()
    assert mermaid[0] == "graph LR"
    named = {line.split(" = ", 1)[1]: line.split()[1] for line in mermaid if line.strip().startswith("%% n")}
    assert set(named) >= {PERSON, PROJECT, ADA, PARIS}
    assert f'  {named[PERSON]} -->|"WORKS_ON"| {named[PROJECT]}' in mermaid
    assert sum(1 for line in mermaid if line.strip().startswith("n") and "[" in line) == 5

    markdown = (await export(client, "markdown"))["content"]
    assert markdown.startswith("# Knowledge graph\n\n5 entities, 4 relations.")
    assert f"- id: `{PERSON}`" in markdown and f"- id: `{PROJECT}`" in markdown
    assert '  - said "hello"' in markdown and "- parent: Mercury" in markdown


async def test_filters_run_in_the_engine(client: Client, graph: GraphBackend) -> None:
    async def ids(**filter_: Any) -> tuple[set[str], set[tuple[str, str]]]:
        document = json.loads((await export(client, "json", filter=filter_))["content"])
        return {e["id"] for e in document["entities"]}, {(r["from_id"], r["to_id"]) for r in document["relations"]}

    people, people_relations = await ids(labels=["Person"])
    assert people == {PERSON, ADA} and people_relations == {(ADA, PERSON)}  # both ends exported, no other
    assert (await ids(entityType="person"))[0] == {PERSON, ADA}  # memory-mcp's entityType, a drift remapped
    assert (await ids(tags=[" ASTRO "]))[0] == {PERSON, ADA}
    assert (await ids(tags=["math", "nothing"]))[0] == {ADA}
    assert 'Entity:{"name":"Rumour"}' not in (await ids(minConfidence=0.5))[0]
    assert len((await ids(minConfidence=0.0))[0]) == 5
    # Dates compare with last_updated: set here to known times, so the test needs no clock.
    for key, when in (
        (identity_key({"name": "Ada"}), "2025-03-01T10:00:00.000Z"),
        ('{"name":"Mercury"}', "2025-06-01T00:00:00.000Z"),
    ):
        await graph.write(Statement("MATCH (n:Person {_key: $key}) SET n.last_updated = $at", {"key": key, "at": when}))
    assert (await ids(labels=["Person"], startDate="2025-01-01", endDate="2025-03-01"))[0] == {ADA}
    assert (await ids(labels=["Person"], startDate="2025-03-02T00:00:00Z"))[0] == {PERSON}
    assert (await ids(labels=["Person"], endDate="2025-02-28"))[0] == set()
    # One string, not a list: the write tools refuse it (tags are a list), so it is written around them.
    await ok(client, "write_node", node("Person", {"name": "Solo"}))
    solo = Statement("MATCH (n:Person {_key: $key}) SET n.tags = 'astro', n._f_tags = ['astro']")
    await graph.write(Statement(solo.text, {"key": identity_key({"name": "Solo"})}))
    assert (await ids(tags=["astro"]))[0] == {PERSON, ADA, 'Person:{"name":"Solo"}'}


async def test_archived_entities_only_when_asked(client: Client, graph: GraphBackend) -> None:
    await graph.write(
        Statement(
            "MATCH (n:Person {_key: $key}) SET n._archived_at = '2026-01-01T00:00:00.000Z'", {"key": '{"name":"Ada"}'}
        )
    )
    document = json.loads((await export(client, "json"))["content"])
    assert ADA not in {e["id"] for e in document["entities"]}
    assert all(ADA not in (r["from_id"], r["to_id"]) for r in document["relations"])
    everything = json.loads((await export(client, "json", includeArchived=True))["content"])
    ada = next(e for e in everything["entities"] if e["id"] == ADA)
    assert "_archived_at" not in ada["properties"]  # hidden like every `_` property


async def test_bad_filters_are_refused_with_a_code(client: Client) -> None:
    unknown = await rejected(client, "export_graph", {"format": "json", "filter": {"labels": ["Schema"]}})
    assert unknown["error_code"] == "SCHEMA_UNKNOWN_LABEL" and unknown["details"]["labels"] == ["Schema"]
    for args in (
        {"format": "xlsx"},
        {"format": "json", "filter": {"colour": "red"}},
        {"format": "json", "filter": {"labels": ["a b"]}},
        {"format": "json", "filter": {"startDate": "yesterday"}},
        {"format": "json", "includeArchived": "maybe", "extra": 1},
    ):
        assert (await rejected(client, "export_graph", args))["error_code"] == "INVALID_INPUT", args


@pytest.mark.every_transport
async def test_progress_is_reported_while_paging(
    settings: Settings, graph_with_data: GraphBackend, transport: str
) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, _total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with open_client(settings, transport) as client:
        await fill(client)
        result = await client.call_tool("export_graph", {"format": "jsonl"}, progress_callback=on_progress)
        assert not result.is_error
        assert result.content[0].text == result.structured_content["content"]  # the text is the export, as memory-mcp's
        quiet = await client.call_tool("export_graph", {"format": "jsonl"})  # no progressToken: no progress
    # One report per page, label by label (City, Entity, Person, Project): the count grows to every entity.
    assert [p for p, _ in seen] == [1, 2, 4, 5] and seen[-1][1] == "5 entities"
    assert quiet.structured_content == result.structured_content


async def test_export_is_an_admin_tool(settings: Settings, graph_with_data: GraphBackend, tmp_path: Path) -> None:
    agents = tmp_path / "agents.toml"
    grants = {"reader": '["read"]', "writer": '["read", "write"]'}
    agents.write_text(
        "".join(
            f'[agents.{agent}]\ntools = {tools}\nlabels = ["*"]\nrelationship_types = ["*"]\n'
            f'token_sha256 = "{"0" * 64}"\n'
            for agent, tools in grants.items()
        )
    )
    for agent in grants:
        scoped = settings.model_copy(update={"agents_file": agents, "agent": agent})
        async with open_client(scoped, "in_process") as client:
            assert "export_graph" not in {t.name for t in (await client.list_tools()).tools}
            denied = await rejected(client, "export_graph", {"format": "json"})
            assert denied["error_code"] == "PERMISSION_DENIED"


@pytest.mark.one_tier
async def test_in_both_profiles_and_over_stdio(settings: Settings, graph_with_data: GraphBackend) -> None:
    interchange = settings.model_copy(update={"toolsets": "interchange"})  # WRITE_GATE_TOOLSETS lists it
    async with open_client(interchange, "stdio", profile="memory") as client:
        await ok(
            client, "create_entities", {"entities": [{"name": "Mercury", "entityType": "Person", "observations": []}]}
        )
        tool = next(t for t in (await client.list_tools()).tools if t.name == "export_graph")
        assert tool.annotations.read_only_hint is True
        answer = await export(client, "jsonl")
        [line] = [json.loads(line) for line in answer["content"].splitlines()]
        assert (line["id"], line["name"], line["observations"]) == (PERSON, "Mercury", [])


def cli(settings: Settings, *args: str) -> CommandRun:
    """`write-gate export ARGS`, in process."""
    return run_write_gate("export", *args, env=settings_env(settings))


@pytest.mark.one_tier
async def test_the_cli_exports_every_format_with_the_same_filters(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    done = await anyio.to_thread.run_sync(lambda: cli(settings, "--format", "csv", "--out", str(tmp_path / "csv")))
    assert done.returncode == 0, done.stderr
    nodes = list(csv.DictReader((tmp_path / "csv" / "nodes.csv").open(encoding="utf-8", newline="")))
    edges = list(csv.DictReader((tmp_path / "csv" / "edges.csv").open(encoding="utf-8", newline="")))
    assert {row["id"] for row in nodes} >= {PERSON, PROJECT, ADA, PARIS} and len(edges) == 4
    assert "exported 5 entities and 4 relations" in done.stderr

    out = tmp_path / "people.graphml"
    args = ("--format", "graphml", "--labels", "Person", "--tags", "astro", "--min-confidence", "0.5", "-o", str(out))
    done = await anyio.to_thread.run_sync(lambda: cli(settings, *args))
    assert done.returncode == 0, done.stderr
    read = nx.read_graphml(out)
    assert set(read.nodes) == {PERSON, ADA} and [(a, b) for a, b in read.edges()] == [(ADA, PERSON)]

    refused = [
        (("--format", "json", "--out", str(tmp_path)), 2, "--out DIR is for --format csv"),
        (("--start-date", "soon"), 2, "error: filter: startDate"),
        (("--entity-type", "Schema"), 1, "SCHEMA_UNKNOWN_LABEL"),
    ]
    for args, code, says in refused:
        done = await anyio.to_thread.run_sync(lambda args=args: cli(settings, *args))
        assert (done.returncode, done.stdout) == (code, "") and says in done.stderr, done.stderr
