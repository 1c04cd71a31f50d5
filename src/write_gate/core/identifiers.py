"""Identifier rules: the only agent text that ever appears in Cypher is a name that passed these."""

import functools
import re
from typing import Any

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.stat_counts import STAT_LABELS

MAX_IDENTIFIER_LENGTH = 128
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Every field the gate computes, the one list the stamps and the protection both come from: agents declare
# inputs, the gate produces these, and no write may set one under any spelling. Provenance, stamped on every
# write in this order, is the claim (who said it, from where, how, how sure) and the change (when, by whom):
# a change that is not a claim of its own (an observation appended, one deleted) updates only the change.
# A relationship's weight is computed too (averaged on update), from its own argument.
COMPUTED_FIELDS: dict[str, str] = {
    "confidence": "claim",
    "source": "claim",
    "extraction_method": "claim",
    "write_gate_version": "claim",
    "written_by": "claim",
    "last_updated": "change",
    "updated_by": "change",
    "weight": "relationship",
    # Set once, when the node or relationship is created, as the same ISO-8601 text as last_updated.
    "created_at": "creation",
}
CREATED_FIELD = "created_at"
LAST_UPDATED = "last_updated"
CLAIM_FIELDS = tuple(name for name, kind in COMPUTED_FIELDS.items() if kind == "claim")
CHANGE_FIELDS = tuple(name for name, kind in COMPUTED_FIELDS.items() if kind == "change")
PROVENANCE_FIELDS = CLAIM_FIELDS + CHANGE_FIELDS
PROTECTED_FIELDS = frozenset((*PROVENANCE_FIELDS, CREATED_FIELD))  # on a node
PROTECTED_RELATIONSHIP_FIELDS = frozenset(COMPUTED_FIELDS)

# Labels the gate itself owns; no registry entry may claim them, so no write can reach them.
RESERVED_LABELS = frozenset(
    {
        "Schema",
        "WriteGateMigration",
        "WriteGateRegistry",
        "WriteGateChange",
        "WriteGateConflict",
        "SavedSearch",
        "WriteGateIdempotency",  # safe retries' records (core.idempotency)
        "WriteGateQuarantine",
        "WriteGateRate",  # write-rate buckets (core.rate_limit)
        *STAT_LABELS,  # the statistics' counters (core.stat_counts)
    }
)


@functools.lru_cache(maxsize=8192)  # the same few names come through on every call
def is_identifier(name: str) -> bool:
    return len(name) <= MAX_IDENTIFIER_LENGTH and _IDENTIFIER.fullmatch(name) is not None


def string_literal(name: str) -> str:
    """An identifier as a Cypher string literal (a label or index name in a procedure call): it holds no quote or
    backslash, so nothing needs escaping; anything else is refused, never pasted. No length limit: an index name
    is a prefix and a label."""
    if _IDENTIFIER.fullmatch(name) is None:
        raise ValueError(f"not an identifier: {name!r}")
    return f"'{name}'"


def normalize_identifier(raw: str, what: str) -> str:
    """Strip leading colons (agents write ':Person'), then require a plain identifier."""
    name = raw.lstrip(":")
    if not is_identifier(name):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{what} must be letters, digits or '_', start with a letter or '_', "
            f"and be at most {MAX_IDENTIFIER_LENGTH} characters",
            field=what,
        )
    return name


_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")


def as_identifier(free_text: str) -> str | None:
    """The official memory server takes any string as a type ("works at", "reports-to"); the registry holds
    identifiers. Runs of other characters become '_' ("works_at"), which the registry then resolves like any
    drift (case-folded, absorbed, or unknown); None when nothing usable is left ("", "!!!")."""
    name = _NOT_IDENTIFIER.sub("_", free_text.strip()).strip("_")
    if name[:1].isdigit():
        name = "_" + name
    return name if is_identifier(name) else None


def is_protected(key: str, protected: frozenset[str] = PROTECTED_FIELDS) -> bool:
    """Gate-owned, under any spelling: `Confidence` and `WRITTEN_BY` are the same fields to a reader."""
    key = key.lstrip(":")
    return key.startswith("_") or key.casefold() in protected


def quote(name: str) -> str:
    """Backtick-quote a validated identifier (which holds no backtick: nothing to escape)."""
    if not is_identifier(name):
        raise ValueError(f"refusing to quote an unvalidated identifier: {name!r}")
    return f"`{name}`"


# The property names a write remapped to declared ones ("e_mail→email"), kept on what it wrote, as labels keep
# `_schema_remap_from`: a list of strings, which both engines store natively.
PROPERTY_REMAPS_FIELD = "_schema_property_remaps"


REMAP_FIELD = "_schema_remap_from"  # what a remapped write keeps of the label (or type) it was sent


def remap_breadcrumb(raw_label: str) -> str:
    """The `_schema_remap_from` value: ':' + the label as written, leading colons folded to one."""
    return ":" + raw_label.lstrip(":")


def written_label(breadcrumb: Any) -> str | None:
    """The label (or type) as written, from a `_schema_remap_from` value (":company" -> "company"); None for a
    node written under its own label, or a value that names none."""
    if not isinstance(breadcrumb, str) or not breadcrumb.strip(":"):
        return None
    return breadcrumb.lstrip(":")
