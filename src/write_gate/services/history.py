"""The history read tools: get_history (a node's or relationship's change records) and list_conflicts."""

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from write_gate.core.claims import ValueProvenance, parse_claim
from write_gate.core.clock import as_utc_text, utc_now
from write_gate.core.cypher.history_reads import CONFLICT_PROBE, CONFLICTS, changes_of
from write_gate.core.cypher.statement import Statement
from write_gate.core.decisions import Policy, UnknownLabelPolicy, resolve_label, resolve_relationship_type
from write_gate.core.feed_windows import Window, before_cursor
from write_gate.core.history import value_changes
from write_gate.core.identifiers import normalize_identifier
from write_gate.core.identity import identity_key
from write_gate.core.model import ErrorCode, GateRejection, KeyValue
from write_gate.core.resolution import keys_of
from write_gate.core.values import clean_map
from write_gate.services.gate import Gate
from write_gate.services.reads import Cursor, decode_cursor, encode_cursor
from write_gate.services.windowed import Read, window_rows

MAX_LIMIT = 500
Since = Annotated[datetime, WithJsonSchema({"type": "string"})] | SkipJsonSchema[None]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Optional, advertised as their type only (a null is no filter), as the reads' provenance fields are.
Name = str | SkipJsonSchema[None]
Keys = dict[str, KeyValue] | SkipJsonSchema[None]


class GetHistoryRequest(_Request):
    label: Name = None  # a node's label (with merge_keys), or a relationship's type (with both endpoints)
    merge_keys: Keys = None
    from_label: Name = None
    from_keys: Keys = None
    to_label: Name = None
    to_keys: Keys = None
    property: Name = None
    since: Since = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    cursor: Cursor = None


class Change(BaseModel):
    change_id: str
    op: str
    property: str
    before: Any = None
    after: Any = None
    before_claim: ValueProvenance | None = None
    claim: ValueProvenance | None = None
    agent: str | None = None
    at: str
    revision: int | None = None


class History(BaseModel):
    changes: list[Change]
    next_cursor: str | None = None


class ListConflictsRequest(_Request):
    status: Literal["open", "settled", "resolved", "all"] = "open"
    label: Name = None
    property: Name = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    cursor: Cursor = None


class ConflictOut(BaseModel):
    conflict_id: str
    status: str
    subject: dict[str, Any] = Field(description="label and merge_keys, or type and both endpoints.")
    property: str
    policy: str | None = None
    outcome: str | None = None
    current_value: Any = None
    current_claim: ValueProvenance | None = None
    incoming_value: Any = None
    incoming_claim: ValueProvenance | None = None
    at: str
    resolved_by: str | None = None
    resolved_at: str | None = None
    picked: Any = None


class Conflicts(BaseModel):
    conflicts: list[ConflictOut]
    next_cursor: str | None = None


def _keys(raw: dict[str, Any], what: str, limits: Any) -> str:
    keys, _ = clean_map(raw, what, limits)
    return identity_key(keys)


def _subject_params(gate: Gate, request: GetHistoryRequest) -> tuple[bool, dict[str, Any]]:
    """Which subject the request names, resolved as the writes resolve it (drifted labels remapped)."""
    ends = (request.from_label, request.from_keys, request.to_label, request.to_keys)
    limits = gate.policy.limits
    if request.label is None or (request.merge_keys is None) == all(e is None for e in ends):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            "name a node (label, merge_keys) or a relationship (label as its type, from_label, from_keys, "
            "to_label, to_keys)",
            field="label",
        )
    registry = gate.registry
    if request.merge_keys is not None:
        label = resolve_label(request.label, registry, gate.policy).entry.label
        return False, {"label": label, "key": _keys(request.merge_keys, "merge_keys", limits)}
    if any(e is None for e in ends):
        raise GateRejection(
            ErrorCode.INVALID_INPUT, "a relationship needs from_label, from_keys, to_label and to_keys", field="label"
        )
    assert request.from_label and request.to_label and request.from_keys and request.to_keys is not None
    return True, {
        "label": resolve_relationship_type(request.label, registry).entry.label,
        "from_label": resolve_label(request.from_label, registry, gate.policy).entry.label,
        "from_key": _keys(request.from_keys, "from_keys", limits),
        "to_label": resolve_label(request.to_label, registry, gate.policy).entry.label,
        "to_key": _keys(request.to_keys, "to_keys", limits),
    }


def _change(record: dict[str, Any]) -> Change:
    return Change(
        change_id=record["change_id"],
        op=record["op"],
        property=record["property"],
        before=record.get("before"),
        after=record.get("after"),
        before_claim=parse_claim(record.get("before_claim")),
        claim=parse_claim(record.get("claim")),
        agent=record.get("agent"),
        at=record["at"],
        revision=record.get("revision"),
    )


def history_position(cursor: str | None) -> dict[str, Any]:
    """A get_history cursor's position: `s` (seq), `c` (change id), `p` (property); a cursor from before `seq`
    existed holds the `at` in `a`, which is the seq of every record of its time (core/history.py)."""
    if cursor is None:
        return {}
    try:
        return decode_cursor(cursor, "history", s=str, c=str, p=str) or {}
    except GateRejection:
        old = decode_cursor(cursor, "history", a=str, c=str, p=str) or {}
        return {"s": old["a"], "c": old["c"], "p": old["p"]}


