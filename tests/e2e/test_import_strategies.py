"""import_graph through a real MCP client on every engine tier: each format (the gate's and memory-mcp's), each
merge strategy on entities that exist, dryRun, per-item errors, provenance from the records, progress."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, TESTS, CommandRun, ok, open_client, rejected, run_write_gate, settings_env
from tests.e2e.http_process import http_gate, mcp_client
from write_gate.core.cypher.statement import Statement
from write_gate.core.identity import identity_key
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

CHILD_OF_SCHEMAS = TESTS / "schemas" / "child_of"


@pytest.fixture
async def client(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await migrate(graph)
    await load_into_graph(graph, read_sources([CHILD_OF_SCHEMAS]))
    async with open_client(settings.model_copy(update={"agent": "importer-bot"}), "in_process") as session:
        yield session


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def alice(*observations: str, **extra: Any) -> dict[str, Any]:
    return {"type": "entity", "name": "Alice", "entityType": "Person", "observations": list(observations), **extra}


async def imported(client: Client, fmt: str, data: str, **args: Any) -> dict[str, Any]:
    return await ok(client, "import_graph", {"format": fmt, "data": data, **args})


async def entity(client: Client, name: str) -> dict[str, Any]:
    [found] = (await ok(client, "open_nodes", {"names": [name], "neighbors": False}))["entities"]
    return found


COUNTS = ("entitiesCreated", "entitiesUpdated", "entitiesSkipped", "relationsCreated", "relationsUpdated")


def counts(answer: dict[str, Any]) -> tuple[int, ...]:
    return tuple(answer[name] for name in COUNTS)


async def test_a_second_line_for_alice_under_merge_adds_its_new_observation(client: Client) -> None:
    first = alice("likes tea", tags=["Tea", " hobby "], importance=3, properties={"city": "Paris"})
    second = alice("likes tea", "plays chess", tags=["chess"], importance=7, properties={"city": "Rome", "born": 1990})
    answer = await imported(client, "jsonl", jsonl(first, second), mergeStrategy="merge")
    assert counts(answer) == (1, 1, 0, 0, 0) and answer["errors"] == [] and answer["dryRun"] is False
    found = await entity(client, "Alice")
    assert found["observations"] == ["likes tea", "plays chess"]
    props = found["properties"]
    assert props["tags"] == ["tea", "hobby", "chess"]  # unioned, trimmed, lowercase, in the lines' order
    assert props["importance"] == 7  # the higher
    assert (props["city"], props["born"]) == ("Paris", 1990)  # its own value kept, the one it lacked set
    again = await imported(client, "jsonl", jsonl(second), mergeStrategy="merge")
    assert counts(again) == (0, 0, 1, 0, 0)  # nothing new: nothing written


async def test_each_strategy_on_an_entity_that_exists(client: Client, graph: GraphBackend) -> None:
    rome = {"properties": {"city": "Rome"}}
    await imported(client, "jsonl", jsonl(alice("likes tea", properties={"city": "Paris"})))
    skipped = await imported(client, "jsonl", jsonl(alice("likes coffee", **rome)), mergeStrategy="skip")
    assert counts(skipped) == (0, 0, 1, 0, 0)
    assert (await entity(client, "Alice"))["observations"] == ["likes tea"]
    for strategy in ("update", "replace"):
        updated = await imported(client, "jsonl", jsonl(alice("likes coffee", **rome)), mergeStrategy=strategy)
        assert counts(updated) == (0, 1, 0, 0, 0)
        found = await entity(client, "Alice")
        assert (found["observations"], found["properties"]["city"]) == (["likes coffee"], "Rome")

    bob = {"type": "entity", "name": "Bob", "entityType": "Person", "observations": []}
    refused = await rejected(
        client, "import_graph", {"format": "jsonl", "data": jsonl(bob, alice("x"), alice("y")), "mergeStrategy": "fail"}
    )
    assert refused["error_code"] == "IMPORT_CONFLICT"  # Alice named twice: one entity that exists, said once
    assert refused["details"]["ids"] == [f"Person:{identity_key({'name': 'Alice'})}"]
    assert refused["details"]["count"] == 1
    assert (await ok(client, "open_nodes", {"names": ["Bob"]}))["entities"] == []  # nothing at all was written
    fresh = await imported(client, "jsonl", jsonl(bob), mergeStrategy="fail")
    assert counts(fresh) == (1, 0, 0, 0, 0)


async def test_an_entity_whose_name_exists_under_another_type_is_that_entity_for_every_strategy(
    client: Client, graph: GraphBackend
) -> None:
    """A name is one entity's whatever its type (memory-mcp, the memory profile): a line naming it under another
    type is skipped, merged or replaced as the node that exists, which keeps its type, or refuses a `fail`
    import. An import created it again under the line's type: two entities of one name."""
    acme = {"type": "entity", "name": "Acme", "entityType": "Organization", "observations": ["makes anvils"]}
    await imported(client, "jsonl", jsonl(acme))
    as_person = {**acme, "entityType": "Person", "observations": ["sells rockets"]}
    for chunked in (False, True):  # one line alone, and a chunk of lines written as one batch
        lines = jsonl(as_person) if not chunked else jsonl(*({**as_person, "name": n} for n in ("Acme", "New")))
        skipped = await imported(client, "jsonl", lines, mergeStrategy="skip")
        assert counts(skipped)[1:3] == (0, 1)
        merged = await imported(client, "jsonl", jsonl(as_person), mergeStrategy="merge")
        assert counts(merged) == (0, 1, 0, 0, 0)
        found = await entity(client, "Acme")
        assert (found["entityType"], found["observations"]) == ("Organization", ["makes anvils", "sells rockets"])
        refused = await rejected(
            client, "import_graph", {"format": "jsonl", "data": jsonl(as_person), "mergeStrategy": "fail"}
        )
        assert refused["details"]["ids"] == [f"Organization:{identity_key({'name': 'Acme'})}"]
        replaced = await imported(client, "jsonl", jsonl(acme), mergeStrategy="replace")
        assert counts(replaced) == (0, 1, 0, 0, 0)
    rows = await graph.read(Statement("MATCH (n) WHERE n.name = 'Acme' RETURN labels(n) AS labels"))
    assert rows == [{"labels": ["Organization"]}]
    assert (await entity(client, "New"))["entityType"] == "Person"


