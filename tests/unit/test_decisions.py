"""The gate's pure decisions, without an engine."""

import pytest

from write_gate.core.cypher.deciding_writes import planned_node_values
from write_gate.core.cypher.dialect import FalkorDBDialect
from write_gate.core.cypher.statement import Endpoint, Provenance
from write_gate.core.decisions import (
    Policy,
    Stamp,
    UnknownLabelPolicy,
    check_merge_keys,
    plan_node_write,
    plan_relationship_write,
    resolve_relationship_type,
)
from write_gate.core.formula import DefaultFormulaProvider
from write_gate.core.model import ErrorCode, GateRejection, WriteNodeRequest, WriteRelationshipRequest
from write_gate.core.registry import PropertyType, RegistrySnapshot, SchemaEntry, UndeclaredPolicy
from write_gate.core.values import Limits

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
                "skills": PropertyType("array", items="string", enum=("py", "go")),
            },
        ),
        SchemaEntry("Organization", ("name",), merge_keys=("name",)),
        SchemaEntry("Entity", fallback=True),
        # Identified by two keys, and requiring a property that is not one of them.
        SchemaEntry("City", ("name", "country", "mayor"), merge_keys=("name", "country")),
        SchemaEntry(
            "WORKS_FOR",
            kind="relationship",
            from_labels=("Person",),
            to_labels=("Organization",),
            required_properties=("since",),
            remaps_from=("EMPLOYED_BY",),
        ),
    ]
)
# No fallback label: an unknown label has nowhere to go, whatever the policy.
NO_FALLBACK = RegistrySnapshot([SchemaEntry("Person", ("name",), merge_keys=("name",))])
STAMP = Stamp("0.1.0", "2026-01-01T00:00:00.000Z", "tester")
PROVIDER = DefaultFormulaProvider()


def node(policy: Policy = Policy(), registry: RegistrySnapshot = REGISTRY, free_text: bool = False, **changes: object):
    args = {
        "label": "Person",
        "merge_keys": {"name": "Alice"},
        "properties": {"age": 30},
        "source": "t",
        "extraction_method": "manual",
        "reliability": 0.9,
        **changes,
    }
    return plan_node_write(
        WriteNodeRequest.model_validate(args),
        registry,
        policy,
        PROVIDER,
        STAMP,
        free_text_label=free_text,
        dialect=FalkorDBDialect(),
    )


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
    assert err.rejected.message == (
        "label 'Ticket' is not registered and the fallback label it would go to, Nope (WRITE_GATE_FALLBACK_LABEL), "
        "is not"
    )


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
        ({"merge_keys": {"email": "a@x"}, "properties": {"name": "A"}}, ErrorCode.INVALID_INPUT),  # name misplaced
        ({"merge_keys": {"email": "a@x"}}, ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY),
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


def rel(policy: Policy = Policy(), free_text: bool = False, **changes: object):
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
    return plan_relationship_write(
        WriteRelationshipRequest.model_validate(args), REGISTRY, policy, PROVIDER, STAMP, free_text_type=free_text
    )


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


# --- labels: canonical, remapped, free text, unknown -------------------------------------------


def test_a_canonical_label_is_not_remapped_and_leaves_no_breadcrumb() -> None:
    plan = node(label=":Person")
    assert plan.result.label == "Person" and plan.result.remapped_from is None
    assert "remapped_from" not in plan.statement.params


def test_a_remapped_label_carries_its_breadcrumb_into_the_statement() -> None:
    plan = node(label="person")  # an absorbed alias
    assert plan.result.label == "Person" and plan.result.remapped_from == ":person"
    assert plan.statement.params["remapped_from"] == ":person"


def test_free_text_label_reads_as_an_identifier_and_keeps_its_spelling() -> None:
    # Text that only reads as a canonical name keeps its spelling; text that is the name exactly leaves none.
    padded = node(free_text=True, label=" Person ")
    assert padded.result.label == "Person" and padded.result.remapped_from == ": Person "
    exact = node(free_text=True, label="Person")
    assert exact.result.label == "Person" and exact.result.remapped_from is None
    # Not free text, the same spelling is not an identifier at all.
    assert rejection(node, label=" Person ").rejected.details == {"field": "label"}


