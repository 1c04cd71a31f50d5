"""Seed 003's test matrix, row by row, through a real MCP client session, checking the tool result
and what is in the graph afterwards. Runs on every engine fixture and over both transports."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.conftest import CLIENT_NAME, EVENT_SCHEMAS, GATE_DEFAULT_TOOLS, hint, open_client
from write_gate import __version__
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import UnknownLabelPolicy
from write_gate.engines import GraphBackend
from write_gate.services import gate as gate_module
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier, pytest.mark.every_transport]


ALICE = {
    "label": "Person",
    "merge_keys": {"name": "Alice"},
    "properties": {"age": 30},
    "source": "test",
    "extraction_method": "manual",
    "reliability": 0.9,
}


@pytest.fixture
async def client(settings: Settings, matrix_graph: GraphBackend, transport: str) -> AsyncIterator[Client]:
    async with open_client(settings, transport) as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None
    return result.is_error, result.structured_content


async def nodes(graph: GraphBackend, label: str) -> list[dict[str, Any]]:
    return [row["n"] for row in await graph.read(Statement(f"MATCH (n:`{label}`) RETURN n ORDER BY n.name"))]


async def test_row1_written_with_computed_confidence(client: Client, graph: GraphBackend) -> None:
    is_error, out = await call(client, "write_node", ALICE)
    assert not is_error
    assert out == {
        "status": "written",
        "label": "Person",
        "merge_keys": {"name": "Alice"},
        "confidence": 0.675,
        "write_gate_version": __version__,
        "remapped_from": None,
    }
    [alice] = await nodes(graph, "Person")
    assert alice["name"] == "Alice" and alice["age"] == 30
    assert alice["confidence"] == pytest.approx(0.675)
    assert alice["source"] == "test" and alice["extraction_method"] == "manual"
    assert alice["write_gate_version"] == __version__
    assert alice["last_updated"].endswith("Z")
    assert "_schema_remap_from" not in alice and "_schema_property_remaps" not in alice


async def test_row2_protected_field_rejected(client: Client, graph: GraphBackend) -> None:
    is_error, out = await call(client, "write_node", {**ALICE, "properties": {"confidence": 1.0}})
    assert is_error
    assert out["status"] == "rejected" and out["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert out["details"]["fields"] == ["confidence"]
    assert await nodes(graph, "Person") == []


async def test_row3_absorbed_label_remapped(client: Client, graph: GraphBackend) -> None:
    is_error, out = await call(client, "write_node", {**ALICE, "label": ":person"})
    assert not is_error
    assert out["label"] == "Person" and out["remapped_from"] == ":person"
    [alice] = await nodes(graph, "Person")
    assert alice["_schema_remap_from"] == ":person"
    assert await graph.read(Statement("MATCH (n:person) RETURN n")) == []


async def test_row4_unknown_label_goes_to_fallback_in_remap_mode(client: Client, graph: GraphBackend) -> None:
    is_error, out = await call(client, "write_node", {**ALICE, "label": "ZZZNonexistent"})
    assert not is_error
    assert out["label"] == "Entity" and out["remapped_from"] == ":ZZZNonexistent"
    [node] = await nodes(graph, "Entity")
    assert node["_schema_remap_from"] == ":ZZZNonexistent" and node["name"] == "Alice"
    assert await graph.read(Statement("MATCH (n:ZZZNonexistent) RETURN n")) == []


async def test_row4_fallback_is_configurable(settings: Settings, matrix_graph: GraphBackend, transport: str) -> None:
    async with open_client(settings.model_copy(update={"fallback_label": "Organization"}), transport) as client:
        is_error, out = await call(client, "write_node", {**ALICE, "label": "ZZZNonexistent"})
    assert not is_error and out["label"] == "Organization"
    [node] = await nodes(matrix_graph, "Organization")
    assert node["_schema_remap_from"] == ":ZZZNonexistent"


async def test_row5_unknown_label_rejected_in_reject_mode(
    settings: Settings, matrix_graph: GraphBackend, transport: str
) -> None:
    reject = settings.model_copy(update={"unknown_label_policy": UnknownLabelPolicy.REJECT})
    async with open_client(reject, transport) as client:
        is_error, out = await call(client, "write_node", {**ALICE, "label": "ZZZNonexistent"})
        assert is_error and out["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        # Absorbed labels still remap in reject mode: only unknown ones are refused.
        is_error, out = await call(client, "write_node", {**ALICE, "label": "person"})
        assert not is_error and out["label"] == "Person"
    assert await nodes(matrix_graph, "Entity") == []


async def test_row6_missing_required_property(client: Client, graph: GraphBackend) -> None:
    is_error, out = await call(client, "write_node", {**ALICE, "merge_keys": {}, "properties": {}})
    assert is_error
    assert out["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
    assert out["details"]["missing"] == ["name"]
    assert await nodes(graph, "Person") == []


RELATIONSHIP = {
    "type": "WORKS_FOR",
    "from_label": "Person",
    "from_keys": {"name": "Alice"},
    "to_label": "Organization",
    "to_keys": {"name": "Acme"},
    "properties": {"since": 2020},
    "source": "hr-api",
    "extraction_method": "api",
    "reliability": 0.8,
}


async def relationships(graph: GraphBackend) -> list[dict[str, Any]]:
    return await graph.read(
        Statement("MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS type, r AS r, b.name AS b ORDER BY a, b")
    )


async def test_row7_unregistered_relationship_type_rejected(client: Client, graph: GraphBackend) -> None:
    await call(client, "write_node", ALICE)
    await call(
        client, "write_node", {**ALICE, "label": "Organization", "merge_keys": {"name": "Acme"}, "properties": {}}
    )
    is_error, out = await call(client, "write_relationship", {**RELATIONSHIP, "type": "DIRECTED"})
    assert is_error and out["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert out["details"]["type"] == "DIRECTED"
    assert await relationships(graph) == []


async def test_row8_missing_endpoint_fails_by_default(client: Client, graph: GraphBackend) -> None:
    await call(client, "write_node", ALICE)
    is_error, out = await call(client, "write_relationship", RELATIONSHIP)
    assert is_error and out["error_code"] == "ENDPOINT_NOT_FOUND"
    assert out["details"]["missing"] == ["to"]
    assert await relationships(graph) == []
    assert await nodes(graph, "Organization") == []


async def test_row9_merge_endpoints_creates_stub(client: Client, graph: GraphBackend) -> None:
    await call(client, "write_node", ALICE)
    is_error, out = await call(client, "write_relationship", {**RELATIONSHIP, "endpoint_policy": "merge_endpoints"})
    assert not is_error
    assert out["status"] == "written" and out["type"] == "WORKS_FOR"
    assert out["confidence"] == 0.8 and out["stub_endpoints"] == ["to"]
    [acme] = await nodes(graph, "Organization")
    assert acme["_stub"] is True and acme["name"] == "Acme" and acme["source"] == "hr-api"
    [alice] = await nodes(graph, "Person")
    assert "_stub" not in alice
    [rel] = await relationships(graph)
    assert (rel["a"], rel["type"], rel["b"]) == ("Alice", "WORKS_FOR", "Acme")
    assert rel["r"]["since"] == 2020 and rel["r"]["confidence"] == pytest.approx(0.8)
    assert rel["r"]["write_gate_version"] == __version__
    # Writing the stub through write_node makes it a real node.
    await call(
        client, "write_node", {**ALICE, "label": "Organization", "merge_keys": {"name": "Acme"}, "properties": {}}
    )
    [acme] = await nodes(graph, "Organization")
    assert "_stub" not in acme


async def test_row9_a_stub_under_a_remapped_label_keeps_the_label_it_was_sent_as(
    client: Client, graph: GraphBackend
) -> None:
    """Every node a remapped write creates keeps its breadcrumb, a stub too; an endpoint that exists keeps its own."""
    await call(client, "write_node", ALICE)
    sent = {**RELATIONSHIP, "from_label": "person", "to_label": "Company", "endpoint_policy": "merge_endpoints"}
    is_error, out = await call(client, "write_relationship", sent)
    assert not is_error and out["to_label"] == "Organization" and out["stub_endpoints"] == ["to"], out
    [acme] = await nodes(graph, "Organization")
    assert acme["_stub"] is True and acme["_schema_remap_from"] == ":Company"
    [alice] = await nodes(graph, "Person")
    assert "_schema_remap_from" not in alice  # written as Person, found (not created) as `person`


async def test_row10_refresh_after_registering_event(client: Client, graph: GraphBackend) -> None:
    is_error, before = await call(client, "refresh_schema_cache", {})
    assert not is_error
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Event", "merge_keys": {"name": "Launch"}})
    assert not is_error and out["label"] == "Entity"  # unknown before the refresh: fallback
    await load_into_graph(graph, read_sources([EVENT_SCHEMAS]))
    is_error, after = await call(client, "refresh_schema_cache", {})
    assert not is_error
    assert after["loaded"] == before["loaded"] + 1
    assert after["node_labels"] == before["node_labels"] + 1
    assert after["status"] == "refreshed" and after["write_gate_version"] == __version__
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Event", "merge_keys": {"name": "Launch"}})
    assert not is_error and out["label"] == "Event" and out["remapped_from"] is None
    [event] = await nodes(graph, "Event")
    assert event["name"] == "Launch"


async def test_a_label_registered_since_the_gate_loaded_is_written_as_itself_without_a_refresh(
    client: Client, graph: GraphBackend
) -> None:
    """Found by a black-box audit: a :Schema node written on the graph (by hand, or through another gate) did not
    reach a gate that had loaded the registry before, which filed Event writes under the fallback until its own
    refresh (a `schema load` until its next poll). A write naming a label the snapshot does not know looks for it
    on the graph first."""
    await call(client, "write_node", ALICE)  # the registry is loaded, Event not in it
    await graph.write(
        Statement("CREATE (:Schema {name: 'Event', allowed: true, kind: 'node', required_properties: ['name']})")
    )
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Event", "merge_keys": {"name": "Launch"}})
    assert not is_error and (out["label"], out["remapped_from"]) == ("Event", None), out
    # A relationship type registered by hand is found the same way, where it was refused as unknown.
    await graph.write(Statement("CREATE (:Schema {name: 'HOSTS', allowed: true, kind: 'relationship'})"))
    hosts = {
        **RELATIONSHIP,
        "type": "HOSTS",
        "from_label": "Person",
        "to_label": "Event",
        "to_keys": {"name": "Launch"},
    }
    is_error, out = await call(client, "write_relationship", hosts)
    assert not is_error and out["type"] == "HOSTS", out
    # A label nobody registered still goes to the fallback.
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Gathering", "merge_keys": {"name": "G"}})
    assert not is_error and (out["label"], out["remapped_from"]) == ("Entity", ":Gathering")


async def test_the_names_looked_for_are_forgotten_past_their_bound(
    settings: Settings, matrix_graph: GraphBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate remembers the unknown names it looked for (one read per name per interval), up to a bound, then starts
    again: a fleet writing ever new labels cannot grow it without end, and a name registered since is still found.
    In process: the bounds are the module's (a served gate's are its own process's)."""
    monkeypatch.setattr(gate_module, "MAX_LOOKED_FOR", 2)
    async with open_client(settings, "in_process") as client:
        for label in ("Gathering", "Meetup", "Rally"):
            is_error, out = await call(client, "write_node", {**ALICE, "label": label, "merge_keys": {"name": label}})
            assert not is_error and out["label"] == "Entity"
        await matrix_graph.write(Statement("CREATE (:Schema {name: 'Rally', allowed: true, kind: 'node'})"))
        monkeypatch.setattr(gate_module, "RECHECK_SECONDS", 0.0)
        is_error, out = await call(client, "write_node", {**ALICE, "label": "Rally", "merge_keys": {"name": "R2"}})
        assert not is_error and out["label"] == "Rally", out


