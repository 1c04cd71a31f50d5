"""Property names under the registry (core/properties.py), without an engine: each policy, drift by case and
underscores, per-property absorbs, two names for one property, gate-computed names; and the decision as
write_node, write_relationship and the typed tools' policy use it."""

from typing import Any

import pytest

from write_gate.core.cypher.dialect import FalkorDBDialect
from write_gate.core.decisions import Policy, Stamp, plan_node_write, plan_relationship_write
from write_gate.core.formula import DefaultFormulaProvider
from write_gate.core.identifiers import PROPERTY_REMAPS_FIELD, PROTECTED_RELATIONSHIP_FIELDS
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.core.properties import (
    absorb_clashes,
    declared_names,
    name_fold,
    resolve_property_names,
    typed_tool_policy,
)
from write_gate.core.registry import PropertyType, RegistrySnapshot, SchemaEntry, UndeclaredPolicy
from write_gate.core.values import clean_map

ALLOW, REMAP, REJECT = UndeclaredPolicy.ALLOW, UndeclaredPolicy.REMAP, UndeclaredPolicy.REJECT

PERSON = SchemaEntry(
    "Person",
    ("name",),
    merge_keys=("name",),
    property_types={
        "name": PropertyType("string"),
        "age": PropertyType("integer"),
        "email": PropertyType("string", absorbs=("e_mail_address", "mail")),
    },
)
KNOWS = SchemaEntry("KNOWS", kind="relationship", property_types={"since": PropertyType("integer")})
REGISTRY = RegistrySnapshot([PERSON, SchemaEntry("Entity", fallback=True, merge_keys=("name",)), KNOWS])
STAMP = Stamp("0.1.0", "2026-01-01T00:00:00.000Z", "tester")
PROVIDER = DefaultFormulaProvider()


def resolve(values: dict[str, Any], policy: UndeclaredPolicy, entry: SchemaEntry = PERSON, **kw: Any):
    cleaned, kinds = clean_map(values, "properties")
    return resolve_property_names(entry, cleaned, kinds, policy, what="properties", **kw)


def rejection(fn, *args, **kwargs) -> GateRejection:
    with pytest.raises(GateRejection) as caught:
        fn(*args, **kwargs)
    return caught.value


# --- the decision -------------------------------------------------------------------------------------


def test_declared_names_are_property_types_required_and_merge_keys() -> None:
    entry = SchemaEntry("X", ("title",), merge_keys=("id",), property_types={"size": PropertyType("integer")})
    assert declared_names(entry) == ("id", "title", "size")


def test_fold_ignores_case_and_underscores() -> None:
    assert {name_fold(n) for n in ("email", "Email", "E_Mail", "e_mail", "EMAIL", "eMail")} == {"email"}
    assert name_fold("first_name") == name_fold("firstName") != name_fold("first_names")


def test_allow_changes_nothing() -> None:
    out = resolve({"Age": "thirty", "e_mail": "a@b"}, ALLOW)
    assert out.values == {"Age": "thirty", "e_mail": "a@b"} and out.remaps == ()


@pytest.mark.parametrize("policy", [REMAP, REJECT])
def test_drift_is_remapped_to_the_declared_name(policy: UndeclaredPolicy) -> None:
    out = resolve({"Age": 30, "E_Mail": "a@b", "name": "Al"}, policy)
    assert out.values == {"age": 30, "email": "a@b", "name": "Al"}
    assert out.kinds == {"age": "integer", "email": "string", "name": "string"}
    assert out.remaps == ("Age→age", "E_Mail→email")


@pytest.mark.parametrize("policy", [REMAP, REJECT])
def test_absorbed_spellings_are_remapped_exactly_and_by_fold(policy: UndeclaredPolicy) -> None:
    out = resolve({"mail": "a@b"}, policy)
    assert out.values == {"email": "a@b"} and out.remaps == ("mail→email",)
    assert resolve({"E_MAIL_ADDRESS": "a@b"}, policy).remaps == ("E_MAIL_ADDRESS→email",)


def test_remap_keeps_names_that_match_nothing() -> None:
    out = resolve({"age": 3, "nickname": "Al"}, REMAP)
    assert out.values == {"age": 3, "nickname": "Al"} and out.remaps == ()


def test_reject_refuses_names_that_match_nothing_naming_them_and_the_known_ones_never_the_values() -> None:
    exc = rejection(resolve, {"Age": 3, "nickname": "SECRET-VALUE", "shoe_size": 44}, REJECT)
    r = exc.rejected
    assert r.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY
    assert r.details == {
        "label": "Person",
        "field": "properties",
        "properties": ["nickname", "shoe_size"],
        "known": ["age", "email", "name"],
    }
    assert "SECRET-VALUE" not in r.model_dump_json()


