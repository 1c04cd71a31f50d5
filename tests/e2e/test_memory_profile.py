"""Seed 001, section 8: the official memory server's behaviours, every one, through a real MCP client
session against `--profile memory`, with every write put through the gate."""

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import (
    CLIENT_NAME,
    FEED_TOOLS,
    KNOWLEDGE_TOOLS,
    MEMORY_DEFAULT_TOOLS,
    MESH_TOOLS,
    QUARANTINE_TOOLS,
    STATS_TOOLS,
    TESTS,
    TEXT_SEARCHES,
    every_toolset,
    ok,
    open_client,
    rejected,
    run_write_gate,
    settings_env,
    write_gate_argv,
)
from tests.e2e import readme_blocks as rb
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

# With every toolset: the official server's nine, seed 004's searches, duplicates, merges and compression, the
# history reads, statistics and saved searches.
MEMORY_TOOLS = {
    *MEMORY_DEFAULT_TOOLS,
    "search_nodes_ranked",
    *TEXT_SEARCHES,
    "find_duplicates",
    "merge_entities",
    "compress_graph",
    "get_history",
    "list_conflicts",
    *FEED_TOOLS,
    *KNOWLEDGE_TOOLS,
    *STATS_TOOLS,
    "export_graph",
    "import_graph",
    *QUARANTINE_TOOLS,
    *MESH_TOOLS,
}


@pytest.fixture
async def memory(settings: Settings, graph: GraphBackend) -> AsyncIterator[Client]:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    async with open_client(settings, "in_process", profile="memory") as client:
        yield client


class Memory:
    """Calls a tool and returns what an agent of the official server reads: the JSON text, parsed."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, tool: str, **args: Any) -> Any:
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, result.structured_content
        text = result.content[0].text
        return json.loads(text) if text[:1] in "[{" else text

    async def error(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        assert result.is_error
        return result.structured_content

    async def entities(self, *names: str) -> list[dict[str, Any]]:
        graph = await self("read_graph")
        return [e for e in graph["entities"] if not names or e["name"] in names]

    async def relations(self) -> set[tuple[str, str, str]]:
        graph = await self("read_graph")
        return {(r["from"], r["to"], r["relationType"]) for r in graph["relations"]}


@pytest.fixture
def m(memory: Client) -> Memory:
    return Memory(memory)


def entity(name: str, entity_type: str = "person", observations: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": observations or []}


def rel(a: str, b: str, kind: str = "knows") -> dict[str, str]:
    return {"from": a, "to": b, "relationType": kind}


async def test_the_nine_tools_and_the_history_reads(memory: Client, settings: Settings) -> None:
    """By default the official nine only (a drop-in by its list too); the rest with --toolsets all."""
    assert {t.name for t in (await memory.list_tools()).tools} == MEMORY_DEFAULT_TOOLS
    # The instructions name no tool the list lacks (a black-box audit found get_schema named there).
    assert memory.instructions is not None and "get_schema" not in memory.instructions
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        assert {t.name for t in (await everything.list_tools()).tools} == MEMORY_TOOLS
    async with open_client(settings, "in_process") as gate:
        assert gate.instructions is not None and "get_schema lists them" in gate.instructions


# 8.1 entities


async def test_create_basic_entity(m: Memory, graph: GraphBackend) -> None:
    created = await m("create_entities", entities=[entity("Alice", observations=["Is a student"])])
    assert created == [{"name": "Alice", "entityType": "Person", "observations": ["Is a student"]}]
    [alice] = await m.entities()
    assert alice["name"] == "Alice" and alice["observations"] == ["Is a student"]
    # Through the gate: canonical label, remap breadcrumb, provenance from the client and llm.
    [row] = await graph.read(Statement("MATCH (n:Person {name: 'Alice'}) RETURN n"))
    node = row["n"]
    assert node["_schema_remap_from"] == ":person" and node["extraction_method"] == "llm"
    assert node["source"] == CLIENT_NAME  # the client's name from the MCP handshake
    assert node["confidence"] == pytest.approx(0.3)


async def test_duplicate_name_is_skipped_whatever_its_type(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice")])
    assert await m("create_entities", entities=[entity("Alice")]) == []
    assert await m("create_entities", entities=[entity("Alice", "company", ["other"])]) == []
    assert [e["name"] for e in await m.entities()] == ["Alice"]


async def test_only_new_entities_are_returned(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice")])
    created = await m("create_entities", entities=[entity("Alice"), entity("Bob")])
    assert [e["name"] for e in created] == ["Bob"]
    assert sorted(e["name"] for e in await m.entities()) == ["Alice", "Bob"]


async def test_a_small_graph_answers_in_the_order_it_was_written_whatever_the_types(m: Memory) -> None:
    """As the official server's list does (a black-box audit found pages grouped by type): a page answers its
    entities in creation order."""
    written = [("Zed", "city"), ("Acme", "company"), ("Alice", "person"), ("Bolt", "company"), ("Ann", "person")]
    for name, type_ in written:
        await m("create_entities", entities=[entity(name, type_)])
    assert [e["name"] for e in await m.entities()] == [name for name, _ in written]
    found = await m("search_nodes", query="n")  # Zed by its type (Location), Bolt by its (Organization)
    assert [e["name"] for e in found["entities"]] == [name for name, _ in written]
    # One written after a delete comes last, though the engine gives it the deleted one's id; relations too.
    await m("create_relations", relations=[rel("Alice", "Ann"), rel("Ann", "Alice")])
    await m("delete_entities", entityNames=["Zed"])
    await m("delete_relations", relations=[rel("Alice", "Ann")])
    await m("create_entities", entities=[entity("Yve", "person")])
    await m("create_relations", relations=[rel("Alice", "Yve")])
    graph = await m("read_graph")
    assert [e["name"] for e in graph["entities"]] == ["Acme", "Alice", "Bolt", "Ann", "Yve"]
    assert [(r["from"], r["to"]) for r in graph["relations"]] == [("Ann", "Alice"), ("Alice", "Yve")]


async def test_names_are_case_sensitive(m: Memory) -> None:
    await m("create_entities", entities=[entity("alice")])
    created = await m("create_entities", entities=[entity("Alice")])
    assert [e["name"] for e in created] == ["Alice"]
    assert sorted(e["name"] for e in await m.entities()) == ["Alice", "alice"]


async def test_create_entities_takes_memory_mcp_s_tags_and_importance(m: Memory) -> None:
    """Seed 004: create_entities validates tags (stored lower-cased, in the order given, each once) and an
    importance from 0 to 10; the official server's agents, who send neither, are answered as before."""
    tagged = {**entity("Carol", observations=["codes"]), "tags": ["Rust", "AI", "rust"], "importance": 7}
    created = await m("create_entities", entities=[tagged, entity("Dan")])
    # memory-mcp's entity carries its tags (as stored) and importance; one given neither is the official one.
    assert created == [
        {"name": "Carol", "entityType": "Person", "observations": ["codes"], "tags": ["rust", "ai"], "importance": 7},
        {"name": "Dan", "entityType": "Person", "observations": []},
    ]
    found = await m("search_nodes", query="", tags=["rust"], minImportance=5)
    assert [(e["name"], e["properties"]["tags"], e["properties"]["importance"]) for e in found["entities"]] == [
        ("Carol", ["rust", "ai"], 7)
    ]
    [carol] = found["entities"]
    assert (carol["tags"], carol["importance"]) == (["rust", "ai"], 7)  # beside the name, as memory-mcp has them
    [dan] = (await m("open_nodes", names=["Dan"]))["entities"]
    assert "tags" not in dan and "importance" not in dan
    # Lower-cased, not sorted: the audit's ["Work", "Important"] reads back in its order.
    [work] = await m("create_entities", entities=[{**entity("Wes"), "tags": ["Work", "Important"]}])
    assert work["tags"] == ["work", "important"]
    # Out of range, or no number at all (a boolean was stored as 1.0, a text as its number): refused, as
    # set_importance refuses them.
    for importance in (11, True, "5"):
        refused = await m.error("create_entities", entities=[{**entity("Eve"), "importance": importance}])
        assert refused["error_code"] == "INVALID_INPUT" and "importance" in json.dumps(refused["details"])
    assert [e["name"] for e in await m.entities()] == ["Carol", "Dan", "Wes"]