async def get_history(gate: Gate, request: GetHistoryRequest) -> History:
    relationship, subject = _subject_params(gate, request)
    position = history_position(request.cursor)
    prop = normalize_identifier(request.property, "property") if request.property is not None else None
    params = {
        **subject,
        "property": prop,
        "since": as_utc_text(request.since) if request.since is not None else None,
        "after_seq": position.get("s"),
        "after_id": position.get("c"),
        "after_property": position.get("p"),
        # Records: each holds at least one value past the cursor, but the cursor's own may hold none more; and
        # one more value than the page says whether there is a next one.
        "limit": request.limit + 2,
    }
    rows = await gate.reader.read(Statement(changes_of(relationship).text, params))
    after = (position["s"], position["c"], position["p"]) if position else None
    entries: list[tuple[tuple[str, str, str], dict[str, Any]]] = []
    for row in rows:
        values = value_changes(row["change"])
        for value in sorted(values, key=lambda v: str(v.get("property")), reverse=True):
            place = (row["seq"], row["change_id"], str(value.get("property")))
            if (prop is None or value.get("property") == prop) and (after is None or place < after):
                entries.append((place, value))
    page = entries[: request.limit]
    more = len(entries) > request.limit
    cursor = None
    if more and page:
        seq, change_id, property_ = page[-1][0]
        cursor = encode_cursor("history", s=seq, c=change_id, p=property_)
    return History(changes=[_change(value) for _, value in page], next_cursor=cursor)


def subject_of_record(record: dict[str, Any]) -> dict[str, Any]:
    """What a history or conflict record is about: a node (label, merge keys) or a relationship (type, ends)."""
    if record.get("subject") == "relationship":
        return {
            "type": record.get("label"),
            "from_label": record.get("from_label"),
            "from_keys": keys_of(record.get("from_key") or ""),
            "to_label": record.get("to_label"),
            "to_keys": keys_of(record.get("to_key") or ""),
        }
    return {"label": record.get("label"), "merge_keys": keys_of(record.get("key") or "")}


def _conflict(record: dict[str, Any]) -> ConflictOut:
    return ConflictOut(
        conflict_id=record["conflict_id"],
        status=record["status"],
        subject=subject_of_record(record),
        property=record["property"],
        policy=record.get("policy"),
        outcome=record.get("outcome"),
        current_value=record.get("current_value"),
        current_claim=parse_claim(record.get("current_claim")),
        incoming_value=record.get("incoming_value"),
        incoming_claim=parse_claim(record.get("incoming_claim")),
        at=record["at"],
        resolved_by=record.get("resolved_by"),
        resolved_at=record.get("resolved_at"),
        picked=record.get("picked"),
    )


def filter_label(gate: Gate, raw: str) -> str:
    """A node label or relationship type as the writes resolve it; a name neither knows is matched as written
    (it finds nothing)."""
    registry = gate.registry
    try:
        return resolve_label(raw, registry, Policy(unknown_labels=UnknownLabelPolicy.REJECT)).entry.label
    except GateRejection:
        pass
    try:
        return resolve_relationship_type(raw, registry).entry.label
    except GateRejection:
        return normalize_identifier(raw, "label")


async def list_conflicts(gate: Gate, request: ListConflictsRequest) -> Conflicts:
    position = decode_cursor(request.cursor, "conflicts", a=str, c=str) or {}
    filters = {
        "status": None if request.status == "all" else request.status,
        "label": filter_label(gate, request.label) if request.label is not None else None,
        "property": normalize_identifier(request.property, "property") if request.property is not None else None,
    }
    rows = await conflicts_page(gate.reader.read, filters, position.get("a"), position.get("c"), request.limit + 1)
    page = rows[: request.limit]
    last = page[-1] if page else None
    more = len(rows) > request.limit
    cursor = encode_cursor("conflicts", a=last["at"], c=last["conflict_id"]) if more and last else None
    return Conflicts(conflicts=[_conflict(row["conflict"]) for row in page], next_cursor=cursor)


async def conflicts_page(
    read: Read, filters: dict[str, Any], after_at: str | None, after_id: str | None, limit: int
) -> list[dict[str, Any]]:
    """The `limit` newest conflicts older than the cursor (`after_at`, `after_id`; None: from the newest) that
    pass `filters` (`status`, `label`, `property`), from a window that holds them (core/feed_windows.py)."""

    def probe(stretch: Window, cap: int) -> Statement:
        return Statement(CONFLICT_PROBE.text, {**filters, "low": stretch.low, "high": stretch.high, "cap": cap})

    def page(window: Window) -> Statement:
        params = {**filters, "after_at": after_at, "after_id": after_id, "limit": limit}
        return Statement(CONFLICTS.text, {**params, "low": window.low, "high": window.high})

    return await window_rows(read, before_cursor(after_at, utc_now()), probe, page, limit)