def test_free_text_with_no_identifier_in_it_is_an_unknown_label() -> None:
    plan = node(free_text=True, label="!!!")
    assert plan.result.label == "Entity" and plan.result.remapped_from == ":!!!"
    err = rejection(node, Policy(unknown_labels=UnknownLabelPolicy.REJECT), free_text=True, label="!!!")
    assert err.rejected.details["label"] == "!!!"


def test_unknown_label_without_a_fallback_says_so() -> None:
    err = rejection(node, registry=NO_FALLBACK, label=":Ticket").rejected
    assert err.error_code is ErrorCode.SCHEMA_UNKNOWN_LABEL
    assert err.message == "label 'Ticket' is not registered and the registry has no fallback label"
    assert err.details == {"label": "Ticket", "known_labels": ["Person"]}


def test_unknown_label_under_the_reject_policy_names_the_setting() -> None:
    err = rejection(node, Policy(unknown_labels=UnknownLabelPolicy.REJECT), label=":Ticket").rejected
    assert err.message == (
        "label 'Ticket' is not registered and unknown labels are rejected (WRITE_GATE_UNKNOWN_LABEL_POLICY=reject)"
    )
    assert err.details == {"label": "Ticket", "known_labels": ["City", "Entity", "Organization", "Person"]}


# --- required properties, identity keys, types ---------------------------------------------------


def test_a_required_property_may_come_from_properties() -> None:
    plan = node(label="City", merge_keys={"name": "Oslo", "country": "NO"}, properties={"mayor": "M"})
    assert plan.result.merge_keys == {"name": "Oslo", "country": "NO"} and plan.properties == {"mayor": "M"}


def test_missing_required_properties_are_all_named() -> None:
    err = rejection(node, label="City", merge_keys={}, properties={}).rejected
    assert err.error_code is ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY
    assert err.message == "City requires name, country, mayor"
    assert err.details == {"label": "City", "missing": ["name", "country", "mayor"]}


def test_identity_must_name_at_least_one_key() -> None:
    # City's identity given in properties alone: identity_in_properties (below); nowhere: its required check.
    err = rejection(check_merge_keys, SchemaEntry("Flight", merge_keys=("carrier", "number")), {}, "keys").rejected
    assert err.error_code is ErrorCode.INVALID_INPUT
    assert err.message == "keys must name at least one identity property (carrier, number for Flight)"
    assert err.details == {"field": "keys"}
    # An entry with no declared merge keys says only that.
    err = rejection(node, label="Entity", merge_keys={}, properties={}).rejected
    assert err.message == "merge_keys must name at least one identity property" and err.details == {
        "field": "merge_keys"
    }


def test_an_entry_without_declared_merge_keys_takes_any() -> None:
    assert node(label="Entity", merge_keys={"code": "X1"}, properties={}).result.merge_keys == {"code": "X1"}


def test_identity_missing_declared_keys_names_them() -> None:
    """A declared key that is not required (so the required check passes without it), given nowhere."""
    err = rejection(check_merge_keys, SchemaEntry("Flight", merge_keys=("carrier", "number")), {"number": 7}, "keys")
    assert err.rejected.error_code is ErrorCode.SCHEMA_MISSING_REQUIRED_PROPERTY
    assert err.rejected.message == "keys for Flight must include carrier"
    assert err.rejected.details == {"label": "Flight", "missing": ["carrier"], "field": "keys"}


