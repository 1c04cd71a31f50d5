"""Spaces' pure parts: space names (they become graph and database names), where a space is stored, which spaces
a grant covers and which one a call works in, the settings that turn spaces on, and the `space` argument."""

import mcp_types as types
import pytest
from pydantic import ValidationError

from write_gate.access.agents import AgentsFile, Grant
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.spaces import check_space_name, choose_space, granted_spaces, is_space_name, storage_name
from write_gate.serving.config import Settings
from write_gate.surface.space_argument import take_space, with_space

SERVED = ("team_a", "team_b", "ops")


@pytest.mark.parametrize("name", ["team_a", "a", "ops2", "x" * 48])
def test_space_names_that_pass(name: str) -> None:
    assert is_space_name(name)


@pytest.mark.parametrize(
    "name", ["", "Team_a", "team-a", "_team", "2team", "team a", "x" * 49, "a`b", "a}b", "é", None, 3, "*"]
)
def test_space_names_that_do_not(name: object) -> None:
    assert not is_space_name(name)


def test_the_default_space_keeps_the_base_name_and_another_is_suffixed() -> None:
    assert storage_name("write_gate", "main", "main") == "write_gate"
    assert storage_name("write_gate", "team_a", "main") == "write_gate__team_a"


def test_granted_spaces() -> None:
    assert granted_spaces((), SERVED, "ops") == ["ops"]  # no spaces named: the server's default only
    assert granted_spaces(("team_b", "team_a"), SERVED, "ops") == ["team_b", "team_a"]
    assert granted_spaces(("gone", "team_b"), SERVED, "ops") == ["team_b"]  # an unserved space is no space
    assert granted_spaces(("*",), SERVED, "ops") == ["ops", "team_a", "team_b"]
    assert granted_spaces(("team_b", "*"), SERVED, "ops") == ["team_b", "ops", "team_a"]


def test_a_call_works_in_the_requested_space_or_the_grants_first() -> None:
    assert choose_space(("team_b", "team_a"), SERVED, "ops", None) == "team_b"
    assert choose_space(("team_b", "team_a"), SERVED, "ops", "team_a") == "team_a"
    assert choose_space((), SERVED, "ops", None) == "ops"


def refusal(granted: tuple[str, ...], requested: object) -> dict:
    with pytest.raises(GateRejection) as caught:
        choose_space(granted, SERVED, "ops", requested)
    return caught.value.rejected.model_dump(mode="json")


def test_a_space_not_granted_is_refused_by_name() -> None:
    refused = refusal(("team_a",), "team_b")
    assert refused["error_code"] == ErrorCode.SPACE_NOT_GRANTED and refused["details"] == {"space": "team_b"}
    assert refusal((), "team_a")["error_code"] == ErrorCode.SPACE_NOT_GRANTED
    assert refusal(("team_a",), "nowhere")["details"] == {"space": "nowhere"}  # unserved: as not granted
    assert refusal(("gone",), None)["error_code"] == ErrorCode.SPACE_NOT_GRANTED  # nothing left to work in


@pytest.mark.parametrize("requested", ["Team B; MATCH (n) DELETE n", "", 7, ["team_a"], {"a": 1}])
def test_a_space_argument_that_is_no_name_is_invalid_input_and_never_echoed(requested: object) -> None:
    refused = refusal(("team_a",), requested)
    assert refused["error_code"] == ErrorCode.INVALID_INPUT and refused["details"] == {"field": "space"}
    assert "MATCH" not in str(refused)


def test_grants_hold_space_names_only_and_default_to_none() -> None:
    assert Grant().spaces == ()
    assert Grant(spaces=("team_a", "*")).spaces == ("team_a", "*")
    with pytest.raises(ValidationError):
        Grant(spaces=("Team-A",))
    assert Grant(spaces=("team_b",)).space_for(None, SERVED, "ops") == "team_b"


def test_an_agents_file_without_spaces_loads_and_saves_as_before(tmp_path) -> None:
    path = tmp_path / "agents.toml"
    agents = AgentsFile.load(path)
    agents.add("plain", Grant())
    agents.add("team", Grant(spaces=("team_a",)))
    agents.save()
    text = path.read_text()
    assert text.count("spaces") == 1  # only the grant that names spaces says anything of them
    again = AgentsFile.load(path)
    assert again.by_id("plain").grant.spaces == () and again.by_id("team").grant.spaces == ("team_a",)


def test_settings_turn_spaces_on_and_aim_at_a_space() -> None:
    off = Settings(_env_file=None)
    assert off.spaces == [] and off.for_space(off.default_space) is off
    on = Settings(spaces="team_a, team_b", default_space="team_a", graph_name="g", memgraph_database="")
    assert on.spaces == ["team_a", "team_b"]
    assert on.for_space("team_a").graph_name == "g" and on.for_space("team_a").memgraph_database == ""
    assert on.for_space("team_b").graph_name == "g__team_b"
    assert on.for_space("team_b").memgraph_database == "memgraph__team_b"
    assert on.registry_space("team_b") == "team_a"
    assert on.model_copy(update={"shared_registry": False}).registry_space("team_b") == "team_b"


@pytest.mark.parametrize(
    "values", [{"spaces": "team_a,Team-B"}, {"spaces": "team_a", "default_space": "team_b"}, {"default_space": "X"}]
)
def test_settings_refuse_bad_spaces(values: dict) -> None:
    with pytest.raises(ValidationError):
        Settings(**values)


def test_the_space_argument_is_advertised_and_taken_off() -> None:
    tool = types.Tool(name="t", input_schema={"type": "object", "properties": {"a": {"type": "string"}}})
    spaced = with_space(tool)
    assert set(spaced.input_schema["properties"]) == {"a", "space"}
    assert set(tool.input_schema["properties"]) == {"a"}  # the cached tool is left as it was
    assert take_space({"a": 1, "space": "team_a"}) == ("team_a", {"a": 1})
    assert take_space(None) == (None, {})


def test_a_command_names_a_served_space_or_the_default() -> None:
    from write_gate.serving.config import ConfigurationError
    from write_gate.serving.spaces import served_space

    off = Settings(_env_file=None)
    assert served_space(off, None) == off.default_space == served_space(off, off.default_space)
    with pytest.raises(ConfigurationError, match="served: none"):
        served_space(off, "team_a")
    on = Settings(spaces="team_a,team_b", default_space="team_a")
    assert served_space(on, "team_b") == "team_b"
    with pytest.raises(ConfigurationError, match="team_z: not a space this gate serves; served: team_a, team_b"):
        served_space(on, "team_z")


def test_each_space_refusal_says_exactly_why() -> None:
    assert refusal(("gone",), None) == {
        "status": "rejected",
        "error_code": "SPACE_NOT_GRANTED",
        "message": "this agent's grant lists no space this server serves",
        "details": {"space": None},
    }
    invalid = refusal(("team_a",), "Team")
    assert invalid["message"] == "space is not a space name (lower-case letters, digits and _, starting with a letter)"
    assert refusal(("team_a",), "team_b")["message"] == "this agent may not use the space team_b"


def test_a_bad_space_name_in_settings_says_what_a_name_is() -> None:
    assert check_space_name("team_a") == "team_a"
    with pytest.raises(ValueError) as refused:
        check_space_name("Team A")
    assert str(refused.value) == (
        "a space name is lower-case letters, digits and _, starting with a letter, at most 48 characters"
    )
