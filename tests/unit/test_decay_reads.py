"""Reads that show claims show each one's effective confidence beside the stored one (issue 12, item 8), pure:
the half-life is the node's label's or the relationship type's entry's, else the claim's extraction method's."""

from datetime import UTC, datetime

from write_gate.core.claims import ValueProvenance, claim_value
from write_gate.core.registry import RegistrySnapshot, SchemaEntry
from write_gate.services.reads import Decay, to_entity, to_relation

NOW = datetime(2026, 12, 22, 8, tzinfo=UTC)
THIRTY_DAYS_AGO = "2026-11-22T08:00:00.000Z"
REGISTRY = RegistrySnapshot(
    [
        SchemaEntry("Person", merge_keys=("name",), half_life_days=30.0),
        SchemaEntry("Organization", merge_keys=("name",)),
        SchemaEntry("KNOWS", kind="relationship", half_life_days=60.0),
        SchemaEntry("WORKS_FOR", kind="relationship"),
    ]
)
DECAY = Decay(REGISTRY, {"llm": 15.0}, NOW)


def props(method: str, confidence: float = 0.8, at: str = THIRTY_DAYS_AGO) -> dict:
    return {"name": "Ann", "_p_age": claim_value("a", "s", method, confidence, at), "age": 36}


def test_the_labels_half_life_halves_a_claim_after_one_half_life() -> None:
    entity = to_entity(["Person"], props("manual"), True, DECAY.of_node(["Person"]))
    assert entity.provenance is not None
    claim = entity.provenance["age"]
    assert claim.confidence == 0.8 and claim.effective_confidence == 0.4


def test_the_label_wins_over_the_method_and_the_method_applies_where_the_label_names_none() -> None:
    assert DECAY.of_node(["Person"])(ValueProvenance(**_claim("llm"))) == 0.4  # the label's 30 days, not llm's 15
    assert DECAY.of_node(["Organization"])(ValueProvenance(**_claim("llm"))) == 0.2  # llm's 15 days: two halvings
    assert DECAY.of_node(["Organization"])(ValueProvenance(**_claim("manual"))) == 0.8  # no half-life: no decay
    assert DECAY.of_node(["Unregistered", "Person"])(ValueProvenance(**_claim("manual"))) == 0.4  # first registered


def test_relationships_weigh_by_their_types_entry() -> None:
    knows = to_relation("Ann", "Bob", "KNOWS", props("manual"), 1.0, True, DECAY.of_relationship("KNOWS"))
    assert (
        knows.provenance is not None and knows.provenance["age"].effective_confidence == 0.565685
    )  # half a half-life: 0.8 / sqrt(2)
    works = to_relation("Ann", "Acme", "WORKS_FOR", props("llm"), 1.0, True, DECAY.of_relationship("WORKS_FOR"))
    assert works.provenance is not None and works.provenance["age"].effective_confidence == 0.2


def test_without_decay_the_claim_has_no_effective_confidence_and_dumps_as_before() -> None:
    entity = to_entity(["Person"], props("manual"), True)
    assert entity.provenance is not None and entity.provenance["age"].effective_confidence is None
    assert "effective_confidence" not in entity.model_dump()["provenance"]["age"]
    weighed = to_entity(["Person"], props("manual"), True, DECAY.of_node(["Person"]))
    assert weighed.model_dump()["provenance"]["age"]["effective_confidence"] == 0.4


def test_a_claim_whose_time_is_damaged_is_shown_without_an_effective_confidence() -> None:
    entity = to_entity(["Person"], props("manual", at="last tuesday"), True, DECAY.of_node(["Person"]))
    assert entity.provenance is not None and entity.provenance["age"].effective_confidence is None


def _claim(method: str) -> dict:
    return {"agent": "a", "source": "s", "extraction_method": method, "confidence": 0.8, "at": THIRTY_DAYS_AGO}