@pytest.mark.parametrize("policy", [REMAP, REJECT])
def test_two_names_for_one_property_are_refused_not_picked(policy: UndeclaredPolicy) -> None:
    r = rejection(resolve, {"email": "a@b", "e_mail": "c@d"}, policy).rejected
    assert r.error_code is ErrorCode.INVALID_INPUT
    assert r.details == {
        "reason": "same_property",
        "field": "properties",
        "property": "email",
        "given": ["email", "e_mail"],
    }
    r = rejection(resolve, {"mail": "a@b", "EMail": "c@d"}, policy).rejected  # two drifts, no exact name
    assert r.details["given"] == ["mail", "EMail"]
    # A merge key named twice is identity respelled: refused as write_node refuses `Name` beside `name`.
    r = rejection(resolve, {"name": "Al", "NAME": "Bo"}, policy).rejected
    assert (r.error_code, r.details["reason"]) == (ErrorCode.SCHEMA_PROTECTED_FIELD, "merge_key")
    assert r.message == "name, NAME all name the merge key name of Person; give it once"
    assert r.details == {"fields": ["name", "NAME"], "reason": "merge_key", "merge_keys": ["name"]}
    # A property given once before the two names of another does not hide them.
    r = rejection(resolve, {"age": 3, "email": "a@b", "e_mail": "c@d"}, policy).rejected
    assert r.message == "email, e_mail all name Person.email; give it once"


@pytest.mark.parametrize("policy", [REMAP, REJECT])
def test_names_spelled_like_gate_computed_fields_are_protected_not_remapped(policy: UndeclaredPolicy) -> None:
    for name in ("extractionMethod", "Written_By", "lastupdated"):
        r = rejection(resolve, {name: "x"}, policy).rejected
        assert r.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD
        assert r.details == {"fields": [name], "reason": "computed_field"}
        assert r.message == f"{name} is spelled like a field the gate computes; a write cannot set it"
    # weight is computed on a relationship only
    assert resolve({"Weight": 1}, REMAP, KNOWS).values == {"Weight": 1}
    r = rejection(resolve, {"Weight": 1}, REMAP, KNOWS, protected=PROTECTED_RELATIONSHIP_FIELDS).rejected
    assert r.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD


def test_a_fold_two_declared_names_share_is_left_to_the_policy() -> None:
    entry = SchemaEntry("X", property_types={"first_name": PropertyType("string"), "firstName": PropertyType("string")})
    assert resolve({"FirstName": "a"}, REMAP, entry).values == {"FirstName": "a"}
    assert (
        rejection(resolve, {"FirstName": "a"}, REJECT, entry).rejected.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY
    )
    assert resolve({"first_name": "a"}, REJECT, entry).values == {"first_name": "a"}


def test_also_declared_names_pass_whatever_the_entry_says() -> None:
    assert resolve({"observations": ["x"]}, REJECT, also_declared={"observations"}).values == {"observations": ["x"]}


def test_typed_tools_policy_follows_additional_properties_unless_the_entry_names_one() -> None:
    assert typed_tool_policy(SchemaEntry("X")) is REJECT
    assert typed_tool_policy(SchemaEntry("X", additional_properties=True)) is REMAP
    assert typed_tool_policy(SchemaEntry("X", undeclared_properties=ALLOW)) is ALLOW


def test_absorb_clashes() -> None:
    types = {"email": PropertyType("string", absorbs=("mail",)), "post": PropertyType("string", absorbs=("MAIL",))}
    assert absorb_clashes(types, ["email", "post"]) == ["MAIL is absorbed by both email and post"]
    apart = {"email": PropertyType("string", absorbs=("mail",)), "post": PropertyType("string", absorbs=("letter",))}
    assert absorb_clashes(apart, ["email", "post"]) == []  # each its own spelling: fine
    owned = {"email": PropertyType("string", absorbs=("_secret",))}
    assert absorb_clashes(owned, ["email"]) == ["_secret, absorbed by email, reads as a field the gate owns"]
    types = {"email": PropertyType("string", absorbs=("Name",))}
    assert absorb_clashes(types, ["name", "email"]) == ["Name, absorbed by email, reads as the declared name"]
    types = {"email": PropertyType("string", absorbs=("sourceText", "Source"))}
    assert absorb_clashes(types, ["email"]) == ["Source, absorbed by email, reads as a field the gate owns"]
    assert absorb_clashes({"email": PropertyType("string", absorbs=("e_mail", "Email"))}, ["email"]) == []


# --- through the planned writes -------------------------------------------------------------------------


def node(policy: UndeclaredPolicy, registry: RegistrySnapshot = REGISTRY, **changes: Any):
    args = {
        "label": "Person",
        "merge_keys": {"name": "Alice"},
        "source": "t",
        "extraction_method": "manual",
        **changes,
    }
    request = WriteNodeRequest.model_validate(args)
    return plan_node_write(
        request, registry, Policy(undeclared_properties=policy), PROVIDER, STAMP, dialect=FalkorDBDialect()
    )


