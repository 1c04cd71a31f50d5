"""The toolsets (pure): every tool in exactly one, the profiles' defaults, what --toolsets reads, and how grants and
WRITE_GATE_TOOLS name sets and tools."""

import pytest

from tests.conftest import GATE_DEFAULT_TOOLS, MEMORY_DEFAULT_TOOLS, MESH_DEFAULT_TOOLS
from write_gate.access.agents import READER, Grant
from write_gate.access.tool_selection import GROUPS, ToolSelection
from write_gate.core.registry import PropertyType, RegistrySnapshot, SchemaEntry
from write_gate.core.toolsets import (
    ALL,
    DEFAULTS,
    DISCOVERY,
    TOOLSETS,
    TYPED,
    parse_toolsets,
    served_toolsets,
    toolset_of,
)
from write_gate.surface.profiles import PROFILES
from write_gate.surface.typed_tool_specs import typed_specs

NPC = RegistrySnapshot(
    [
        SchemaEntry(
            "Npc", ("name",), merge_keys=("name",), property_types={"name": PropertyType("string")}, typed_tools=True
        )
    ]
)
TYPED_SPECS = typed_specs(NPC, {"enum": ["api"]})


def test_every_tool_of_every_profile_is_in_exactly_one_toolset() -> None:
    tools = {spec.name for profile in PROFILES.values() for spec in profile}
    holding = {name: [ts.name for ts in TOOLSETS.values() if name in ts.tools] for name in tools}
    assert {name: sets for name, sets in holding.items() if len(sets) != 1} == {}
    assert all(spec.toolset == holding[spec.name][0] for profile in PROFILES.values() for spec in profile)
    # No set names a tool no profile has (a renamed tool would leave its old name listed nowhere).
    assert set().union(*(ts.tools for ts in TOOLSETS.values())) == tools
    assert {spec.toolset for spec in TYPED_SPECS} == {TYPED} and TOOLSETS[TYPED].tools == frozenset()


def test_the_defaults_are_the_official_nine_and_the_gates_small_core() -> None:
    listed = {
        profile: {spec.name for spec in specs if spec.toolset in DEFAULTS[profile]}
        for profile, specs in PROFILES.items()
    }
    assert listed == {"gate": GATE_DEFAULT_TOOLS, "memory": MEMORY_DEFAULT_TOOLS, "mesh": MESH_DEFAULT_TOOLS}
    assert len(listed["gate"]) <= 12 and len(listed["memory"]) == 9 and len(listed["mesh"]) == 11


def test_toolset_names_are_not_group_names() -> None:
    """A grant's `tools` and WRITE_GATE_TOOLS take both; `typed` means the generated tools in both."""
    assert set(TOOLSETS) & {*GROUPS, "*"} == {TYPED}


@pytest.mark.parametrize(
    ("text", "sets"),
    [
        ("", set()),
        ("history", {"history"}),
        ("history, search  knowledge", {"history", "search", "knowledge"}),
        (ALL, set(TOOLSETS) - {DISCOVERY}),
        ("all,discovery", set(TOOLSETS)),
    ],
)
def test_toolsets_are_read_from_names_and_all(text: str, sets: set[str]) -> None:
    assert parse_toolsets(text) == sets


@pytest.mark.parametrize("text", ["nope", "history;search", "read", "*"])
def test_a_name_that_is_no_toolset_is_refused_naming_the_setting(text: str) -> None:
    with pytest.raises(ValueError, match="WRITE_GATE_TOOLSETS"):
        parse_toolsets(text)


def test_a_server_lists_its_defaults_what_is_asked_and_discovery_in_the_dynamic_mode() -> None:
    assert served_toolsets("gate", "", dynamic=False) == {"core", "schema"}
    assert served_toolsets("memory", "history", dynamic=True) == {"core", "history", DISCOVERY}


def test_a_grant_naming_a_toolset_allows_its_tools_and_names_it() -> None:
    grant = Grant(tools=("read", "history"))
    assert grant.named_toolsets() == {"history"}
    assert grant.allows_tool("resolve_conflict", "write", "history")  # a write, allowed by its set
    assert not grant.allows_tool("merge_entities", "write", "resolution")
    assert grant.allows_tool("get_schema", "read", "schema")  # by its group
    assert READER.named_toolsets() == frozenset() and Grant().named_toolsets() == frozenset()  # "*" names none


@pytest.mark.parametrize(
    ("text", "named", "not_named"),
    [
        ("read, typed:Npc", ["add_npc"], ["read_graph", "add_location"]),  # a group only filters
        ("*,-typed", [], ["write_node", "add_npc"]),
        ("typed, -delete_npc", ["add_npc"], ["delete_npc"]),  # exclusions still win
        ("get_history write_node", ["get_history", "write_node"], ["read_graph"]),
    ],
)
def test_tools_named_outright_in_write_gate_tools(text: str, named: list[str], not_named: list[str]) -> None:
    selection = ToolSelection.parse(text)
    label = {"add_npc": "Npc", "delete_npc": "Npc", "add_location": "Location"}
    group = {spec.name: spec.group for spec in PROFILES["gate"]} | dict.fromkeys(label, "write")
    assert all(selection.names(name, group[name], label.get(name)) for name in named)
    assert not any(selection.names(name, group[name], label.get(name)) for name in not_named)


def test_a_refusal_lists_what_it_cannot_read_and_every_set_there_is() -> None:
    with pytest.raises(ValueError) as refused:
        parse_toolsets("nope, bad all")
    assert str(refused.value) == (
        "WRITE_GATE_TOOLSETS: nope, bad is not a toolset (core, schema, search, knowledge, history, resolution, "
        "fleet, interchange, quarantine, mesh, typed, discovery, all)"
    )


def test_a_tool_is_in_its_own_set_unless_generated() -> None:
    assert (toolset_of("write_node"), toolset_of("write_node", generated=True), toolset_of("nope")) == (
        "core",
        TYPED,
        None,
    )
