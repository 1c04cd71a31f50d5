"""The gate's pure decisions, without an engine."""

import pytest

from write_gate.core.decisions import Policy, Stamp, UnknownLabelPolicy, plan_node_write, plan_relationship_write
from write_gate.core.formula import DefaultFormulaProvider
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.core.registry import PropertyType, RegistrySnapshot, SchemaEntry

REGISTRY = RegistrySnapshot(
    [
        SchemaEntry(
            "Person",
            ("name",),
            ("person",),
            merge_keys=("name",),
            property_types={
                "name": PropertyType("string"),
                "age": PropertyType("integer"),
                "role": PropertyType("string", enum=("dev", "ops")),
            },
        ),
        SchemaEntry("Organization", ("name",), merge_keys=("name",)),
        SchemaEntry("Entity", fallback=True),
        SchemaEntry(
            "WORKS_FOR",
            kind="relationship",
            from_labels=("Person",),
            to_labels=("Organization",),
            required_properties=("since",),
        ),
    ]
)
STAMP = Stamp("0.1.0", "2026-01-01T00:00:00.000Z", "tester")
PROVIDER = DefaultFormulaProvider()


def node(policy: Policy = Policy(), **changes: object):
    args = {
        "label": "Person",
        "merge_keys": {"name": "Alice"},
        "properties": {"age": 30},
        "source": "t",
        "extraction_method": "manual",
        "reliability": 0.9,
        **changes,
    }
    return plan_node_write(WriteNodeRequest.model_validate(args), REGISTRY, policy, PROVIDER, STAMP)


def rejection(fn, *args, **kwargs) -> GateRejection:
    with pytest.raises(GateRejection) as caught:
        fn(*args, **kwargs)
    return caught.value


def test_plan_has_parameters_for_every_value() -> None:
    plan = node()
    assert plan.result.confidence == 0.675 and plan.result.label == "Person"
    params = plan.statement.params
    assert params["key"] == '{"name":"Alice"}' and params["identity"]["name"] == "Alice"
    assert params["properties"]["age"] == 30
    assert params["source"] == "t" and params["last_updated"] == STAMP.now and params["confidence"] == 0.675


def test_fallback_override_wins_over_registry() -> None:
    plan = node(Policy(fallback_override="Organization"), label="Ticket")
    assert plan.result.label == "Organization" and plan.result.remapped_from == ":Ticket"


def test_fallback_override_must_be_registered() -> None:
    err = rejection(node, Policy(fallback_override="Nope"), label="Ticket")
    assert err.rejected.error_code is ErrorCode.SCHEMA_UNKNOWN_LABEL


def test_reject_policy() -> None:
    err = rejection(node, Policy(unknown_labels=UnknownLabelPolicy.REJECT), label="Ticket")
    assert err.rejected.error_code is ErrorCode.SCHEMA_UNKNOWN_LABEL
    assert "Person" in err.rejected.details["known_labels"]


@pytest.mark.parametrize(
    "changes,code",
    [
        ({"properties": {"age": "thirty"}}, ErrorCode.SCHEMA_TYPE_MISMATCH),
        ({"properties": {"role": "ceo"}}, ErrorCode.SCHEMA_TYPE_MISMATCH),
        ({"merge_keys": {"name": "A", "email": "a@x"}}, ErrorCode.INVALID_INPUT),
        ({"merge_keys": {"email": "a@x"}, "properties": {"name": "A"}}, ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY),
        ({"properties": {"nested": {"a": 1}}}, ErrorCode.INVALID_INPUT),
        ({"extraction_method": "vibes"}, ErrorCode.INVALID_EXTRACTION_METHOD),
        ({"label": "Person`) DELETE n//"}, ErrorCode.INVALID_INPUT),
        ({"properties": {"_schema_remap_from": ":x"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"merge_keys": {"source": "x"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        # Protected under any spelling.
        ({"properties": {"Confidence": 1.0}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"WRITTEN_BY": "me"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"::Source": "me"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"updated_by": "me"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        # A merge key is identity: properties may not change its value or type, under any spelling.
        ({"properties": {"name": "Bob"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"name": 12345}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"::name": "Bob"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"Name": "Alice"}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"merge_keys": {"name": 7}}, ErrorCode.SCHEMA_TYPE_MISMATCH),
    ],
)
def test_node_rejections(changes: dict, code: ErrorCode) -> None:
    assert rejection(node, **changes).rejected.error_code is code


def test_a_property_may_repeat_its_merge_key_unchanged() -> None:
    plan = node(properties={"name": "Alice", "age": 30})
    assert "name" not in plan.properties and plan.properties["age"] == 30


def test_merge_key_clash_names_the_fields() -> None:
    details = rejection(node, properties={"name": "Bob", "age": 3}).rejected.details
    assert details["fields"] == ["name"] and details["reason"] == "merge_key"


def test_enum_violation_lists_allowed_values() -> None:
    assert rejection(node, properties={"role": "ceo"}).rejected.details["allowed"] == ["dev", "ops"]


def rel(**changes: object):
    args = {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": "A"},
        "to_label": "Organization",
        "to_keys": {"name": "B"},
        "properties": {"since": 2020},
        "source": "t",
        "extraction_method": "api",
        **changes,
    }
    return plan_relationship_write(WriteRelationshipRequest.model_validate(args), REGISTRY, Policy(), PROVIDER, STAMP)


def test_relationship_plan() -> None:
    plan = rel(from_label=":person")
    assert plan.result.from_label == "Person" and plan.result.confidence == 0.5
    assert "MATCH (a:`Person`" in plan.statement.text and not plan.merge_endpoints


@pytest.mark.parametrize(
    "changes,code",
    [
        ({"type": "DIRECTED"}, ErrorCode.SCHEMA_UNKNOWN_LABEL),
        ({"to_label": "Person"}, ErrorCode.SCHEMA_UNKNOWN_LABEL),  # endpoint label not allowed for the type
        ({"properties": {}}, ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY),
        ({"from_keys": {}}, ErrorCode.INVALID_INPUT),
        ({"to_keys": {"confidence": 1}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"since": 2020, "weight": 0.5}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
        ({"properties": {"since": 2020, "Weight": 0.5}}, ErrorCode.SCHEMA_PROTECTED_FIELD),
    ],
)
def test_relationship_rejections(changes: dict, code: ErrorCode) -> None:
    assert rejection(rel, **changes).rejected.error_code is code
