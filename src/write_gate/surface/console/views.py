"""What the console's pages show, shaped from the tools' answers and the console's reads: pure functions, no I/O.

Plots are drawn here as plain numbers for SVG rectangles the templates place (no script and no inline style is
needed to draw them, so the pages keep their strict Content-Security-Policy).
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from write_gate.core.claims import ValueProvenance
from write_gate.core.decay import effective_confidence, half_life_days
from write_gate.core.model import ErrorCode, GateRejection

MINUTES = 60  # the overview's window
CHART_WIDTH, CHART_HEIGHT = 600, 120


def minute_of(moment: datetime) -> str:
    """`2026-11-22T08:05`: a stored time's first 16 characters (core.clock's text)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


def window(now: datetime, minutes: int = MINUTES) -> list[str]:
    """The minutes of the last `minutes`, oldest first, this one last."""
    return [minute_of(now - timedelta(minutes=minutes - 1 - i)) for i in range(minutes)]


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    minute: str
    value: int


@dataclass(frozen=True)
class Series:
    """One plotted row: a name (an agent, an error code, or `all`), its total and its bars."""

    name: str
    total: int
    bars: list[Bar]
    peak: int


def series(name: str, counts: Mapping[str, int], minutes: list[str], height: int = CHART_HEIGHT) -> Series:
    peak = max((counts.get(m, 0) for m in minutes), default=0)
    step = CHART_WIDTH / len(minutes)
    bars = []
    for i, minute in enumerate(minutes):
        value = counts.get(minute, 0)
        tall = 0.0 if peak == 0 else round(height * value / peak, 2)
        bars.append(Bar(round(i * step, 2), round(height - tall, 2), round(step * 0.8, 2), tall, minute, value))
    return Series(name, sum(counts.get(m, 0) for m in minutes), bars, peak)


def per_minute(rows: Iterable[Mapping[str, Any]], by: str, count: str, minutes: list[str]) -> list[Series]:
    """`all` first, then one series per value of `by` (agent, error code), busiest first."""
    total: dict[str, int] = defaultdict(int)
    grouped: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        total[row["minute"]] += row[count]
        grouped[str(row.get(by) or "(none)")][row["minute"]] += row[count]
    out = [series("all", total, minutes)]
    out += sorted((series(name, counts, minutes, 40) for name, counts in grouped.items()), key=lambda s: -s.total)
    return out


def writes_by_agent(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent, its writes and last write summed over the reads' rows (the writes that changed values, and
    those that only held one beside another: each write is in one of them)."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        mine = out.setdefault(row["agent"], {"writes": 0, "last_at": None})
        mine["writes"] += row["writes"]
        if row["last_at"] is not None and (mine["last_at"] is None or row["last_at"] > mine["last_at"]):
            mine["last_at"] = row["last_at"]
    return out


def effective(claim: ValueProvenance | Mapping[str, Any] | None, label_half_life: float | None,
              by_method: Mapping[str, float], now: datetime) -> float | None:  # fmt: skip
    """A stored claim's confidence decayed to now, as writes compare claims (core/decay.py)."""
    if claim is None:
        return None
    c = claim if isinstance(claim, ValueProvenance) else ValueProvenance.model_validate(claim)
    half_life = half_life_days(label_half_life, c.extraction_method, by_method)
    return effective_confidence(c.confidence, c.at, now, half_life)


def parse_keys(text: str, field: str = "merge_keys") -> dict[str, Any]:
    """A subject's keys as a person types them: a JSON object, or `name=Alice, country=NL`. INVALID_INPUT for
    anything else, as a tool refuses malformed arguments."""
    text = text.strip()
    if text.startswith("{"):
        try:
            keys = json.loads(text)
        except ValueError:
            keys = None
        if not isinstance(keys, dict) or not keys:
            raise GateRejection(ErrorCode.INVALID_INPUT, f"{field} is not a JSON object of keys", field=field)
        return keys
    keys = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise GateRejection(
                ErrorCode.INVALID_INPUT, f"{field}: write name=value pairs, or a JSON object", field=field
            )
        keys[name.strip()] = value.strip()
    return keys


def parse_time(text: str | None, field: str) -> datetime | None:
    """A time from a form (`2026-11-22T08:05`, as datetime-local sends it, read as UTC, or with an offset)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise GateRejection(ErrorCode.INVALID_INPUT, f"{field} is not a date and time", field=field) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def stored_time(moment: datetime) -> str:
    """As the gate stores times (core.clock), so text comparison orders them."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def subject_text(subject: Mapping[str, Any]) -> str:
    """`Person {name: Alice}` or `(Person {…})-[WORKS_FOR]->(Organization {…})`."""

    def keys(values: Mapping[str, Any] | None) -> str:
        return ", ".join(f"{k}: {v}" for k, v in (values or {}).items())

    if "type" in subject:
        start = f"({subject.get('from_label')} {{{keys(subject.get('from_keys'))}}})"
        end = f"({subject.get('to_label')} {{{keys(subject.get('to_keys'))}}})"
        return f"{start}-[{subject.get('type')}]->{end}"
    return f"{subject.get('label')} {{{keys(subject.get('merge_keys'))}}}"


def neighbourhood(centre: Mapping[str, Any], relations: Iterable[Mapping[str, Any]],
                  types: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Cytoscape's elements for a node and the relations touching it: nodes by name (each with its type where
    known), edges by their ends and type."""
    name = centre.get("name") or ""
    nodes: dict[str, dict[str, Any]] = {name: {"id": name, "type": centre.get("entityType"), "centre": True}}
    edges = []
    for i, relation in enumerate(relations):
        ends = (relation.get("from"), relation.get("to"))
        if name not in ends:
            continue
        for end in ends:
            if isinstance(end, str) and end not in nodes:
                nodes[end] = {"id": end, "type": types.get(end), "centre": False}
        edges.append({"id": f"e{i}", "source": ends[0], "target": ends[1], "type": relation.get("relationType")})
    return {"nodes": list(nodes.values()), "edges": edges}


def value_text(value: Any) -> str:
    """A value as the history shows it, in the page and in its live rows alike: JSON, as text (the template
    escapes it; a script sets it as text), never with `<` turned into `\\u003c` as `tojson` does for a script."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