async def test_relations_skip_or_update_by_strategy(client: Client, graph: GraphBackend) -> None:
    data = jsonl(
        {"type": "entity", "name": "Ada", "entityType": "Person"},
        {"type": "entity", "name": "Acme", "entityType": "Organization"},
        {"type": "relation", "from": "Ada", "to": "Acme", "relationType": "WORKS_FOR", "properties": {"role": "cto"}},
    )
    assert (await imported(client, "jsonl", data))["relationsCreated"] == 1
    assert (await imported(client, "jsonl", data, mergeStrategy="skip"))["relationsSkipped"] == 1
    # A merge of the same relation changes nothing: skipped, as memory-mcp counts it (it was counted updated).
    again = await imported(client, "jsonl", data, mergeStrategy="merge")
    assert (again["relationsSkipped"], again["relationsUpdated"]) == (1, 0)
    changed = data.replace('"cto"', '"ceo"')
    assert (await imported(client, "jsonl", changed, mergeStrategy="merge"))["relationsUpdated"] == 1
    [row] = await graph.read(Statement("MATCH (:Person)-[r:WORKS_FOR]->(:Organization) RETURN r.role AS role"))
    assert row["role"] == "ceo"


WRITE_GATE_JSON = {
    "format": "write-gate/json",
    "version": 1,
    "entities": [
        {
            "id": 'Person:{"name":"Mercury"}',
            "label": "Person",
            "keys": {"name": "Mercury"},
            "name": "Mercury",
            "entityType": "Person",
            "observations": ["sings"],
            "tags": ["music"],
            "importance": 9,
            "properties": {"born": 1946, "confidence": 0.99, "_p_born": ["x"]},
            "provenance": {"source": "biography", "extraction_method": "manual", "written_by": "someone-else"},
        },
        {
            "id": 'Project:{"name":"Mercury"}',
            "label": "Project",
            "keys": {"name": "Mercury"},
            "name": "Mercury",
            "entityType": "Project",
            "observations": ["to the moon"],
        },
    ],
    "relations": [
        {
            "from": "Mercury",
            "to": "Mercury",
            "from_id": 'Person:{"name":"Mercury"}',
            "to_id": 'Project:{"name":"Mercury"}',
            "relationType": "WORKS_ON",
            "weight": 0.5,
            "properties": {"since": 1970},
        }
    ],
}