async def test_a_node_identified_by_other_keys_than_name_opens_by_the_name_reads_give_it(
    client: Client, graph: GraphBackend
) -> None:
    """Found by a black-box audit: an Event identified by its title was named `title=Launch` by read_graph and
    search_nodes, but open_nodes found it by neither that nor `Launch`, so its provenance could not be read back."""
    for entry in ("{name: 'Event', merge_keys: ['title'], required_properties: ['title']}",
                  "{name: 'Ticket', merge_keys: ['id'], required_properties: ['id']}"):  # fmt: skip
        await graph.write(Statement(f"CREATE (s:Schema {entry}) SET s.allowed = true, s.kind = 'node'"))
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Event", "merge_keys": {"title": "Launch"}})
    assert not is_error and out["label"] == "Event", out
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Ticket", "merge_keys": {"id": 5}})
    assert not is_error and out["label"] == "Ticket", out
    _, graph_read = await call(client, "read_graph", {})
    assert {"title=Launch", "id=5"} <= {e["name"] for e in graph_read["entities"]}
    _, opened = await call(client, "open_nodes", {"names": ["title=Launch", "id=5"], "neighbors": False})
    assert sorted(e["name"] for e in opened["entities"]) == ["id=5", "title=Launch"]
    [launch] = [e for e in opened["entities"] if e["name"] == "title=Launch"]
    assert launch["properties"]["source"] == "test"  # its provenance, read back