@pytest.mark.one_tier
async def test_a_configuration_carried_over_is_told_where_its_memory_file_went(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """An MCP client's entry moved from the official server keeps its MEMORY_FILE_PATH: `serve --profile memory`
    says at start that the file is not read, and the command it names brings the file's contents over."""
    memory_file = tmp_path / "memory.jsonl"
    memory_file.write_text(json.dumps({"type": "entity", "name": "Ada", "entityType": "person", "observations": ["x"]}))
    env = {**settings_env(settings), "MEMORY_FILE_PATH": str(memory_file)}
    command = served_at_once(env).split("To bring its contents over once: ", 1)[1].split("\n", 1)[0]
    assert command == f"write-gate import {memory_file}"
    imported = run_write_gate(*command.split()[1:], env=settings_env(settings))
    assert imported.returncode == 0, imported.stderr
    async with open_client(settings, "in_process", profile="memory") as client:
        assert [e["name"] for e in (await Memory(client)("read_graph"))["entities"]] == ["Ada"]


@pytest.mark.one_tier
async def test_a_client_configured_as_for_the_official_server_gets_one_graph_per_memory_file(
    settings: Settings, tmp_path: Path
) -> None:
    """A client that starts the official server with MEMORY_FILE_PATH and nothing of ours: the file chooses the
    data folder (beside it), what it held is there at first start, the same file is the same graph after a restart,
    and another file is another graph, empty (as each test of an official-server suite expects its own)."""
    memory_file = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["x"]},
        {"type": "entity", "name": "Bo", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Ada", "to": "Bo", "relationType": "knows"},
    ]
    memory_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bare = {k: v for k, v in settings_env(settings).items() if k != "WRITE_GATE_DATA_DIR"}

    def session(file: Path) -> StdioServerParameters:
        command, *args = write_gate_argv("serve", "--profile", "memory")
        return StdioServerParameters(command=command, args=args, env={**bare, "MEMORY_FILE_PATH": str(file)})

    async with Client(session(memory_file), read_timeout_seconds=60) as client:
        m = Memory(client)
        graph = await m("read_graph")
        assert [e["name"] for e in graph["entities"]] == ["Ada", "Bo"] and len(graph["relations"]) == 1
        await m("create_entities", entities=[entity("Cy")])
    assert (tmp_path / "memory.jsonl.write-gate").is_dir()
    async with Client(session(memory_file), read_timeout_seconds=60) as client:  # the same file again
        assert [e["name"] for e in await Memory(client).entities()] == ["Ada", "Bo", "Cy"]
    async with Client(session(tmp_path / "other.jsonl"), read_timeout_seconds=60) as client:
        assert await Memory(client)("read_graph") == {
            "entities": [],
            "relations": [],
            "next_cursor": None,
            "truncated": [],
        }