def test_write_node_remaps_properties_and_merge_keys_and_records_them() -> None:
    plan = node(REMAP, merge_keys={"Name": "Alice"}, properties={"Age": 30, "e_mail": "a@b", "hobby": "chess"})
    assert plan.result.merge_keys == {"name": "Alice"}
    assert plan.properties == {"age": 30, "email": "a@b", "hobby": "chess"}
    assert plan.result.property_remaps == ["Name→name", "Age→age", "e_mail→email"]
    written = plan.statement.params["properties"]
    assert written[PROPERTY_REMAPS_FIELD] == ["Name→name", "Age→age", "e_mail→email"]
    assert "_f_" + PROPERTY_REMAPS_FIELD not in written  # a name is not the node's searchable text
    assert plan.statement.params["identity"]["name"] == "Alice"


def test_write_node_without_remaps_writes_no_breadcrumb() -> None:
    plan = node(REJECT, properties={"age": 30})
    assert plan.result.property_remaps == [] and PROPERTY_REMAPS_FIELD not in plan.statement.params["properties"]


def test_write_node_allow_is_the_gate_as_it_was() -> None:
    plan = node(ALLOW, properties={"Age": "thirty", "e_mail": "a@b"})
    assert plan.properties == {"Age": "thirty", "e_mail": "a@b"} and plan.result.property_remaps == []


def test_the_entrys_own_policy_wins_over_the_gates() -> None:
    strict = RegistrySnapshot([SchemaEntry("Person", merge_keys=("name",), undeclared_properties=REJECT)])
    r = rejection(node, ALLOW, strict, properties={"hobby": "chess"}).rejected
    assert r.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY and r.details["properties"] == ["hobby"]
    r = rejection(node, ALLOW, strict, properties={"hobby": "chess", "pet": "cat"}).rejected
    assert r.message == "Person does not declare hobby, pet and takes no undeclared properties"
    lax = RegistrySnapshot([SchemaEntry("Person", merge_keys=("name",), undeclared_properties=ALLOW)])
    assert node(REJECT, lax, properties={"hobby": "chess"}).properties == {"hobby": "chess"}


def test_a_drifted_type_is_remapped_before_its_type_is_checked() -> None:
    r = rejection(node, REMAP, properties={"AGE": "thirty"}).rejected
    assert r.error_code is ErrorCode.SCHEMA_TYPE_MISMATCH and r.details["property"] == "age"


@pytest.mark.parametrize("policy", [ALLOW, REMAP, REJECT])
def test_protected_names_keep_their_own_rejection(policy: UndeclaredPolicy) -> None:
    for name in ("Confidence", "confidence", "SOURCE", "_key"):
        r = rejection(node, policy, properties={name: 1}).rejected
        assert r.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD


def test_a_drifted_merge_key_in_properties_still_may_not_change_identity() -> None:
    r = rejection(node, REMAP, properties={"NAME": "Bob"}).rejected
    assert (r.error_code, r.details["reason"]) == (ErrorCode.SCHEMA_PROTECTED_FIELD, "merge_key")
    assert node(REMAP, properties={"NAME": "Alice"}).properties == {}  # repeated unchanged: dropped


def relationship(policy: UndeclaredPolicy, **changes: Any):
    args = {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": "A"},
        "to_label": "Person",
        "to_keys": {"name": "B"},
        "source": "t",
        "extraction_method": "manual",
        **changes,
    }
    request = WriteRelationshipRequest.model_validate(args)
    return plan_relationship_write(request, REGISTRY, Policy(undeclared_properties=policy), PROVIDER, STAMP)


def test_write_relationship_remaps_its_properties_and_endpoint_keys() -> None:
    plan = relationship(REJECT, properties={"Since": 2020}, from_keys={"NAME": "A"}, to_keys={"Name": "B"})
    assert plan.properties == {"since": 2020}
    assert plan.start.keys == {"name": "A"} and plan.end.keys == {"name": "B"}
    assert plan.result.property_remaps == ["Since→since", "from_keys.NAME→name", "to_keys.Name→name"]
    assert plan.property_remaps == ("Since→since",)  # the relationship's own breadcrumb
    written = {k: v for k, v in plan.statement.params["properties"].items() if not k.startswith("_p_")}
    assert written == {"since": 2020, PROPERTY_REMAPS_FIELD: ["Since→since"]}  # beside each value's claim
    assert "_p_since" in plan.statement.params["properties"]


def test_write_relationship_rejects_unknown_names_under_reject() -> None:
    r = rejection(relationship, REJECT, properties={"how": "school"}).rejected
    assert r.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY and r.details["label"] == "KNOWS"
    r = rejection(relationship, REJECT, from_keys={"id": 1}).rejected
    assert r.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY and r.details["field"] == "from_keys"
    r = rejection(relationship, REJECT, properties={"Weight": 0.5}).rejected
    assert r.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD
