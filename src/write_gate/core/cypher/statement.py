"""A statement (text and parameters) and the values the builders take: a write's provenance, an endpoint."""

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from write_gate.core.claims import ValueProvenance, claim_value
from write_gate.core.identifiers import PROVENANCE_FIELDS
from write_gate.core.identity import (
    identity_key,
)


@dataclass(frozen=True)
class Statement:
    text: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Provenance:
    confidence: float
    source: str
    extraction_method: str
    write_gate_version: str
    last_updated: str
    written_by: str  # the authenticated agent; never something the agent says in its arguments

    def params(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in PROVENANCE_FIELDS if name != "updated_by"}
        return {**values, "updated_by": self.written_by}

    def restamped(self, now: str) -> "Provenance":
        """The same provenance stamped at `now` (a long call's later statement: services/call_stamps.py)."""
        return self if now == self.last_updated else replace(self, last_updated=now)

    def claim(self) -> list[Any]:
        """What each value this write sets is stamped with (`core.claims`): one list per distinct provenance (a
        batch's items mostly share theirs, and the engine's parameters are written once for each list), never
        changed by its users."""
        return _claim(self)

    def value_claim(self) -> ValueProvenance:
        """The same claim, as conflicts compare it: one object per distinct provenance (the items of a batch
        mostly share theirs), never changed by its users."""
        return _value_claim(self)


@functools.lru_cache(maxsize=1024)
def _claim(provenance: Provenance) -> list[Any]:
    p = provenance
    return claim_value(p.written_by, p.source, p.extraction_method, p.confidence, p.last_updated)


@functools.lru_cache(maxsize=1024)
def _value_claim(provenance: Provenance) -> ValueProvenance:
    return ValueProvenance(
        agent=provenance.written_by,
        source=provenance.source,
        extraction_method=provenance.extraction_method,
        confidence=provenance.confidence,
        at=provenance.last_updated,
    )


@dataclass(frozen=True)
class Endpoint:
    label: str
    keys: Mapping[str, Any]
    remapped_from: str | None = None  # the label as sent, where the registry remapped it: a stub keeps it

    @property
    def key(self) -> str:
        return identity_key(self.keys)