def served_at_once(env: dict[str, str]) -> str:
    """`serve --profile memory` with its stdin closed: it starts, finds no client and ends; what it said at start."""
    served = subprocess.run(
        write_gate_argv("serve", "--profile", "memory"),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode == 0, served.stderr
    return served.stderr


@pytest.mark.one_tier
async def test_a_memory_file_with_lines_the_gate_refuses_is_served_and_what_it_left_out_is_listed(
    settings: Settings, tmp_path: Path
) -> None:
    """Files the official server wrote hold what the gate refuses (a relation to an entity the file lacks, a type no
    registry holds, a line of no known type): the first start serves the rest, at once and at every start after,
    and says each time how many lines are left out and where they are listed; an import cut short runs again."""
    memory_file = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["x"]},
        {"type": "entity", "name": "Bo", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Ada", "to": "Bo", "relationType": "knows"},
        {"type": "relation", "from": "Ada", "to": "Ghost", "relationType": "knows"},
        {"type": "relation", "from": "Ada", "to": "Bo", "relationType": "zorbles_with"},
        {"type": "note", "text": "?"},
    ]
    memory_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {k: v for k, v in settings_env(settings).items() if k != "WRITE_GATE_DATA_DIR"}
    env["MEMORY_FILE_PATH"] = str(memory_file)
    folder = tmp_path / "memory.jsonl.write-gate"

    def start() -> str:
        return served_at_once(env)

    for _ in range(2):  # the first start imports, the second finds the folder: both say the same
        told = start()
        assert "3 of its line(s) were not imported" in told and str(folder / "memory-file-import.json") in told
    report = json.loads((folder / "memory-file-import.json").read_text())
    # The note's key beyond the official ones makes it memory-mcp's file (import_sniffing): its report says errors.
    assert sorted(r["line"] for r in report["errors"]) == [4, 5, 6]
    command, *args = write_gate_argv("serve", "--profile", "memory")
    async with Client(StdioServerParameters(command=command, args=args, env=env), read_timeout_seconds=60) as client:
        m = Memory(client)
        assert [e["name"] for e in await m.entities()] == ["Ada", "Bo"]
        assert await m.relations() == {("Ada", "Bo", "KNOWS")}
        await m("delete_entities", entityNames=["Bo"])
    start()  # a finished import is not run again: Bo stays deleted
    async with Client(StdioServerParameters(command=command, args=args, env=env), read_timeout_seconds=60) as client:
        assert [e["name"] for e in await Memory(client).entities()] == ["Ada"]
    (folder / "memory-file-import.pending").touch()  # as an import the engine's failure cut short leaves it
    start()
    assert not (folder / "memory-file-import.pending").exists()
    async with Client(StdioServerParameters(command=command, args=args, env=env), read_timeout_seconds=60) as client:
        assert [e["name"] for e in await Memory(client).entities()] == ["Ada", "Bo"]


# 8.2 relations


async def test_relations_create_skip_and_distinguish(m: Memory) -> None:
    await m("create_entities", entities=[entity("A"), entity("B")])
    assert await m("create_relations", relations=[rel("A", "B")]) == [rel("A", "B", "KNOWS")]
    assert await m("create_relations", relations=[rel("A", "B")]) == []
    assert await m("create_relations", relations=[rel("A", "B", "likes")]) == [rel("A", "B", "LIKES")]
    assert await m("create_relations", relations=[rel("B", "A")]) == [rel("B", "A", "KNOWS")]
    assert await m.relations() == {("A", "B", "KNOWS"), ("A", "B", "LIKES"), ("B", "A", "KNOWS")}


