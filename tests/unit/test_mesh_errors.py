"""MemoryMesh's refusal from the gate's (core.mesh_errors): the gate's fields kept, MemoryMesh's beside them, and
suggestions from what the rejection carries (a batch's from its first rejected item)."""

import mcp_types as types
import pytest

from write_gate.core.mesh_errors import mesh_rejection
from write_gate.core.model import ErrorCode, Rejected
from write_gate.surface.server import _as_mesh


def test_the_gate_s_fields_stay_and_memorymesh_s_are_beside_them() -> None:
    gate = Rejected(
        error_code=ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY,
        message="Npc requires role",
        details={"missing": ["role"]},
    )
    mesh = mesh_rejection(gate).model_dump()
    assert {k: mesh[k] for k in ("status", "error_code", "message", "details")} == gate.model_dump()
    assert (mesh["error"], mesh["context"], mesh["suggestions"]) == (
        "Npc requires role",
        {"missing": ["role"]},
        ["Provide role"],
    )


@pytest.mark.parametrize(
    ("code", "details", "says"),
    [
        (ErrorCode.SCHEMA_UNKNOWN_LABEL, {"known_labels": ["Npc", "Location"]}, "registered node types: Npc, Location"),
        (ErrorCode.SCHEMA_UNKNOWN_LABEL, {"known_types": ["KNOWS"]}, "registered edge types: KNOWS"),
        (ErrorCode.SCHEMA_UNKNOWN_LABEL, {"allowed": ["Person"]}, "allowed labels: Person"),
        (ErrorCode.SCHEMA_TYPE_MISMATCH, {"allowed": ["Active"]}, "allowed values: Active"),
        (ErrorCode.SCHEMA_TYPE_MISMATCH, {"property": "age", "expected": "integer"}, "Give age as integer"),
        (ErrorCode.ALREADY_EXISTS, {}, "update_nodes"),
        (ErrorCode.RELATION_NOT_FOUND, {}, "add_edges"),
        (ErrorCode.INVALID_INPUT, {"problems": []}, "input schema"),
    ],
)
def test_each_code_suggests_what_to_do_next(code: ErrorCode, details: dict, says: str) -> None:
    [suggestion] = mesh_rejection(Rejected(error_code=code, message="m", details=details)).suggestions
    assert says in suggestion


def test_a_long_list_is_cut_and_an_unknown_case_suggests_nothing() -> None:
    many = mesh_rejection(
        Rejected(
            error_code=ErrorCode.SCHEMA_UNKNOWN_LABEL, message="m", details={"known_labels": list("ABCDEFGHIJKLMN")}
        )
    )
    assert many.suggestions[0].endswith("L, ...")
    assert mesh_rejection(Rejected(error_code=ErrorCode.INVALID_INPUT, message="m")).suggestions == []
    assert mesh_rejection(Rejected(error_code=ErrorCode.CONFLICT, message="m")).suggestions == []


def test_a_batch_suggests_from_its_first_rejected_item() -> None:
    item = {"index": 0, "error_code": "SCHEMA_UNKNOWN_LABEL", "message": "m", "details": {"allowed": ["Person"]}}
    batch = Rejected(error_code=ErrorCode.SCHEMA_UNKNOWN_LABEL, message="1 of 1", details={"rejected": [item]})
    assert mesh_rejection(batch).suggestions == ["Use one of the allowed labels: Person"]
    odd = Rejected(error_code=ErrorCode.INVALID_INPUT, message="m", details={"rejected": [{"error_code": "NOPE"}]})
    assert mesh_rejection(odd).suggestions == []


def test_a_refusal_on_the_call_path_gains_memorymesh_s_fields_and_anything_else_is_left_as_it_is() -> None:
    """surface.server's conversion, for whichever part of the path refused (the grant, admission, the guard)."""

    def result(structured: dict, is_error: bool = True) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="{}")], structured_content=structured, is_error=is_error
        )

    denied = _as_mesh(result({"status": "rejected", "error_code": "PERMISSION_DENIED", "message": "no"}))
    assert denied.structured_content["error"] == "no" and '"suggestions"' in denied.content[0].text
    for untouched in (result({"odd": 1}), result({"data": {}}, is_error=False), denied):
        assert _as_mesh(untouched) is untouched
