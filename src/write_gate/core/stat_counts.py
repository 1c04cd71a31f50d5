"""Statistics kept by the writes (issue 35, item 3): pure.

Every write that can change what `get_graph_stats` counts marks its subject due (`_due = 1`, an indexed
property); a deleted subject that was counted leaves a `:_StatDrop` holding what it counted as. A fold reads the
due subjects and the drops a chunk at a time and turns them into counter deltas here: each subject carries, as
`_s`, what it was last counted as (JSON), so folding one twice, or one that did not change, adds nothing. The
counters (`:_StatCount`, one per kind, label or type, dimension and value) answer what the full scan did, in the
same rows (`core.statistics.tally`).

Two figures cannot be kept by sums: the confidence extremes and the oldest and newest entity. A confidence
counter keeps its bucket's least and greatest value and how many subjects hold each; when the last holder of one
leaves (deleted, lowered, made an alias), that extreme is `stale` and the read computes it again from the bucket
(services/stat_counts). The ends likewise, when the oldest or newest entity changes or leaves.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from write_gate.core.statistics import BUCKETS, nanos

NODE, RELATIONSHIP = "n", "r"
# The statistics' own nodes: counters, ends, drops not folded yet, where the first walk and the tallies' folds are,
# and each agent's write tallies (core/agent_tallies.py). Neither reads nor backups hold them (a restore counts
# again what it brought).
STAT_LABELS = ("_StatCount", "_StatEnd", "_StatDrop", "_StatMeta", "_AgentTally")
# The one `_StatMeta` node's key (`k`), unique (migration 0017): a MERGE of a node by its label alone made two of it
# when gates folded for the first time at once, on Memgraph (which does not serialise MERGE) and on FalkorDB 4.16
# (whose MERGE does not see a node of a label the graph did not have when the statement began).
META_KEY = "meta"
DUE = "_due"  # 1: the fold has not taken the subject's last write in; 0: it has
STAT = "_s"  # what the subject was last counted as (JSON; '' for nothing): the subject's own, never copied
ENDS = ("oldest", "newest")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def bucket(confidence: Any) -> int | None:
    """The engine's `confidence_bucket`: None for no number."""
    if not _number(confidence):
        return None
    if confidence >= 1:
        return BUCKETS - 1
    if confidence <= 0:
        return 0
    return int(confidence * BUCKETS)


def _text(value: Any) -> str | None:
    """A dimension's value as the tally counts it: its text, null as none."""
    return None if value is None else str(value)


def _day(created: Any, updated: Any) -> str | None:
    first = created if created is not None else updated
    return first[:10] if isinstance(first, str) else None