async def test_unregistered_relation_type_is_rejected_and_nothing_written(m: Memory) -> None:
    await m("create_entities", entities=[entity("A"), entity("B")])
    error = await m.error("create_relations", relations=[rel("A", "B"), rel("A", "B", "DIRECTED")])
    assert error["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert [r["index"] for r in error["details"]["rejected"]] == [1]
    assert await m.relations() == set()


async def test_an_inverse_relation_type_is_refused_not_kept_with_its_meaning_reversed(
    settings: Settings, graph: GraphBackend
) -> None:
    """The bundled registry (migrations) absorbed USED_BY into USES and BUILT_BY into BUILT until 0018, so `Lib
    used_by App` was kept as `Lib USES App`. An inverse type is now refused; a type of the same direction remaps."""
    await migrate(graph)
    async with open_client(settings, "in_process", profile="memory") as client:
        m = Memory(client)
        await m("create_entities", entities=[entity("Lib", "technology"), entity("App", "project"), entity("Ann")])
        for inverse, known in (("used_by", "USES"), ("built_by", "BUILT")):
            error = await m.error("create_relations", relations=[rel("Lib", "App", inverse)])
            [item] = error["details"]["rejected"]
            assert item["error_code"] == "SCHEMA_UNKNOWN_LABEL" and known in item["details"]["known_types"]
        assert await m("create_relations", relations=[rel("App", "Lib", "depends_on")]) == [rel("App", "Lib", "USES")]
        assert await m.relations() == {("App", "Lib", "USES")}


async def test_memory_mcp_s_merge_by_names_keeps_the_target_and_moves_the_relations(
    settings: Settings, memory: Client
) -> None:
    """Seed 004's merge_entities(entityNames, targetName?): the target survives under its own name, the others'
    relations move to it, they leave the graph, and the answer holds the merged entity."""
    m = Memory(memory)
    smith = {**entity("Alice Smith", observations=["a1", "shared"]), "tags": ["t1"], "importance": 2}
    smyth = {**entity("Alice Smyth", observations=["a2", "shared"]), "tags": ["t2"], "importance": 8}
    await m("create_entities", entities=[smith, smyth, entity("Carl")])
    await m("create_relations", relations=[rel("Carl", "Alice Smyth")])
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        by_names = {"entityNames": ["Alice Smyth", "Alice Smith"], "targetName": "Alice Smith"}
        merged = await ok(everything, "merge_entities", by_names)
        # Seed 004's merged entity: the observations and tags of both, each once; the greater importance.
        kept = merged["entity"]
        assert (kept["name"], kept["observations"]) == ("Alice Smith", ["a1", "shared", "a2"])
        assert (kept["properties"]["tags"], kept["properties"]["importance"]) == (["t1", "t2"], 8)
        assert merged["survivor"] == {"label": "Person", "merge_keys": {"name": "Alice Smith"}}
        [gone] = merged["merged"]
        assert gone["merge_keys"] == {"name": "Alice Smyth"}
        assert gone["properties_combined"] == ["importance", "observations", "tags"]
        assert not {c["property"] for c in merged["conflicts"]} & {"observations", "tags", "importance"}
        found = await ok(everything, "search_nodes", {"query": "a2"})
        assert [e["name"] for e in found["entities"]] == ["Alice Smith"]  # the combined observations are searched
        history = await ok(everything, "get_history", {"label": "Person", "merge_keys": {"name": "Alice Smith"}})
        merge_id = history["changes"][0]["change_id"]  # newest first: the merge's
        values = {c["property"]: (c["before"], c["after"]) for c in history["changes"] if c["change_id"] == merge_id}
        assert values["observations"] == (["a1", "shared"], ["a1", "shared", "a2"])
        assert values["importance"] == (2, 8)
        for wrong, why in (
            ({"entityNames": ["Carl", "Nobody"]}, "ENTITY_NOT_FOUND"),
            ({"entityNames": ["Carl", "Alice Smith"], "targetName": "Alice Smyth"}, "INVALID_INPUT"),  # its alias
            ({"entityNames": ["Carl"]}, "INVALID_INPUT"),
            (
                {
                    "entityNames": ["Carl", "Alice Smith"],
                    "survivor": {"label": "Person", "merge_keys": {"name": "Carl"}},
                },
                "INVALID_INPUT",
            ),
        ):
            assert (await rejected(everything, "merge_entities", wrong))["error_code"] == why, wrong
    assert [e["name"] for e in await m.entities()] == ["Alice Smith", "Carl"]
    assert await m.relations() == {("Carl", "Alice Smith", "KNOWS")}


async def test_memory_mcp_s_merge_under_a_new_name_makes_it_with_the_first_one_s_type(
    settings: Settings, memory: Client
) -> None:
    """Seed 004: `name: targetName || entityNames[0]`, `entityType: first.entityType`: a targetName no entity has
    is the merged entity, made with the first one's type; the named ones leave, their relations move to it. A
    targetName another entity has merges into that one."""
    m = Memory(memory)
    await m(
        "create_entities",
        entities=[
            {**entity("Bob", "engineer", ["b1", "both"]), "importance": 3},
            {**entity("Robert", "person", ["both", "r1"]), "tags": ["x"]},
            entity("Carl"),
            entity("Dora"),
        ],
    )
    await m("create_relations", relations=[rel("Carl", "Robert"), rel("Bob", "Dora")])
    types = {e["name"]: e["entityType"] for e in await m.entities()}
    assert types["Bob"] != types["Robert"]  # "engineer" is no registered type: the fallback's
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        merged = await ok(everything, "merge_entities", {"entityNames": ["Bob", "Robert"], "targetName": "Bobby"})
        kept = merged["entity"]
        assert (kept["name"], kept["entityType"], kept["observations"]) == ("Bobby", types["Bob"], ["b1", "both", "r1"])
        assert (kept["properties"]["tags"], kept["properties"]["importance"]) == (["x"], 3)
        assert [gone["merge_keys"]["name"] for gone in merged["merged"]] == ["Bob", "Robert"]
        assert sorted(e["name"] for e in await m.entities()) == ["Bobby", "Carl", "Dora"]
        assert await m.relations() == {("Carl", "Bobby", "KNOWS"), ("Bobby", "Dora", "KNOWS")}
        # Into another entity that has the name: Dora stays, and takes Carl.
        into = await ok(everything, "merge_entities", {"entityNames": ["Carl", "Bobby"], "targetName": "Dora"})
        assert into["survivor"]["merge_keys"] == {"name": "Dora"}
        assert [gone["merge_keys"]["name"] for gone in into["merged"]] == ["Carl", "Bobby"]
    assert [e["name"] for e in await m.entities()] == ["Dora"]


# 8.3 observations


async def test_add_observations(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice", observations=["Is a student"])])
    added = await m("add_observations", observations=[{"entityName": "Alice", "contents": ["Likes pizza"]}])
    assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
    assert (await m.entities("Alice"))[0]["observations"] == ["Is a student", "Likes pizza"]


async def test_add_observations_skips_duplicates(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice", observations=["Is a student"])])
    added = await m(
        "add_observations", observations=[{"entityName": "Alice", "contents": ["Is a student", "Likes pizza"]}]
    )
    assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
    assert (await m.entities("Alice"))[0]["observations"] == ["Is a student", "Likes pizza"]


async def test_add_observations_to_missing_entity_fails(m: Memory) -> None:
    error = await m.error("add_observations", observations=[{"entityName": "Nonexistent", "contents": ["anything"]}])
    assert error["error_code"] == "ENTITY_NOT_FOUND"
    assert error["message"] == "Entity with name Nonexistent not found"


async def test_delete_observations(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice", observations=["Is a student", "Likes pizza"])])
    done = await m("delete_observations", deletions=[{"entityName": "Alice", "observations": ["Likes pizza"]}])
    assert done == "Observations deleted successfully"
    assert (await m.entities("Alice"))[0]["observations"] == ["Is a student"]


async def test_delete_observations_on_missing_entity_is_a_silent_no_op(m: Memory) -> None:
    done = await m("delete_observations", deletions=[{"entityName": "Nonexistent", "observations": ["anything"]}])
    assert done == "Observations deleted successfully"


# 8.4 deletes


async def test_delete_entity_cascades_from_and_to(m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice"), entity("Bob"), entity("Carol")])
    await m("create_relations", relations=[rel("Alice", "Bob"), rel("Bob", "Alice", "reports to"), rel("Bob", "Carol")])
    assert await m("delete_entities", entityNames=["Alice"]) == "Entities deleted successfully"
    assert sorted(e["name"] for e in await m.entities()) == ["Bob", "Carol"]
    assert await m.relations() == {("Bob", "Carol", "KNOWS")}


async def test_delete_relations_removes_only_the_exact_one(m: Memory) -> None:
    await m("create_entities", entities=[entity("A"), entity("B")])
    await m("create_relations", relations=[rel("A", "B", "knows"), rel("A", "B", "likes")])
    done = await m("delete_relations", relations=[rel("A", "B", "knows"), rel("A", "B", "NOT_REGISTERED")])
    assert done == "Relations deleted successfully"
    assert await m.relations() == {("A", "B", "LIKES")}


async def test_delete_missing_entities_is_fine(m: Memory) -> None:
    assert await m("delete_entities", entityNames=["Ghost"]) == "Entities deleted successfully"


# 8.5 search


@pytest.fixture
async def abc(m: Memory) -> Memory:
    await m(
        "create_entities",
        entities=[
            entity("John_Smith", "person", ["Works at Google"]),
            entity("B", "thing"),
            entity("C", "thing"),
            entity("Ünïcødé 東京", "person", ["naïve café"]),
        ],
    )
    await m("create_relations", relations=[rel("John_Smith", "B"), rel("B", "C")])
    return m


async def names(result: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in result["entities"])


async def test_search_by_name_type_and_observation_case_insensitively(abc: Memory) -> None:
    assert "John_Smith" in await names(await abc("search_nodes", query="john"))
    assert "John_Smith" in await names(await abc("search_nodes", query="PERSON"))
    assert "John_Smith" in await names(await abc("search_nodes", query="google"))
    assert await empty(await abc("search_nodes", query="xyznonexistent"))


async def empty(result: dict[str, Any]) -> bool:
    return result["entities"] == [] and result["relations"] == [] and result["next_cursor"] is None


async def test_search_answers_matches_and_every_relation_touching_one(abc: Memory) -> None:
    """Seed 001 8.5: a relation comes along when either end matches; the other end is not listed."""
    result = await abc("search_nodes", query="john")
    assert await names(result) == ["John_Smith"]
    assert {(r["from"], r["to"]) for r in result["relations"]} == {("John_Smith", "B")}
    result = await abc("search_nodes", query="b")  # matches B (and the ß-free rest only by 'b')
    rels = {(r["from"], r["to"]) for r in result["relations"]}
    assert {("John_Smith", "B"), ("B", "C")} <= rels


async def test_search_unicode(abc: Memory) -> None:
    assert await names(await abc("search_nodes", query="東京")) == ["Ünïcødé 東京"]
    assert await names(await abc("search_nodes", query="CAFÉ")) == ["Ünïcødé 東京"]


async def test_search_does_not_match_provenance(abc: Memory) -> None:
    assert await empty(await abc("search_nodes", query="llm"))


# 8.6 open


async def test_open_nodes(abc: Memory) -> None:
    """Seed 001 8.6: open [A] answers A, not B, and the relation A->B."""
    result = await abc("open_nodes", names=["John_Smith"])
    assert await names(result) == ["John_Smith"]
    assert {(r["from"], r["to"]) for r in result["relations"]} == {("John_Smith", "B")}
    assert await empty(await abc("open_nodes", names=["john_smith"]))


async def test_open_several_nodes_gets_every_connecting_relation(m: Memory) -> None:
    await m("create_entities", entities=[entity("A"), entity("B"), entity("C")])
    await m("create_relations", relations=[rel("A", "B"), rel("B", "C"), rel("A", "C")])
    result = await m("open_nodes", names=["A", "C"])
    assert [e["name"] for e in result["entities"]] == ["A", "C"]
    assert {(r["from"], r["to"]) for r in result["relations"]} == {("A", "B"), ("B", "C"), ("A", "C")}


# 8.7 persistence, and the gate underneath


@pytest.mark.one_tier
async def test_data_survives_a_new_session(settings: Settings, m: Memory) -> None:
    await m("create_entities", entities=[entity("Alice", observations=["x"]), entity("Bob")])
    await m("create_relations", relations=[rel("Alice", "Bob")])
    async with open_client(settings, "stdio", profile="memory") as again:
        other = Memory(again)
        assert sorted(e["name"] for e in await other.entities()) == ["Alice", "Bob"]
        assert await other.relations() == {("Alice", "Bob", "KNOWS")}


async def test_a_bad_entity_rejects_the_whole_call(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    strict = settings.model_copy(update={"unknown_label_policy": "reject"})
    async with open_client(strict, "in_process", profile="memory") as client:
        m = Memory(client)
        error = await m.error("create_entities", entities=[entity("Ok"), {"name": "Bad", "entityType": "!!!"}])
        assert error["error_code"] == "SCHEMA_UNKNOWN_LABEL" and error["details"]["rejected"][0]["index"] == 1
        assert await m.entities() == []


async def test_any_entity_type_is_stored_and_stays_searchable_as_written(m: Memory, graph: GraphBackend) -> None:
    """As the official server: an empty or free-text type is accepted; the gate files it under the fallback
    label and keeps the type as written, so a search for it still finds the entity."""
    created = await m(
        "create_entities",
        entities=[
            {"name": "Paris", "entityType": "city", "observations": []},
            {"name": "Nowhere", "entityType": "", "observations": []},
            {"name": "Big Apple", "entityType": "New York City", "observations": []},
            {"name": "Odd", "entityType": "!!!", "observations": []},
        ],
    )
    assert [e["entityType"] for e in created] == ["Entity"] * 4
    for query, name in (("city", "Paris"), ("CITY", "Paris"), ("york city", "Big Apple"), ("!!!", "Odd")):
        assert name in await names(await m("search_nodes", query=query)), query
    rows = await graph.read(Statement("MATCH (n:Entity) RETURN n.name AS n, n._schema_remap_from AS f ORDER BY n"))
    assert [(r["n"], r["f"]) for r in rows] == [
        ("Big Apple", ":New York City"),
        ("Nowhere", ":"),
        ("Odd", ":!!!"),
        ("Paris", ":city"),
    ]


async def test_provenance_can_be_configured(settings: Settings, graph: GraphBackend) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "memory"]))
    configured = settings.model_copy(
        update={"memory_source": "crm-sync", "memory_extraction_method": "parsed", "memory_reliability": 0.5}
    )
    async with open_client(configured, "in_process", profile="memory") as client:
        await Memory(client)("create_entities", entities=[entity("Ada")])
    [row] = await graph.read(Statement("MATCH (n:Person {name: 'Ada'}) RETURN n"))
    assert (row["n"]["source"], row["n"]["extraction_method"]) == ("crm-sync", "parsed")
    assert row["n"]["confidence"] == pytest.approx(0.425)


async def test_search_follows_observation_edits(m: Memory) -> None:
    """Search text is kept current by every statement that changes a text: an added observation is found,
    a deleted one no longer is (FalkorDB needs a WITH to see a node's new values later in a statement)."""
    await m("create_entities", entities=[entity("Ada", observations=["writes programs"])])
    await m("add_observations", observations=[{"entityName": "Ada", "contents": ["likes tea"]}])
    assert await names(await m("search_nodes", query="TEA")) == ["Ada"]
    await m("delete_observations", deletions=[{"entityName": "Ada", "observations": ["likes tea"]}])
    assert await names(await m("search_nodes", query="tea")) == []
    assert await names(await m("search_nodes", query="programs")) == ["Ada"]


async def test_an_official_server_users_first_calls_fit_the_shipped_registry(
    settings: Settings, graph: GraphBackend
) -> None:
    """With the migrations a fresh `serve` applies (core and memory registries), seed 001's own examples and
    everyday types are accepted as they are written."""
    from write_gate.store.migrations import migrate

    await migrate(graph)
    async with open_client(settings, "in_process", profile="memory") as client:
        m = Memory(client)
        people = [entity(n, "person") for n in ("Alice", "Bob", "Carol")]
        await m("create_entities", entities=[*people, entity("Paris", "city"), entity("Acme", "company")])
        said = await m(
            "create_relations",
            relations=[
                rel("Alice", "Bob", "knows"),
                rel("Alice", "Bob", "likes"),
                rel("Bob", "Carol", "reports_to"),
                rel("Alice", "Acme", "works at"),
                rel("Carol", "Paris", "lives in"),
                rel("Carol", "Acme", "manages"),
            ],
        )
    assert [r["relationType"] for r in said] == ["KNOWS", "LIKES", "REPORTS_TO", "WORKS_FOR", "LOCATED_IN", "MANAGES"]
    rows = await graph.read(Statement("MATCH (n {name: 'Paris'}) RETURN labels(n) AS l"))
    assert rows[0]["l"] == ["Location"]


async def test_find_duplicates_scores_as_memory_mcp_does(settings: Settings, memory: Client) -> None:
    """Seed 004's score (name 0.4, type 0.3, observations 0.2, tags 0.1) in the memory profile: near names with the
    same observations group at the default 0.8; near names alone do not (0.66), nor does another type; groups are
    memory-mcp's, greedy. The gate profile keeps its own score, by name, on the same graph."""
    m = Memory(memory)
    await m(
        "create_entities",
        entities=[
            entity("John Smith", observations=["works at Acme"]),
            entity("Jon Smith", observations=["works at Acme"]),
            entity("Jon Smyth", observations=["likes tea"]),
            entity("Jon Smith Ltd", "company", observations=["works at Acme"]),
        ],
    )
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        result = await everything.call_tool("find_duplicates", {})
        assert not result.is_error
        assert json.loads(result.content[0].text) == [["John Smith", "Jon Smith"]]
        (pair,) = result.structured_content["pairs"]
        assert pair["score"] == 0.86 and {s["signal"]: s["score"] for s in pair["signals"]} == {
            "name_similarity": 0.9,
            "same_type": 1.0,
            "shared_observations": 1.0,
            "shared_tags": 0.0,
        }
        lower = await everything.call_tool("find_duplicates", {"threshold": 0.6})
        assert json.loads(lower.content[0].text) == [["John Smith", "Jon Smith", "Jon Smyth"]]
        # memory-mcp groups greedily in creation order, not transitively: aaaa takes aaab, and aabb (0.7 to aaaa,
        # 0.8 to aaab, already taken) is left out; the structured answer's groups are the text's, its pairs all.
        await m("create_entities", entities=[entity(name, "idea", ["same"]) for name in ("aaaa", "aaab", "aabb")])
        chain = await everything.call_tool("find_duplicates", {"threshold": 0.79, "labels": ["Entity"]})
        assert json.loads(chain.content[0].text) == [["aaaa", "aaab"]] == chain.structured_content["groups"]
        assert {tuple(n["name"] for n in p["nodes"]) for p in chain.structured_content["pairs"]} == {
            ("aaaa", "aaab"),
            ("aaab", "aabb"),
        }
        # Groups of every pair that passes, whatever `limit` cuts from the pairs answered (an audit met one group of
        # 15 where memory-mcp answers six, 60 near names and the default limit of 50 pairs).
        await m("create_entities", entities=[entity(f"gizmo{i}", "thing", ["same"]) for i in range(5)])
        cut = await everything.call_tool("find_duplicates", {"threshold": 0.83, "labels": ["Entity"], "limit": 2})
        assert json.loads(cut.content[0].text) == [[f"gizmo{i}" for i in range(5)]] == cut.structured_content["groups"]
        assert len(cut.structured_content["pairs"]) == 2 and cut.structured_content["more"]
    async with open_client(every_toolset(settings), "in_process") as gate:
        by_name = await gate.call_tool("find_duplicates", {"labels": ["Person"]})
        names = {tuple(n["name"] for n in p["nodes"]) for p in by_name.structured_content["pairs"]}
        assert ("Jon Smith", "Jon Smyth") in names


async def test_a_compress_graph_dry_run_stops_where_the_run_would(settings: Settings, memory: Client) -> None:
    """Two duplicates under two parents cannot be merged (the survivor would have two: CONFLICT, one_parent): the
    run stops at their group, and its dry run says the same, where it had planned the merge."""
    m = Memory(memory)
    john = entity("John Smith", observations=["works at Acme", "likes tea", "lives in Oslo"])
    jon = entity("Jon Smith", observations=["works at Acme", "likes tea"])
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        await m("create_entities", entities=[john, jon, entity("Acme"), entity("Oslo")])
        await ok(everything, "set_entity_parent", {"entityName": "John Smith", "parentName": "Oslo"})
        await ok(everything, "set_entity_parent", {"entityName": "Jon Smith", "parentName": "Acme"})
        before = await m("read_graph")
        for dry_run in (True, False):
            refused = await rejected(everything, "compress_graph", {"threshold": 0.7, "dryRun": dry_run})
            assert (refused["error_code"], refused["details"]["reason"]) == ("CONFLICT", "one_parent"), dry_run
            assert (
                refused["details"]["stopped_at"] == ["John Smith", "Jon Smith"]
                and refused["details"]["merged_before"] == []
            ), dry_run
        assert await m("read_graph") == before


async def test_compress_graph_merges_what_find_duplicates_groups(settings: Settings, memory: Client) -> None:
    """memory-mcp's compress_graph (seed 004): find_duplicates' groups at the threshold, each merged into its first
    name (relations moved to it, observations combined), answered as a CompressionResult; a dry run reports the
    same and changes nothing; a threshold above the score and an empty graph merge nothing."""
    m = Memory(memory)

    async def compress(client: Client, **args: Any) -> dict[str, Any]:
        result = await client.call_tool("compress_graph", args)
        assert not result.is_error, result.structured_content
        text = json.loads(result.content[0].text)  # memory-mcp's CompressionResult; `status`, `more` the gate's
        assert result.structured_content["status"] == "compressed" and result.structured_content["more"] is False
        assert text == {k: v for k, v in result.structured_content.items() if k not in ("status", "more")}
        return text

    zeros = {
        "duplicatesFound": 0,
        "entitiesMerged": 0,
        "observationsCompressed": 0,
        "relationsConsolidated": 0,
        "spaceFreed": 0,
        "mergedEntities": [],
    }
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        assert await compress(everything) == zeros  # an empty graph
        # 0.36 for the names, 0.3 the type, 0.1333 the observations (2 of 3), 0.1 the tags: 0.8933.
        john = {**entity("John Smith", observations=["works at Acme", "likes tea", "lives in Oslo"]), "tags": ["x"]}
        jon = {**entity("Jon Smith", observations=["works at Acme", "likes tea"]), "tags": ["x"]}
        await m("create_entities", entities=[john, jon, entity("Bob"), entity("Carol")])
        await m(
            "create_relations",
            relations=[
                rel("John Smith", "Bob"),
                rel("Jon Smith", "Bob"),
                rel("Carol", "Jon Smith"),
                rel("John Smith", "Jon Smith"),
            ],
        )
        before = await m("read_graph")
        assert await compress(everything, threshold=0.9) == zeros  # above the pair's score
        planned = await compress(everything, dryRun=True)
        assert await m("read_graph") == before  # a dry run changes nothing
        assert planned["mergedEntities"] == [{"kept": "John Smith", "merged": ["Jon Smith"]}]
        # Jon's three relations: KNOWS Bob folded into John's, Carol's moved, John's to him dropped (a loop now).
        assert {k: v for k, v in planned.items() if k != "spaceFreed"} == {
            "duplicatesFound": 2,
            "entitiesMerged": 1,
            "observationsCompressed": 2,
            "relationsConsolidated": 3,
            "mergedEntities": [{"kept": "John Smith", "merged": ["Jon Smith"]}],
        }
        assert planned["spaceFreed"] > len(json.dumps(jon))  # Jon as memory-mcp stores him, stamps and all
        done = await compress(everything)
        assert done == planned  # what the dry run said, done
        rb.assert_matches(done, json.loads(rb.block("answer:compress_graph#memory").text), "docs/tools/duplicates.md")
    entities = {e["name"]: e for e in await m.entities()}
    assert set(entities) == {"John Smith", "Bob", "Carol"}
    assert entities["John Smith"]["observations"] == ["works at Acme", "likes tea", "lives in Oslo"]
    assert await m.relations() == {("John Smith", "Bob", "KNOWS"), ("Carol", "John Smith", "KNOWS")}
    [opened] = (await m("open_nodes", names=["Jon Smith"]))["entities"]  # the merged name leads to the survivor
    assert opened["name"] == "John Smith"
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        assert await compress(everything) == zeros  # nothing left to merge
    async with open_client(every_toolset(settings), "in_process") as gate:  # memory-mcp's tool, not the gate's
        assert "compress_graph" not in {t.name for t in (await gate.list_tools()).tools}


async def test_an_entity_with_a_parent_reads_with_its_parent_id(settings: Settings, memory: Client) -> None:
    """memory-mcp's Entity carries `parentId`: open_nodes, search_nodes and read_graph answer it for an entity that
    has a parent (text and structured content), and leave the key out for one without, as the official server's
    answer is (its clients compare those bytes)."""
    m = Memory(memory)
    await m("create_entities", entities=[entity("Alice"), entity("Kid"), entity("Other")])
    await m("create_relations", relations=[rel("Kid", "Other")])  # before the parent link: answered first
    [before] = (await m("open_nodes", names=["Alice"]))["entities"]
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        await ok(everything, "set_entity_parent", {"entityName": "Kid", "parentName": "Alice"})
    opened = await memory.call_tool("open_nodes", {"names": ["Kid", "Alice"]})
    by_name = {e["name"]: e for e in json.loads(opened.content[0].text)["entities"]}
    assert by_name["Kid"]["parentId"] == "Alice" and "parentId" not in by_name["Alice"]
    assert [e.get("parentId") for e in opened.structured_content["entities"]] == [
        by_name[e["name"]].get("parentId") for e in opened.structured_content["entities"]
    ]
    assert list(by_name["Kid"])[:4] == ["name", "entityType", "observations", "parentId"]  # memory-mcp's order
    assert json.dumps(by_name["Alice"]) == json.dumps(before)  # the parent's own answer: as before, key for key
    found = await m("search_nodes", query="Kid")
    assert [(e["name"], e.get("parentId")) for e in found["entities"]] == [("Kid", "Alice")]
    beside = await m("search_nodes", query="Other", neighbors=True)  # a neighbour's parent is read for it
    assert [(e["name"], e.get("parentId")) for e in beside["entities"]] == [("Other", None), ("Kid", "Alice")]
    everyone = {e["name"]: e.get("parentId") for e in (await m("read_graph"))["entities"]}
    assert everyone == {"Alice": None, "Kid": "Alice", "Other": None}
    # A page of relations that leaves the parent link out (cut by relations_limit, or on the next page) still
    # names the parent: those entities' parents are read in one statement.
    first = await m("open_nodes", names=["Kid"], relations_limit=1)
    assert [r["relationType"] for r in first["relations"]] == ["KNOWS"] and first["next_cursor"]
    assert first["entities"][0]["parentId"] == "Alice"
    rest = await m("open_nodes", names=["Kid"], relations_limit=1, cursor=first["next_cursor"])
    assert [r["relationType"] for r in rest["relations"]] == ["CHILD_OF"] and rest["entities"][0]["parentId"] == "Alice"
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        # memory-mcp's other answers of an entity carry it too: its searches' and get_parent's (the parent's own).
        await m("create_entities", entities=[entity("Gran")])
        await ok(everything, "set_entity_parent", {"entityName": "Alice", "parentName": "Gran"})
        for tool, args in (
            ("search_nodes_ranked", {"query": "kid"}),
            ("boolean_search", {"query": "name:kid"}),
            ("fuzzy_search", {"query": "Kid"}),
        ):
            answer = await everything.call_tool(tool, args)
            assert not answer.is_error, answer.structured_content
            [hit] = json.loads(answer.content[0].text) if tool == "search_nodes_ranked" else [None]
            found = [hit["entity"]] if hit else json.loads(answer.content[0].text)["entities"]
            assert [(e["name"], e.get("parentId")) for e in found] == [("Kid", "Alice")], tool
        parent = await everything.call_tool("get_parent", {"entityName": "Kid"})
        assert json.loads(parent.content[0].text)["parentId"] == "Gran"
        top = await everything.call_tool("get_parent", {"entityName": "Alice"})
        assert "parentId" not in json.loads(top.content[0].text)  # Gran has none
        await ok(everything, "set_entity_parent", {"entityName": "Kid", "parentName": None})
    [kid] = (await m("open_nodes", names=["Kid"]))["entities"]
    assert "parentId" not in kid  # no parent any more: the official answer again


async def test_setting_a_parent_modifies_the_entity(settings: Settings, memory: Client) -> None:
    """Seed 004's setEntityParent sets the entity's parentId and its lastModified (and so does removing it): the
    gate wrote the link and left the entity's stamp at its creation."""
    m = Memory(memory)
    await m("create_entities", entities=[entity("Kid"), entity("Mom")])
    [created] = (await m("open_nodes", names=["Kid"]))["entities"]
    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        stamps = []
        for parent in ("Mom", None):
            await anyio.sleep(0.01)
            answer = await everything.call_tool("set_entity_parent", {"entityName": "Kid", "parentName": parent})
            assert not answer.is_error, answer.structured_content
            kid = json.loads(answer.content[0].text)
            assert kid.get("parentId") == parent and kid["createdAt"] < kid["lastModified"], kid
            stamps.append(kid["lastModified"])
        assert stamps[0] < stamps[1]
        [read] = (await m("open_nodes", names=["Kid"]))["entities"]
        assert read["properties"]["last_updated"] == stamps[1] != created["properties"]["last_updated"]


async def test_memory_mcp_s_tools_answer_their_text_as_memory_mcp_returns_it(
    settings: Settings, memory: Client
) -> None:
    """Seed 004's return types, in the text a client written for memory-mcp parses: SearchResult[] for the ranked
    search, string[][] for duplicates, Entity[] for the hierarchy's lists, Entity for a merge. The structured content
    stays the gate's answer (paging, the pairs); the gate profile's text is its structured content, as before."""
    m = Memory(memory)
    people = [
        entity("Alice Smith", observations=["engineer at Acme"]),
        entity("Alice Smyth", observations=["engineer at Acme"]),
        entity("Bob", observations=["designer"]),
    ]
    await m("create_entities", entities=people[:1])
    await anyio.sleep(0.01)  # stamped a few milliseconds apart: the merge keeps the earlier
    await m("create_entities", entities=people[1:])

    async def text(client: Client, tool: str, args: dict[str, Any]) -> Any:
        result = await client.call_tool(tool, args)
        assert not result.is_error, result.structured_content
        return json.loads(result.content[0].text), result.structured_content

    async with open_client(every_toolset(settings), "in_process", profile="memory") as everything:
        hits, structured = await text(everything, "search_nodes_ranked", {"query": "engineer"})
        assert isinstance(hits, list) and {h["entity"]["name"] for h in hits} == {"Alice Smith", "Alice Smyth"}
        assert all(set(h) == {"entity", "score", "matchedFields"} and h["matchedFields"] for h in hits)
        assert "next_cursor" in structured and [h["score"] for h in hits] == [h["score"] for h in structured["results"]]
        groups, structured = await text(everything, "find_duplicates", {"threshold": 0.7})
        assert groups == structured["groups"] and sorted(groups[0]) == ["Alice Smith", "Alice Smyth"]
        moved, structured = await text(
            everything, "set_entity_parent", {"entityName": "Bob", "parentName": "Alice Smith"}
        )
        assert (moved["name"], moved["observations"], moved["parentId"]) == ("Bob", ["designer"], "Alice Smith")
        assert structured == {
            "entityName": "Bob",
            "entityType": "Person",
            "parentName": "Alice Smith",
            "parentType": "Person",
        }
        children, _ = await text(everything, "get_children", {"entityName": "Alice Smith"})
        assert [child["name"] for child in children] == ["Bob"] and children[0]["entityType"] == "Person"
        assert children[0]["parentId"] == "Alice Smith" and "parent_names" not in _
        descendants, _ = await text(everything, "get_descendants", {"entityName": "Alice Smith"})
        assert [(d["name"], d["parentId"]) for d in descendants] == [("Bob", "Alice Smith")]
        ancestors, _ = await text(everything, "get_ancestors", {"entityName": "Bob"})
        # An entity without a parent has no parentId (memory-mcp's `parentName || undefined`), not a null.
        assert [(a["name"], "parentId" in a) for a in ancestors] == [("Alice Smith", False)]
        parent, structured = await text(everything, "get_parent", {"entityName": "Bob"})
        assert parent["name"] == "Alice Smith" and structured["parent"]["name"] == "Alice Smith"
        assert (await text(everything, "get_parent", {"entityName": "Alice Smith"}))[0] is None  # a root
        unset, _ = await text(everything, "set_entity_parent", {"entityName": "Bob", "parentName": None})
        assert unset["name"] == "Bob" and "parentId" not in unset
        await text(everything, "set_entity_parent", {"entityName": "Bob", "parentName": "Alice Smith"})
        # memory-mcp's merge: the merged entity was created when the first of them was (seed 004).
        hits, _ = await text(everything, "search_nodes_ranked", {"query": "Acme"})
        created = {hit["entity"]["name"]: hit["entity"]["createdAt"] for hit in hits}
        first = min(created, key=created.__getitem__)
        later = max(created, key=created.__getitem__)
        merged, structured = await text(everything, "merge_entities", {"entityNames": [later, first]})
        assert merged["name"] == later and merged["createdAt"] == created[first] and "lastModified" in merged
        assert {k: v for k, v in merged.items() if k not in ("createdAt", "lastModified")} == structured["entity"]
    async with open_client(every_toolset(settings), "in_process") as gate:  # the gate profile: as before
        answer, structured = await text(gate, "search_nodes_ranked", {"query": "designer"})
        assert answer == structured