async def test_the_gate_json_keeps_two_nodes_of_one_name_apart_and_takes_the_records_claim(
    client: Client, graph: GraphBackend
) -> None:
    answer = await imported(client, "json", json.dumps(WRITE_GATE_JSON))
    assert counts(answer) == (2, 0, 0, 1, 0) and answer["errors"] == []
    [row] = await graph.read(
        Statement(
            "MATCH (p:Person {name: 'Mercury'})-[r:WORKS_ON]->(j:Project {name: 'Mercury'}) "
            "RETURN properties(p) AS p, properties(r) AS r"
        )
    )
    person = row["p"]
    assert (person["source"], person["extraction_method"]) == ("biography", "manual")  # the record's claim
    assert person["written_by"] == "importer-bot"  # never the file's
    assert person["confidence"] != 0.99 and "_p_born" in person and person["_p_born"] != ["x"]  # computed
    assert (person["born"], person["tags"], person["importance"]) == (1946, ["music"], 9)
    assert (row["r"]["weight"], row["r"]["since"]) == (0.5, 1970)


async def test_memory_mcp_json_and_the_gates_older_json_with_parents(client: Client, graph: GraphBackend) -> None:
    memory_mcp = {
        "entities": [
            {"name": "Europe", "entityType": "Entity", "observations": ["a continent"], "createdAt": "2024-01-01"},
            {"name": "France", "entityType": "Entity", "observations": [], "parentId": "Europe", "importance": 4},
        ],
        "relations": [{"from": "France", "to": "Europe", "relationType": "related to"}],
    }
    answer = await imported(client, "json", json.dumps(memory_mcp))
    assert counts(answer) == (2, 0, 0, 1, 0) and answer["errors"] == []  # RELATED_TO; parentId is the entity's
    rows = await graph.read(Statement("MATCH (:Entity {name: 'France'})-[r]->(:Entity) RETURN type(r) AS t"))
    assert sorted(r["t"] for r in rows) == ["CHILD_OF", "RELATED_TO"]
    older = {
        "entities": [
            {
                "name": "Grace",
                "entityType": "Person",
                "observations": ["admiral"],
                "labels": ["Person"],
                "properties": {"name": "Grace", "source": "navy-records", "extraction_method": "manual"},
            }
        ],
        "relations": [],
    }
    assert counts(await imported(client, "json", json.dumps(older))) == (1, 0, 0, 0, 0)
    assert (await entity(client, "Grace"))["properties"]["source"] == "navy-records"