async def test_a_registry_node_whose_constraints_cannot_be_read_is_left_out_not_loaded_without_them(
    client: Client, graph: GraphBackend
) -> None:
    """Fail closed: `required_properties: 7` dropped would let a Part without a serial through as a Part."""
    is_error, before = await call(client, "refresh_schema_cache", {})
    damaged = "CREATE (:Schema {name: 'Part', allowed: true, kind: 'node', required_properties: 7})"
    await graph.write(Statement(damaged))
    is_error, after = await call(client, "refresh_schema_cache", {})
    assert not is_error and after["loaded"] == before["loaded"]
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Part", "merge_keys": {"name": "P1"}})
    assert not is_error and out["label"] == "Entity" and out["remapped_from"] == ":Part", out  # unknown: fallback
    assert await nodes(graph, "Part") == []
    await graph.write(Statement("MATCH (s:Schema {name: 'Part'}) SET s.required_properties = ['serial']"))
    is_error, fixed = await call(client, "refresh_schema_cache", {})
    assert fixed["loaded"] == before["loaded"] + 1
    is_error, out = await call(client, "write_node", {**ALICE, "label": "Part", "merge_keys": {"name": "P1"}})
    assert (
        is_error and out["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY" and out["details"]["missing"] == ["serial"]
    )


async def test_tools_list_is_exactly_the_gate(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == GATE_DEFAULT_TOOLS  # the writes, the reads and the schema (by default); no raw Cypher tool
    for tool in tools.values():
        assert tool.output_schema is not None and tool.annotations is not None
    for name in ("search_nodes", "open_nodes", "read_graph", "get_schema"):
        assert hint(tools[name].annotations, "read_only_hint") is True
    # It changes no data, but it does change the registry in force and the tool list.
    assert hint(tools["refresh_schema_cache"].annotations, "read_only_hint") is False
    assert hint(tools["write_node"].annotations, "read_only_hint") is False
    assert hint(tools["write_node"].annotations, "destructive_hint") is False


async def test_written_by_is_the_agent_over_stdio_and_in_process(
    settings: Settings, matrix_graph: GraphBackend, transport: str
) -> None:
    for agent, expected in ((None, CLIENT_NAME), ("bot-7", "bot-7")):
        async with open_client(settings.model_copy(update={"agent": agent}), transport) as client:
            await call(client, "write_node", {**ALICE, "merge_keys": {"name": expected}})
        [node] = [n for n in await nodes(matrix_graph, "Person") if n["name"] == expected]
        assert node["written_by"] == expected


async def test_the_matrix_on_the_registry_a_fresh_data_folder_holds(
    settings: Settings, graph: GraphBackend, transport: str
) -> None:
    """The seed's rows as a tester meets them on `write-gate serve`'s own registry (the migrations' core one, no
    fixture): Person absorbs person and requires name, an unknown label falls back to Entity, DIRECTED is not a
    type, and Event is not registered until it is (row 10: loaded N+1, then an Event is an Event)."""
    await migrate(graph)
    async with open_client(settings, transport) as client:
        is_error, out = await call(client, "write_node", {**ALICE, "label": ":person"})
        assert not is_error and (out["label"], out["remapped_from"], out["confidence"]) == ("Person", ":person", 0.675)
        is_error, out = await call(client, "write_node", {**ALICE, "label": "ZZZNonexistent"})
        assert not is_error and (out["label"], out["remapped_from"]) == ("Entity", ":ZZZNonexistent")
        is_error, out = await call(client, "write_node", {**ALICE, "merge_keys": {}, "properties": {}})
        assert (
            is_error
            and out["error_code"] == "SCHEMA_MISSING_REQUIRED_PROPERTY"
            and out["details"]["missing"] == ["name"]
        )
        directed = {**RELATIONSHIP, "type": "DIRECTED", "to_label": "Person", "to_keys": {"name": "Alice"}}
        is_error, out = await call(client, "write_relationship", directed)
        assert is_error and out["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        is_error, before = await call(client, "refresh_schema_cache", {})
        event = {**ALICE, "label": "Event", "merge_keys": {"name": "Launch"}}
        is_error, out = await call(client, "write_node", event)
        assert not is_error and out["label"] == "Entity"  # unknown before it is registered
        await load_into_graph(graph, read_sources([EVENT_SCHEMAS]))
        is_error, after = await call(client, "refresh_schema_cache", {})
        assert not is_error and after["loaded"] == before["loaded"] + 1
        is_error, out = await call(client, "write_node", event)
        assert not is_error and out["label"] == "Event" and out["remapped_from"] is None
