"""Per-value provenance (core.claims): the stored form, its parsing, and the read filter's decision."""

from datetime import datetime, timedelta, timezone

from write_gate.core.claims import (
    ClaimFilter,
    ValueProvenance,
    claim_properties,
    claim_value,
    parse_claim,
    split_claims,
)
from write_gate.core.clock import as_utc_text
from write_gate.core.cypher.clauses import identity_properties, written_properties
from write_gate.core.cypher.statement import Provenance
from write_gate.core.identifiers import is_protected

PROV = Provenance(0.75, "api", "manual", "0.1.0", "2026-01-02T03:04:05.678Z", "api-bot")
CLAIM = ["api-bot", "api", "manual", 0.75, "2026-01-02T03:04:05.678Z"]


def test_a_write_stamps_each_value_and_created_at_with_its_own_claim() -> None:
    assert PROV.claim() == CLAIM == claim_value("api-bot", "api", "manual", 0.75, "2026-01-02T03:04:05.678Z")
    written = written_properties({"age": 36}, PROV)
    assert written["_p_age"] == CLAIM and "_p__f_age" not in written
    identity = identity_properties("Person", {"name": "Alice"}, PROV)
    assert identity["_p_name"] == CLAIM and identity["created_at"] == PROV.last_updated
    assert claim_properties([], CLAIM) == {}


def test_claim_names_and_created_at_are_refused_in_agent_input() -> None:
    assert is_protected("_p_age") and is_protected("created_at") and is_protected("CREATED_AT")


def test_parse_reads_only_well_formed_claims() -> None:
    assert parse_claim(CLAIM) == ValueProvenance(
        agent="api-bot", source="api", extraction_method="manual", confidence=0.75, at="2026-01-02T03:04:05.678Z"
    )
    for bad in (
        None,
        "x",
        CLAIM[:4],
        [1, "api", "manual", 0.5, "t"],
        ["a", "s", "m", True, "t"],
        ["a", "s", "m", "0.5", "t"],
    ):
        assert parse_claim(bad) is None
    plain, claims = split_claims({"age": 36, "_p_age": CLAIM, "_p_old": "damaged", "created_at": "t"})
    assert plain == {"age": 36, "created_at": "t"} and set(claims) == {"age"}
    # A read that does not show claims drops them the same way, unparsed.
    assert split_claims({"age": 36, "_p_age": CLAIM, "_p_old": "damaged"}, parse=False) == ({"age": 36}, {})


def test_the_filter_needs_one_value_to_match_every_condition_given() -> None:
    claim = parse_claim(CLAIM)
    assert claim is not None
    assert not ClaimFilter().active and ClaimFilter().matches(claim)
    assert ClaimFilter(agent="api-bot", source="api", min_confidence=0.75).matches(claim)
    assert not ClaimFilter(min_confidence=0.76).matches(claim)
    assert not ClaimFilter(agent="llm-bot").matches(claim)
    assert ClaimFilter(since="2026-01-02T03:04:05.678Z").matches(claim)  # at or after
    assert not ClaimFilter(since="2026-01-02T03:04:05.679Z").matches(claim)
    assert ClaimFilter(agent="x").params() == {
        "p_agent": "x",
        "p_source": None,
        "p_min_confidence": None,
        "p_since": None,
    }


def test_since_is_compared_in_the_stored_text_form() -> None:
    assert as_utc_text(datetime(2026, 1, 2, 3, 4, 5, 678000)) == "2026-01-02T03:04:05.678Z"  # naive: UTC
    plus_two = timezone(timedelta(hours=2))
    assert as_utc_text(datetime(2026, 1, 2, 5, 4, 5, 678000, tzinfo=plus_two)) == "2026-01-02T03:04:05.678Z"