def test_identity_given_in_properties_is_present_and_told_where_it_goes() -> None:
    """Seed 003: SCHEMA_MISSING_REQUIRED_PROPERTY is for a property absent from properties and merge_keys."""
    props = {"name": "Oslo", "country": "NO", "mayor": "M"}
    err = rejection(node, label="City", merge_keys={"zip": "0150"}, properties=props).rejected
    assert err.error_code is ErrorCode.INVALID_INPUT
    assert err.message == "name, country is the identity of City: give it in merge_keys, not in properties"
    assert err.details == {
        "reason": "identity_in_properties",
        "label": "City",
        "merge_keys": ["name", "country"],
        "misplaced": ["name", "country"],
        "field": "merge_keys",
    }


def test_identity_given_in_properties_alone_is_told_where_it_goes() -> None:
    """With no merge keys at all it was only "must name at least one identity property", the reason left out."""
    props = {"name": "Oslo", "country": "NO", "mayor": "M"}
    err = rejection(node, label="City", merge_keys={}, properties=props).rejected
    assert (err.error_code, err.details["reason"], err.details["misplaced"]) == (
        ErrorCode.INVALID_INPUT,
        "identity_in_properties",
        ["name", "country"],
    )


def test_identity_with_keys_beyond_the_declared_ones_is_refused() -> None:
    keys = {"name": "Oslo", "country": "NO", "zip": "0150", "pop": 700000}
    err = rejection(node, label="City", merge_keys=keys, properties={"mayor": "M"}).rejected
    assert err.error_code is ErrorCode.INVALID_INPUT
    assert err.message == "zip, pop is not an identity key of City; put it in properties"
    assert err.details == {"label": "City", "merge_keys": ["name", "country"], "field": "merge_keys"}


def test_properties_that_would_change_identity_are_all_named() -> None:
    keys = {"name": "Oslo", "country": "NO"}
    err = rejection(node, label="City", merge_keys=keys, properties={"Name": "Oslo", "country": "SE"}).rejected
    assert err.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD
    assert err.message == "Name, country would change the node's identity; only merge_keys set name, country"
    assert err.details == {"fields": ["Name", "country"], "reason": "merge_key", "merge_keys": ["name", "country"]}


def test_a_type_mismatch_names_the_property_and_both_types() -> None:
    # An undeclared property before it does not stop the check.
    err = rejection(node, properties={"nickname": "Al", "age": "thirty"}).rejected
    assert err.error_code is ErrorCode.SCHEMA_TYPE_MISMATCH
    assert err.message == "Person.age must be integer, not string"
    assert err.details == {"label": "Person", "property": "age", "expected": "integer", "got": "string"}


def test_enum_values_scalar_and_array() -> None:
    assert node(properties={"role": "dev"}).properties == {"role": "dev"}
    assert node(properties={"skills": ["py", "go"]}).properties == {"skills": ["py", "go"]}
    err = rejection(node, properties={"skills": ["py", "rust"]}).rejected
    assert err.error_code is ErrorCode.SCHEMA_TYPE_MISMATCH
    assert err.details == {"label": "Person", "property": "skills", "allowed": ["py", "go"]}
    assert rejection(node, properties={"role": "ceo"}).rejected.details == {
        "label": "Person",
        "property": "role",
        "allowed": ["dev", "ops"],
    }


# --- limits and field names ----------------------------------------------------------------------


def test_limits_apply_to_identity_and_properties_and_name_the_field() -> None:
    one = Policy(limits=Limits(max_properties=1))
    keys = rejection(node, one, merge_keys={"name": "Alice", "nick": "Al"}).rejected
    assert keys.details == {"limit": "max_properties", "max": 1, "field": "merge_keys"}
    props = rejection(node, one, properties={"age": 30, "nick": "Al"}).rejected
    assert props.details == {"limit": "max_properties", "max": 1, "field": "properties"}
    assert node(one, properties={"age": 30}).properties == {"age": 30}


def test_a_bad_key_names_the_map_it_is_in() -> None:
    assert rejection(node, merge_keys={"bad key": "x"}).rejected.details == {"field": "merge_keys key"}
    assert rejection(node, properties={"bad key": "x"}).rejected.details == {"field": "properties key"}


# --- the plan ------------------------------------------------------------------------------------