GATE_CSV = "\n".join(
    [
        "# ENTITIES",
        "id,label,keys,name,entityType,observations,tags,importance,properties,"
        "source,extraction_method,confidence,written_by,last_updated",
        '"Person:{""name"":""Ada""}",Person,"{""name"":""Ada""}",Ada,Person,"[""counts, carefully""]",'
        '"[""math""]",8,"{""born"":1815}",letters,manual,0.9,x,2020-01-01',
        '"Organization:{""name"":""Acme""}",Organization,"{""name"":""Acme""}",Acme,Organization,[],[],,{},,,,,',
        "",
        "# RELATIONS",
        "from_id,to_id,from,to,relationType,weight,properties,source,extraction_method,confidence,written_by,"
        "last_updated",
        '"Person:{""name"":""Ada""}","Organization:{""name"":""Acme""}",Ada,Acme,WORKS_FOR,0.75,{},,,,,',
    ]
)

MEMORY_CSV = """# ENTITIES
name,entityType,observations,createdAt,lastModified,tags,importance
Linus,Person,writes kernels; reads mail,2024-01-01,2024-01-02,code|linux,6
Penguin,Organization,,,,,

# RELATIONS
from,to,relationType,createdAt,lastModified
Linus,Penguin,WORKS_FOR,,
Linus,Nobody,WORKS_FOR,,
"""


async def test_csv_in_the_gates_form_and_memory_mcps(client: Client) -> None:
    answer = await imported(client, "csv", GATE_CSV)
    assert counts(answer) == (2, 0, 0, 1, 0) and answer["errors"] == []
    ada = await entity(client, "Ada")
    assert ada["observations"] == ["counts, carefully"]
    assert (ada["properties"]["born"], ada["properties"]["importance"]) == (1815, 8)
    answer = await imported(client, "csv", MEMORY_CSV)
    assert counts(answer) == (2, 0, 0, 1, 0)
    assert answer["errors"] == [
        {"line": 9, "kind": "relation", "error_code": "ENDPOINT_NOT_FOUND", "message": "its to entity is not found"}
    ]
    linus = await entity(client, "Linus")
    assert (linus["observations"], linus["properties"]["tags"]) == (["writes kernels", "reads mail"], ["code", "linux"])


GATE_GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d0" for="node" attr.name="label" attr.type="string"/>
  <key id="d1" for="node" attr.name="keys" attr.type="string"/>
  <key id="d2" for="node" attr.name="name" attr.type="string"/>
  <key id="d3" for="node" attr.name="observations" attr.type="string"/>
  <key id="d4" for="node" attr.name="importance" attr.type="double"/>
  <key id="d5" for="node" attr.name="p_born" attr.type="long"/>
  <key id="d6" for="node" attr.name="properties" attr.type="string"/>
  <key id="e0" for="edge" attr.name="relationType" attr.type="string"/>
  <key id="e1" for="edge" attr.name="weight" attr.type="double"/>
  <graph edgedefault="directed">
    <node id="Person:{&quot;name&quot;:&quot;Mercury&quot;}">
      <data key="d0">Person</data><data key="d1">{"name":"Mercury"}</data><data key="d2">Mercury</data>
      <data key="d3">["sings"]</data><data key="d4">9.0</data><data key="d5">1946</data>
      <data key="d6">{"born": 1946}</data>
    </node>
    <node id="Project:{&quot;name&quot;:&quot;Mercury&quot;}">
      <data key="d0">Project</data><data key="d1">{"name":"Mercury"}</data><data key="d2">Mercury</data>
    </node>
    <edge source="Person:{&quot;name&quot;:&quot;Mercury&quot;}"
          target="Project:{&quot;name&quot;:&quot;Mercury&quot;}">
      <data key="e0">WORKS_ON</data><data key="e1">0.5</data>
    </edge>
  </graph>
</graphml>
"""

PLAIN_GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="node_entityType" for="node" attr.name="entityType" attr.type="string"/>
  <key id="node_observations" for="node" attr.name="observations" attr.type="string"/>
  <key id="edge_relationType" for="edge" attr.name="relationType" attr.type="string"/>
  <graph id="write_gate" edgedefault="directed">
    <node id="Kim"><data key="node_entityType">Person</data><data key="node_observations">["paints"]</data></node>
    <node id="Studio"><data key="node_entityType">Organization</data></node>
    <edge source="Kim" target="Studio"><data key="edge_relationType">WORKS_FOR</data></edge>
  </graph>
</graphml>
"""


