"""Identifier rules: the only agent text that ever appears in Cypher is a name that passed these."""

import functools
import re

from write_gate.model import ErrorCode, GateRejection

MAX_IDENTIFIER_LENGTH = 128
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Gate-computed provenance, stamped on every write in this order: agents declare inputs, the gate produces
# these. The claim (who said it, from where, how, how sure) and the change (when, by whom): a change that
# is not a claim of its own (an observation appended, one deleted) updates only the last two.
CLAIM_FIELDS = ("confidence", "source", "extraction_method", "write_gate_version", "written_by")
CHANGE_FIELDS = ("last_updated", "updated_by")
PROVENANCE_FIELDS = CLAIM_FIELDS + CHANGE_FIELDS
PROTECTED_FIELDS = frozenset(PROVENANCE_FIELDS)
# A relationship's weight is computed too (averaged on update); it is set with its own argument.
PROTECTED_RELATIONSHIP_FIELDS = PROTECTED_FIELDS | {"weight"}

# Labels the gate itself owns; no registry entry may claim them, so no write can reach them.
RESERVED_LABELS = frozenset({"Schema", "WriteGateMigration", "WriteGateRegistry"})


@functools.lru_cache(maxsize=8192)  # the same few names come through on every call
def is_identifier(name: str) -> bool:
    return len(name) <= MAX_IDENTIFIER_LENGTH and _IDENTIFIER.fullmatch(name) is not None


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


def is_protected(key: str, protected: frozenset[str] = PROTECTED_FIELDS) -> bool:
    """Gate-owned, under any spelling: `Confidence` and `WRITTEN_BY` are the same fields to a reader."""
    key = key.lstrip(":")
    return key.startswith("_") or key.casefold() in protected


def quote(name: str) -> str:
    """Backtick-quote a validated identifier. Doubling backticks is belt and braces: none can pass validation."""
    if not is_identifier(name):
        raise ValueError(f"refusing to quote an unvalidated identifier: {name!r}")
    return "`" + name.replace("`", "``") + "`"


def remap_breadcrumb(raw_label: str) -> str:
    """The `_schema_remap_from` value: ':' + the label as written, leading colons folded to one."""
    return ":" + raw_label.lstrip(":")