def test_the_plan_carries_the_whole_provenance() -> None:
    plan = node()
    assert plan.provenance == Provenance(0.675, "t", "manual", "0.1.0", STAMP.now, "tester")
    params = plan.statement.params
    assert (params["extraction_method"], params["write_gate_version"]) == ("manual", "0.1.0")
    assert (params["written_by"], params["updated_by"]) == ("tester", "tester")


def test_a_plan_for_a_batch_compiles_no_statement() -> None:
    req = WriteNodeRequest.model_validate(
        {"label": "Person", "merge_keys": {"name": "A"}, "source": "t", "extraction_method": "api"}
    )
    plan = plan_node_write(req, REGISTRY, Policy(), PROVIDER, STAMP)  # no dialect: no statement of its own
    assert plan.statement.text == "" and dict(plan.statement.params) == {}
    assert plan.result.label == "Person" and plan.result.confidence == 0.5


# --- relationships -------------------------------------------------------------------------------


def test_relationship_plan_has_its_endpoints_properties_and_provenance() -> None:
    plan = rel(weight=0.25)
    assert plan.start == Endpoint("Person", {"name": "A"}) and plan.end == Endpoint("Organization", {"name": "B"})
    assert plan.merge_endpoints is False and plan.properties == {"since": 2020}
    assert plan.provenance == Provenance(0.5, "t", "api", "0.1.0", STAMP.now, "tester")
    assert plan.result.remapped_from is None and plan.result.type == "WORKS_FOR"
    params = plan.statement.params
    assert params["weight"] == 0.25 and "from_stub" not in params and "remapped_from" not in params
    claim = ["tester", "t", "api", 0.5, STAMP.now]  # the value travels with its claim
    assert params["properties"] == {"since": 2020, "_p_since": claim}
    assert params["source"] == "t" and params["written_by"] == "tester"


def test_merge_endpoints_plans_stub_endpoints() -> None:
    plan = rel(endpoint_policy="merge_endpoints")
    assert plan.merge_endpoints is True
    assert plan.statement.params["from_stub"]["name"] == "A" and plan.statement.params["to_stub"]["name"] == "B"


@pytest.mark.parametrize("raw,breadcrumb", [("EMPLOYED_BY", ":EMPLOYED_BY"), (":works_for", ":works_for")])
def test_relationship_type_remapped_by_absorbs_or_case_drift(raw: str, breadcrumb: str) -> None:
    plan = rel(type=raw)
    assert plan.result.type == "WORKS_FOR" and plan.result.remapped_from == breadcrumb
    assert plan.statement.params["remapped_from"] == breadcrumb


def test_free_text_relationship_type() -> None:
    plan = rel(free_text=True, type="works for")
    assert plan.result.type == "WORKS_FOR" and plan.result.remapped_from == ":works for"
    assert rel(free_text=True, type="WORKS_FOR").result.remapped_from is None
    # Not free text, the same text is not an identifier.
    assert rejection(rel, type="works for").rejected.details == {"field": "type"}


@pytest.mark.parametrize("raw,named", [(":DIRECTED", "DIRECTED"), ("!!!", "!!!")])
def test_unknown_relationship_type_names_it_and_the_known_ones(raw: str, named: str) -> None:
    err = rejection(rel, free_text=raw == "!!!", type=raw).rejected
    assert err.error_code is ErrorCode.SCHEMA_UNKNOWN_LABEL
    assert err.message == f"relationship type {named!r} is not registered"
    assert err.details == {"type": named, "known_types": ["WORKS_FOR"]}


@pytest.mark.parametrize(
    "changes,side,label,allowed",
    [
        ({"to_label": "Person", "to_keys": {"name": "B"}}, "to", "Person", ["Organization"]),
        ({"from_label": "Organization"}, "from", "Organization", ["Person"]),
        # An unknown endpoint label goes to the fallback first, which the type does not allow either.
        ({"from_label": "Ticket"}, "from", "Entity", ["Person"]),
    ],
)
def test_an_endpoint_label_the_type_does_not_allow(changes: dict, side: str, label: str, allowed: list) -> None:
    err = rejection(rel, **changes).rejected
    assert err.error_code is ErrorCode.SCHEMA_UNKNOWN_LABEL
    assert err.message == f"this relationship type does not allow :{label} as its {side} endpoint"
    assert err.details == {"reason": "endpoint_label_not_allowed", "endpoint": side, "label": label, "allowed": allowed}