async def test_graphml_with_gate_ids_and_with_plain_names(client: Client, graph: GraphBackend) -> None:
    answer = await imported(client, "graphml", GATE_GRAPHML)
    assert counts(answer) == (2, 0, 0, 1, 0) and answer["errors"] == []
    rows = await graph.read(Statement("MATCH (n {name: 'Mercury'}) RETURN labels(n) AS l, n.importance AS i"))
    assert sorted((r["l"][0], r["i"]) for r in rows) == [("Person", 9.0), ("Project", None)]
    answer = await imported(client, "graphml", PLAIN_GRAPHML)
    assert counts(answer) == (2, 0, 0, 1, 0) and answer["errors"] == []
    assert (await entity(client, "Kim"))["observations"] == ["paints"]


async def test_a_dry_run_decides_everything_and_writes_nothing(client: Client, graph: GraphBackend) -> None:
    await imported(client, "jsonl", jsonl(alice("likes tea")))
    data = jsonl(
        alice("likes jazz"),
        {"type": "entity", "name": "Bob", "entityType": "Person"},
        {"type": "relation", "from": "Bob", "to": "Alice", "relationType": "RELATED_TO"},
        {"type": "relation", "from": "Bob", "to": "Alice", "relationType": "!!!"},
    )
    before = await graph.read(Statement("MATCH (n) RETURN count(n) AS n"))
    answer = await imported(client, "jsonl", data, mergeStrategy="merge", dryRun=True)
    assert counts(answer) == (1, 1, 0, 1, 0) and answer["dryRun"] is True
    assert [(e["line"], e["error_code"]) for e in answer["errors"]] == [(4, "SCHEMA_UNKNOWN_LABEL")]
    assert await graph.read(Statement("MATCH (n) RETURN count(n) AS n")) == before
    assert (await entity(client, "Alice"))["observations"] == ["likes tea"]


async def test_bad_items_are_listed_with_their_place_and_bad_input_is_refused(client: Client) -> None:
    data = "not json\n" + jsonl({"type": "entity", "entityType": "Person"}, {"type": "thing"}, alice("ok"))
    answer = await imported(client, "jsonl", data)
    assert answer["entitiesCreated"] == 1
    assert [(e["line"], e["kind"], e["error_code"]) for e in answer["errors"]] == [
        (1, "record", "INVALID_INPUT"),
        (2, "record", "INVALID_INPUT"),
        (3, "record", "INVALID_INPUT"),
    ]
    assert "Person" not in json.dumps(answer["errors"])  # no value is echoed back
    for args, field in (
        ({"format": "xml", "data": ""}, "format"),
        ({"format": "json", "data": "[]"}, "data"),
        ({"format": "json", "data": "{}", "extra": 1}, "extra"),
        ({"format": "json", "data": "{}", "mergeStrategy": "overwrite"}, "mergeStrategy"),
        # Nested past what Python's JSON reader recurses through (it answered INTERNAL_ERROR): the file is refused.
        ({"format": "json", "data": "[" * 5000 + "]" * 5000}, "data"),
        ({"format": "jsonl", "data": '{"type": "entity", "a": ' + "[" * 5000 + "]" * 5000 + "}"}, "data"),
        ({"format": "backup", "data": "[" * 5000 + "]" * 5000}, "line"),  # refused naming its line
    ):
        refused = await rejected(client, "import_graph", args)
        assert refused["error_code"] == "INVALID_INPUT", refused
        assert field in json.dumps(refused["details"]), refused


