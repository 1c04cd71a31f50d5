"""The shapes at the gate's edges: how a rejection and a validation failure read."""

import pytest
from pydantic import ValidationError

from write_gate.core.model import (
    ErrorCode,
    GateRejection,
    WriteNodeRequest,
    WriteRelationshipRequest,
    describe_problems,
    validation_problems,
)


def failure(arguments: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        WriteNodeRequest.model_validate(arguments)
    return caught.value


def test_a_rejection_reads_as_its_message() -> None:
    exc = GateRejection(ErrorCode.INVALID_INPUT, "label must be letters", field="label")
    assert str(exc) == "label must be letters"
    assert exc.rejected.model_dump() == {
        "status": "rejected",
        "error_code": ErrorCode.INVALID_INPUT,
        "message": "label must be letters",
        "details": {"field": "label"},
    }


def test_problems_name_the_field_path_and_never_the_value() -> None:
    exc = failure({"label": "Person", "merge_keys": {"name": ["SECRET"]}, "source": "s", "extraction_method": "api"})
    problems = validation_problems(exc)
    assert {p["field"] for p in problems} == {
        "merge_keys.name.str",
        "merge_keys.name.int",
        "merge_keys.name.float",
        "merge_keys.name.bool",
    }
    assert all(set(p) == {"field", "problem"} and "SECRET" not in p["problem"] for p in problems)


def test_a_problem_with_the_whole_input_is_named_as_given() -> None:
    exc = failure("not an object")
    assert validation_problems(exc, "arguments") == [
        {"field": "arguments", "problem": "Input should be a valid dictionary or instance of WriteNodeRequest"}
    ]
    assert validation_problems(exc)[0]["field"] == ""
    assert describe_problems(exc, "arguments") == (
        "arguments: Input should be a valid dictionary or instance of WriteNodeRequest"
    )


def test_several_problems_read_as_one_line() -> None:
    exc = failure({"label": "Person", "merge_keys": {"name": "A"}})
    assert describe_problems(exc) == "source: Field required; extraction_method: Field required"
    assert describe_problems(failure([])) == ": Input should be a valid dictionary or instance of WriteNodeRequest"


@pytest.mark.parametrize("reliability", [True, False])
def test_a_boolean_is_no_reliability_nor_weight(reliability: bool) -> None:
    """pydantic reads `true` as 1.0: a reliability of true was written as full confidence, a weight of true as 1.0.
    A number's text is read as the number, as some clients send every argument as text."""
    node = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "s", "extraction_method": "api"}
    with pytest.raises(ValidationError) as refused:
        WriteNodeRequest.model_validate({**node, "reliability": reliability})
    assert "a number, not true or false" in str(refused.value)
    assert WriteNodeRequest.model_validate({**node, "reliability": "0.8"}).reliability == 0.8
    link = {"type": "KNOWS", "from_label": "P", "from_keys": {"n": 1}, "to_label": "P", "to_keys": {"n": 2}}
    link |= {"source": "s", "extraction_method": "api"}
    for field in ("reliability", "weight"):
        with pytest.raises(ValidationError):
            WriteRelationshipRequest.model_validate({**link, field: reliability})
    assert WriteRelationshipRequest.model_validate({**link, "weight": 1}).weight == 1.0
    with pytest.raises(ValidationError):
        WriteRelationshipRequest.model_validate({**link, "weight": float("nan")})
