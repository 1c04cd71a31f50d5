"""Provenance per value: who wrote each property value, from where, how, how sure, and when.

Stored beside the value as one gate-owned property, `_p_<property>`, holding a list in `VALUE_CLAIM_FIELDS`
order: `[agent, source, extraction_method, confidence, at]`. Neither engine shares a map property type
(FalkorDB has none), and a list of mixed scalars is stored and returned unchanged by FalkorDB and Memgraph
alike, so one property per value costs one more property, not five. The prefix starts with `_`, which agent
input may never use (`identifiers.is_protected`), so a claim can never collide with an agent's property.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

CLAIM_PREFIX = "_p_"
VALUE_CLAIM_FIELDS = ("agent", "source", "extraction_method", "confidence", "at")
# Positions in the stored list, for the statements that filter on them.
AGENT, SOURCE, METHOD, CONFIDENCE, AT = range(len(VALUE_CLAIM_FIELDS))


class ValueProvenance(BaseModel):
    """One value's claim, as reads show it."""

    agent: str
    source: str
    extraction_method: str
    confidence: float
    at: str  # ISO-8601 UTC, the same text as last_updated
    # `confidence` decayed to the moment a read ran (core/decay.py); the same as `confidence` where no
    # half-life applies. Reads always set it; elsewhere (records, conflicts) it is absent.
    effective_confidence: float | SkipJsonSchema[None] = Field(default=None, exclude_if=lambda v: v is None)


def claim_name(prop: str) -> str:
    """The gate's property holding `prop`'s claim; `prop` is a validated identifier (a checked key)."""
    return CLAIM_PREFIX + prop


def is_claim(name: str) -> bool:
    return name.startswith(CLAIM_PREFIX)


def claim_value(agent: str, source: str, extraction_method: str, confidence: float, at: str) -> list[Any]:
    return [agent, source, extraction_method, confidence, at]


def claim_properties(props: Iterable[str], claim: list[Any]) -> dict[str, list[Any]]:
    """`{"_p_age": claim, ...}` for every property a write sets."""
    return {claim_name(prop): claim for prop in props}


def parse_claim(stored: Any) -> ValueProvenance | None:
    """A stored claim, or None for anything else (a property written before claims, or damaged)."""
    if not (isinstance(stored, list) and len(stored) == len(VALUE_CLAIM_FIELDS)):
        return None
    agent, source, method, confidence, at = stored
    if not all(isinstance(x, str) for x in (agent, source, method, at)):
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    return ValueProvenance(agent=agent, source=source, extraction_method=method, confidence=confidence, at=at)


def split_claims(props: Mapping[str, Any], parse: bool = True) -> tuple[dict[str, Any], dict[str, ValueProvenance]]:
    """A node's or relationship's properties without the claims, and each value's claim by property (none
    when not `parse`: a read that does not show claims need not build them)."""
    plain: dict[str, Any] = {}
    claims: dict[str, ValueProvenance] = {}
    for name, value in props.items():
        if not name.startswith(CLAIM_PREFIX):
            plain[name] = value
        elif parse and (parsed := parse_claim(value)) is not None:
            claims[name[len(CLAIM_PREFIX) :]] = parsed
    return plain, claims


@dataclass(frozen=True)
class ClaimFilter:
    """Reads keep a node when one of its values' claims matches every condition given (None: any)."""

    agent: str | None = None
    source: str | None = None
    min_confidence: float | None = None
    since: str | None = None  # ISO-8601 UTC text; compared as text, which orders as time

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.agent, self.source, self.min_confidence, self.since))

    def matches(self, claim: ValueProvenance) -> bool:
        return (
            (self.agent is None or claim.agent == self.agent)
            and (self.source is None or claim.source == self.source)
            and (self.min_confidence is None or claim.confidence >= self.min_confidence)
            and (self.since is None or claim.at >= self.since)
        )

    def params(self) -> dict[str, Any]:
        return {
            "p_agent": self.agent,
            "p_source": self.source,
            "p_min_confidence": self.min_confidence,
            "p_since": self.since,
        }