@pytest.mark.parametrize("side", ["from", "to"])
def test_endpoint_keys_are_checked_and_named_by_side(side: str) -> None:
    assert rejection(rel, **{f"{side}_keys": {}}).rejected.details == {"field": f"{side}_keys"}
    assert rejection(rel, **{f"{side}_keys": {"bad key": "x"}}).rejected.details == {"field": f"{side}_keys key"}
    assert rejection(rel, **{f"{side}_keys": {"confidence": 1}}).rejected.details == {"fields": ["confidence"]}
    one = Policy(limits=Limits(max_properties=1))
    err = rejection(rel, one, **{f"{side}_keys": {"name": "A", "nick": "B"}}).rejected
    assert err.details == {"limit": "max_properties", "max": 1, "field": f"{side}_keys"}


def test_relationship_labels_are_identifiers_not_free_text_and_the_refusal_names_the_endpoint() -> None:
    assert rejection(rel, from_label="a person").rejected.details == {"field": "from_label"}
    assert rejection(rel, to_label="A" * 129).rejected.details == {"field": "to_label"}


def test_relationship_property_limits_and_names() -> None:
    one = Policy(limits=Limits(max_properties=1))
    err = rejection(rel, one, properties={"since": 2020, "until": 2024}).rejected
    assert err.details == {"limit": "max_properties", "max": 1, "field": "properties"}
    assert rejection(rel, properties={"bad key": 1}).rejected.details == {"field": "properties key"}


def test_free_text_type_that_reads_as_the_name_keeps_its_spelling() -> None:
    plan = rel(free_text=True, type=" WORKS_FOR ")
    assert plan.result.type == "WORKS_FOR" and plan.result.remapped_from == ": WORKS_FOR "


def test_labels_and_types_are_identifiers_unless_free_text_is_asked_for() -> None:
    node_req = WriteNodeRequest.model_validate(
        {"label": " Person ", "merge_keys": {"name": "A"}, "source": "t", "extraction_method": "api"}
    )
    err = rejection(plan_node_write, node_req, REGISTRY, Policy(), PROVIDER, STAMP)
    assert err.rejected.details == {"field": "label"}
    rel_req = WriteRelationshipRequest.model_validate(
        {
            "type": "works for",
            "from_label": "Person",
            "from_keys": {"name": "A"},
            "to_label": "Organization",
            "to_keys": {"name": "B"},
            "properties": {"since": 2020},
            "source": "t",
            "extraction_method": "api",
        }
    )
    err = rejection(plan_relationship_write, rel_req, REGISTRY, Policy(), PROVIDER, STAMP)
    assert err.rejected.details == {"field": "type"}
    assert rejection(resolve_relationship_type, "works for", REGISTRY).rejected.details == {"field": "type"}
    assert resolve_relationship_type("works for", REGISTRY, free_text=True).entry.label == "WORKS_FOR"


STRICT = Policy(undeclared_properties=UndeclaredPolicy.REJECT)


@pytest.mark.parametrize(
    "changes,field",
    [({"properties": {"nickname": "x"}}, "properties"), ({"merge_keys": {"name": "A", "nick": "x"}}, "merge_keys")],
)
def test_an_undeclared_name_is_refused_naming_the_map_it_is_in(changes: dict, field: str) -> None:
    err = rejection(node, STRICT, **changes).rejected
    assert err.error_code is ErrorCode.SCHEMA_UNKNOWN_PROPERTY and err.details["field"] == field