async def test_progress_is_reported_to_a_client_that_asks(client: Client) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, _message: str | None) -> None:
        seen.append((progress, total))

    records = [{"type": "entity", "name": f"p{i}", "entityType": "Person"} for i in range(600)]
    args = {"format": "jsonl", "data": jsonl(*records)}
    result = await client.call_tool("import_graph", args, progress_callback=on_progress)
    assert not result.is_error and result.structured_content["entitiesCreated"] == 600
    assert seen == [(500, 600), (600, 600)]


@pytest.mark.one_tier
async def test_progress_reaches_a_client_over_streamable_http(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """The same reports on the HTTP transport: on the call's own response stream, in the SDK's default mode."""
    await migrate(graph)
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, _message: str | None) -> None:
        seen.append((progress, total))

    records = [{"type": "entity", "name": f"h{i}", "entityType": "Person"} for i in range(600)]
    with http_gate(settings, tmp_path / "gate.log", "--no-auth") as gate:
        async with mcp_client(gate.url, None) as client:
            args = {"format": "jsonl", "data": jsonl(*records)}
            result = await client.call_tool("import_graph", args, progress_callback=on_progress)
    assert not result.is_error and result.structured_content["entitiesCreated"] == 600
    assert seen == [(500, 600), (600, 600)]


def cli(settings: Settings, *args: str) -> CommandRun:
    """`write-gate ARGS`, in process."""
    return run_write_gate(*args, env=settings_env(settings))


@pytest.mark.one_tier
async def test_the_cli_imports_by_format_and_strategy(settings: Settings, graph: GraphBackend, tmp_path: Path) -> None:
    cli_settings = settings.model_copy(update={"agent": "cli-importer"})
    folder = tmp_path / "export"
    folder.mkdir()
    entities, relations = GATE_CSV.split("\n\n")
    (folder / "nodes.csv").write_text(entities.split("\n", 1)[1] + "\n", encoding="utf-8")
    (folder / "edges.csv").write_text(relations.split("\n", 1)[1] + "\n", encoding="utf-8")
    done = cli(cli_settings, "import", str(folder), "--format", "csv", "--strategy", "merge")
    assert done.returncode == 0, done.stderr
    assert "entities: 2 were created, 0 updated, 0 skipped; relations: 1 created" in done.stderr

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(jsonl(alice("likes tea")), encoding="utf-8")
    second.write_text(jsonl(alice("plays chess")), encoding="utf-8")
    assert cli(cli_settings, "import", str(first), "--strategy", "merge").returncode == 0
    dry = cli(cli_settings, "import", str(second), "--strategy", "merge", "--dry-run")
    assert "entities: 0 would be created, 1 updated" in dry.stderr, dry.stderr
    assert cli(cli_settings, "import", str(second), "--strategy", "merge").returncode == 0
    [row] = await graph.read(Statement("MATCH (n:Person {name: 'Alice'}) RETURN properties(n) AS p"))
    assert (row["p"]["observations"], row["p"]["written_by"]) == (["likes tea", "plays chess"], "cli-importer")

    refused = cli(cli_settings, "import", str(second), "--strategy", "fail")
    assert refused.returncode == 1 and "IMPORT_CONFLICT" in refused.stderr


async def test_the_memory_profile_imports_with_its_own_provenance(settings: Settings, graph: GraphBackend) -> None:
    """The memory profile offers import_graph too; a record without a claim of its own takes the profile's
    (the client's name as source, WRITE_GATE_MEMORY_EXTRACTION_METHOD)."""
    await migrate(graph)
    async with open_client(settings, "in_process", profile="memory") as memory:
        answer = await imported(memory, "jsonl", jsonl(alice("likes tea")))
        assert answer["entitiesCreated"] == 1
        [found] = (await ok(memory, "open_nodes", {"names": ["Alice"]}))["entities"]
    [row] = await graph.read(Statement("MATCH (n:Person {name: 'Alice'}) RETURN properties(n) AS p"))
    assert found["observations"] == ["likes tea"]
    assert (row["p"]["source"], row["p"]["extraction_method"]) == (CLIENT_NAME, settings.memory_extraction_method)