def stat_of(kind: str, row: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a subject counts as, from the fold's read of it (None: it counts as nothing, an alias). A node counts
    under each of its labels (`p`, a list; the gate writes one, a node written around it may have more), a
    relationship under its type."""
    if kind == NODE and not row["entity"]:
        return None
    stat = {
        "k": kind,
        "p": sorted(row["labels"]) if kind == NODE else row["part"],
        "a": _text(row["agent"]),
        "s": _text(row["source"]),
        "c": row["confidence"] if _number(row["confidence"]) else None,
        "d": _day(row["created"], row["updated"]),
    }
    if kind == NODE:
        stat |= {"x": bool(row["archived"]), "u": row["updated"], "key": row["key"], "nm": row["name"]}
    return stat


def uncounted(props: Mapping[str, Any]) -> dict[str, Any]:
    """A subject's properties without the statistics' mark and count (a backup's: a restore counts afresh)."""
    return {k: v for k, v in props.items() if k not in (DUE, STAT)}


def encoded(stat: dict[str, Any] | None) -> str | None:
    return None if stat is None else json.dumps(stat, sort_keys=True, separators=(",", ":"))


def decoded(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        stat = json.loads(text)
    except ValueError:
        return None
    return stat if isinstance(stat, dict) and stat.get("k") in (NODE, RELATIONSHIP) else None


def counter_key(kind: str, part: str, dimension: str, value: Any) -> str:
    return json.dumps([kind, part, dimension, value], separators=(",", ":"))


@dataclass
class _Delta:
    kind: str
    part: str
    dimension: str
    value: Any
    count: int = 0
    total: int = 0  # in billionths (core.statistics.nanos)
    low: float | None = None  # the least value added
    low_n: int = 0  # how many added values are that least one
    high: float | None = None
    high_n: int = 0
    removed: list[float] = field(default_factory=list)  # the values that left: an extreme among them is stale

    def add(self, sign: int, confidence: float | None) -> None:
        self.count += sign
        if confidence is None:
            return
        self.total += sign * nanos(confidence)
        if sign < 0:
            self.removed.append(confidence)
        else:
            if self.low is None or confidence < self.low:
                self.low, self.low_n = confidence, 0
            self.low_n += confidence == self.low
            if self.high is None or confidence > self.high:
                self.high, self.high_n = confidence, 0
            self.high_n += confidence == self.high


@dataclass
class _End:
    part: str
    end: str
    best: tuple[str, str, Any] | None = None  # (at, key, name) of the best arrival
    removed: list[list[str]] = field(default_factory=list)  # [at, key] of what left


def _dimensions(stat: Mapping[str, Any]) -> list[tuple[str, Any]]:
    counted = ("archived", stat["x"]) if stat["k"] == NODE else ("count", None)
    return [counted, ("agent", stat["a"]), ("source", stat["s"]), ("confidence", bucket(stat["c"])), ("day", stat["d"])]


def _parts(stat: Mapping[str, Any]) -> list[str]:
    parts = stat["p"]
    return list(parts) if isinstance(parts, list) else [parts]


def _dated(stat: Mapping[str, Any] | None) -> bool:
    return stat is not None and stat["k"] == NODE and isinstance(stat.get("u"), str)


def _beats(end: str, a: tuple[str, str], b: tuple[str, str]) -> bool:
    return a > b if end == "newest" else a < b


@dataclass
class Fold:
    """The counter and end changes of a chunk of subjects, each going from what it counted as to what it counts
    as now (either may be None: new, deleted, aliased)."""

    deltas: dict[str, _Delta] = field(default_factory=dict)
    ends: dict[str, _End] = field(default_factory=dict)

    def change(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if old == new:
            return
        for stat, sign in ((old, -1), (new, 1)):
            if stat is None:
                continue
            for part in _parts(stat):
                for dimension, value in _dimensions(stat):
                    if dimension == "confidence" and value is None:
                        continue  # an unrated subject is in no bucket
                    self._delta(stat["k"], part, dimension, value).add(
                        sign, stat["c"] if dimension == "confidence" else None
                    )
        self._ends(old, new)

    def _delta(self, kind: str, part: str, dimension: str, value: Any) -> _Delta:
        key = counter_key(kind, part, dimension, value)
        if key not in self.deltas:
            self.deltas[key] = _Delta(kind, part, dimension, value)
        return self.deltas[key]

    def _ends(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        for end in ENDS:
            if old is not None and _dated(old):
                for part in _parts(old):
                    self._end(part, end).removed.append([old["u"], old["key"] or ""])
            if new is not None and _dated(new):
                arrival = (new["u"], new["key"] or "", new["nm"])
                for part in _parts(new):
                    slot = self._end(part, end)
                    if slot.best is None or _beats(end, arrival[:2], slot.best[:2]):
                        slot.best = arrival

    def _end(self, part: str, end: str) -> _End:
        key = counter_key(NODE, part, "end", end)
        if key not in self.ends:
            self.ends[key] = _End(part, end)
        return self.ends[key]

    def delta_params(self) -> list[dict[str, Any]]:
        return [
            {
                "k": key,
                "kind": d.kind,
                "part": d.part,
                "dim": d.dimension,
                "value": d.value,
                "count": d.count,
                "total": d.total,
                "low": d.low,
                "low_n": d.low_n,
                "high": d.high,
                "high_n": d.high_n,
                "removed": d.removed,
            }
            for key, d in self.deltas.items()
            if d.count or d.removed or d.low is not None
        ]

    def end_params(self) -> list[dict[str, Any]]:
        out = []
        for key, e in self.ends.items():
            best = e.best or (None, None, None)
            out.append(
                {
                    "k": key,
                    "part": e.part,
                    "end": e.end,
                    "at": best[0],
                    "key": best[1],
                    "name": best[2],
                    "removed": e.removed,
                }
            )
        return out


def tally_rows(counters: Iterable[Mapping[str, Any]], kind: str, names: Iterable[str]) -> list[dict[str, Any]]:
    """The counters of `kind` for the labels or types `names`, as the rows `core.statistics.tally` reads (a row
    names its label or type)."""
    wanted = set(names)
    return [
        {
            "name": c["part"],
            "dimension": c["dim"],
            "value": c.get("value"),
            "count": c["count"],
            "low": c.get("low"),
            "high": c.get("high"),
            "total": c.get("total"),
        }
        for c in counters
        if c["kind"] == kind and c["part"] in wanted and c["count"]
    ]


def extreme_rows(ends: Iterable[Mapping[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The ends kept for the labels `names`, as the rows `core.statistics.extremes` reads."""
    rows = [
        {"part": names.index(e["part"]), "end": e["end"], "name": e.get("name"), "key": e.get("key"), "at": e["at"]}
        for e in ends
        if e["part"] in names and e.get("at") is not None
    ]
    return sorted(rows, key=lambda row: row["part"])  # in the labels' order, as the scan answered: ties go alike