def test_a_name_the_profile_writes_on_every_node_is_declared_for_it() -> None:
    request = WriteNodeRequest.model_validate(
        {"label": "Person", "merge_keys": {"name": "A"}, "properties": {"observations": ["x"]}}
        | {"source": "t", "extraction_method": "manual", "reliability": 0.9}
    )
    plan = plan_node_write(
        request, REGISTRY, STRICT, PROVIDER, STAMP, also_declared=frozenset({"observations"}), dialect=FalkorDBDialect()
    )
    assert plan.statement.params["properties"]["observations"] == ["x"]
    assert rejection(plan_node_write, request, REGISTRY, STRICT, PROVIDER, STAMP).rejected.details["properties"] == [
        "observations"
    ]


def test_an_undeclared_relationship_property_is_refused_naming_properties() -> None:
    err = rejection(rel, STRICT, properties={"since": 2020, "nick": 1}).rejected
    assert err.details == {"label": "WORKS_FOR", "field": "properties", "properties": ["nick"], "known": ["since"]}


def test_a_name_declared_for_the_profile_is_still_no_merge_key() -> None:
    request = WriteNodeRequest.model_validate(
        {"label": "Person", "merge_keys": {"name": "A", "nick": "x"}, "properties": {}}
        | {"source": "t", "extraction_method": "manual", "reliability": 0.9}
    )
    refused = rejection(plan_node_write, request, REGISTRY, STRICT, PROVIDER, STAMP, also_declared=frozenset({"nick"}))
    assert refused.rejected.error_code is ErrorCode.INVALID_INPUT  # declared, so known: refused as no merge key


def test_a_relationship_property_spelled_like_its_weight_is_a_computed_field_not_a_new_name() -> None:
    """`we_ight` folds to `weight`, which the gate computes on a relationship (not on a node): refused as
    computed, under any undeclared-property policy that reads names."""
    err = rejection(rel, STRICT, properties={"since": 2020, "we_ight": 2}).rejected
    assert err.error_code is ErrorCode.SCHEMA_PROTECTED_FIELD and err.details["reason"] == "computed_field"
    plan = node(STRICT, properties={"age": 3})  # the node's own computed fields do not hold `weight`
    assert plan.statement.params["properties"]["age"] == 3


def test_a_planned_write_carries_its_plans_values_into_its_parameters() -> None:
    """planned_node_values: the plan's key, values, remap, property remaps, provenance and change id; a single
    write's identity is created with its label's text, a batch row's without (the batch adds it); `label`
    replaces the plan's where a benchmark's raw rows write another."""
    plan = node(
        Policy(undeclared_properties=UndeclaredPolicy.REMAP), label="person", properties={"AGE": 30, "nick": "Al"}
    )
    single = planned_node_values(plan, "c1", batch=False)
    assert (single["key"], single["values"], single["change_id"]) == (
        '{"name":"Alice"}',
        {"age": 30, "nick": "Al"},
        "c1",
    )
    assert (single["remapped_from"], single["extra"]["_schema_property_remaps"]) == (":person", ["AGE→age"])
    assert single["numbers"] == ["age"] and single["confidence"] == 0.675 and single["written_by"] == "tester"
    assert single["search"] == "\talice\tperson\tperson\tal" and single["identity"]["_f__label"] == ["person"]
    row = planned_node_values(plan, "c1", batch=True, label="Bench")
    assert row["search"] == "\talice\tbench\tperson\tal" and "_f__label" not in row["identity"]
    assert row["label_fold"] == ["bench", "person"] and "confidence" not in row


def test_a_source_over_the_string_limit_is_refused_as_any_text_is() -> None:
    """The source is stamped on the node: held to WRITE_GATE_MAX_STRING_LENGTH like a property."""
    err = rejection(node, Policy(limits=Limits(max_string_length=10)), source="s" * 11).rejected
    assert err.error_code is ErrorCode.INVALID_INPUT
    assert err.details == {"limit": "max_string_length", "max": 10, "field": "source"}
    assert node(Policy(limits=Limits(max_string_length=10)), source="s" * 10).result.label == "Person"
