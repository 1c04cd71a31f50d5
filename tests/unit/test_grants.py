"""A grant's checks (access.agents.Grant, access.change_areas), decided purely: which tools an agent sees, which
labels and relationship types it writes, and what a refusal says (PERMISSION_DENIED naming what was refused and
what is granted). The mutation run (pyproject [tool.mutmut]) holds these tests against the grant code."""

import pytest

from write_gate.access.agents import FULL, PRESETS, READER, Grant
from write_gate.access.change_areas import may_watch
from write_gate.core.model import GateRejection
from write_gate.services.grant_checks import check_relationship_write

HR = Grant(tools=("read", "write_node"), labels=("Person", "Organization"), relationship_types=("WORKS_FOR",))


def refusal(check, names) -> dict:  # noqa: ANN001 - a bound check and what it is given
    with pytest.raises(GateRejection) as refused:
        check(names)
    rejected = refused.value.rejected
    assert rejected.error_code == "PERMISSION_DENIED"
    return {"message": rejected.message, **rejected.details}


def test_a_tool_is_seen_by_name_by_group_or_through_the_star() -> None:
    assert HR.allows_tool("search_nodes", "read") and HR.allows_tool("write_node", "write")
    assert not HR.allows_tool("write_relationship", "write") and not HR.allows_tool("export_graph", "admin")
    assert not Grant(tools=()).allows_tool("search_nodes", "read")
    assert FULL.allows_tool("anything", "admin") and Grant(tools=("*",)).allows_tool("x", "write")
    assert Grant(tools=("write",)).allows_tool("write_node", "write")
    assert not Grant(tools=("write_node",)).allows_tool("read_graph", "read")


def test_labels_outside_the_grant_are_refused_by_name_with_what_is_granted() -> None:
    HR.check_labels(["Person", "Organization", "Person"])
    HR.check_labels([])
    assert refusal(HR.check_labels, ["Person", "Project", "City", "Project"]) == {
        "message": "this agent may not write :City, :Project",
        "labels": ["City", "Project"],
        "granted": ["Person", "Organization"],
    }
    FULL.check_labels(["Anything"])
    assert refusal(READER.check_labels, ["Person"])["granted"] == []


def test_relationship_types_outside_the_grant_are_refused_by_name_with_what_is_granted() -> None:
    HR.check_types(["WORKS_FOR", "WORKS_FOR"])
    HR.check_types(iter(()))
    assert refusal(HR.check_types, iter(["KNOWS", "WORKS_FOR", "CHILD_OF"])) == {
        "message": "this agent may not write CHILD_OF, KNOWS",
        "relationship_types": ["CHILD_OF", "KNOWS"],
        "granted": ["WORKS_FOR"],
    }
    FULL.check_types(["ANY_TYPE"])
    Grant(relationship_types=("KNOWS", "*")).check_types(["ANY_TYPE"])
    assert refusal(READER.check_types, ["KNOWS"])["relationship_types"] == ["KNOWS"]


def test_the_writable_types_are_the_grants_or_none_for_any() -> None:
    assert HR.writable_types() == ["WORKS_FOR"]
    assert FULL.writable_types() is None and Grant(relationship_types=("KNOWS", "*")).writable_types() is None
    assert READER.writable_types() == []


def test_a_grant_works_in_its_spaces_its_first_the_default() -> None:
    served = ("team_a", "team_b")
    assert Grant(spaces=("team_b",)).space_for(None, served, "team_a") == "team_b"
    assert Grant().space_for(None, served, "team_a") == "team_a"  # none listed: the server's default
    assert Grant(spaces=("*",)).space_for("team_b", served, "team_a") == "team_b"
    with pytest.raises(GateRejection) as refused:
        Grant(spaces=("team_a",)).space_for("team_b", served, "team_a")
    assert refused.value.rejected.error_code == "SPACE_NOT_GRANTED"


def test_the_change_feed_is_watched_by_agents_that_may_read_it() -> None:
    for label in (None, "Person"):
        assert may_watch(PRESETS["reader"], label) and may_watch(FULL, label)
        assert may_watch(Grant(tools=("changes_since",)), label)
        assert not may_watch(Grant(tools=("write", "admin")), label)
        assert not may_watch(Grant(tools=("changes",)), label)


def test_a_relationship_write_needs_its_types_and_when_it_may_create_its_endpoints_their_labels() -> None:
    check_relationship_write(HR, ["WORKS_FOR"], ["Person", "Project"], creates_endpoints=False)
    assert refusal(lambda types: check_relationship_write(HR, types, ["Person"], False), ["KNOWS"])[
        "relationship_types"
    ] == ["KNOWS"]
    refused = refusal(lambda ends: check_relationship_write(HR, ["WORKS_FOR"], ends, True), ["Person", "Project"])
    assert refused["labels"] == ["Project"]
    check_relationship_write(HR, ["WORKS_FOR"], ["Person", "Organization"], creates_endpoints=True)
