"""Finding duplicates (pure): normalise names, block candidates, score pairs, explain every score.

Cost is bounded by blocking, not by the graph: a node is compared only with nodes sharing a block key (a
label and a 4-character prefix of one of its name's words, the whole normalised name, or a shared key
property's value), and a block holding more than `MAX_BLOCK` nodes is walked as a sorted neighbourhood
(each node against the next `WINDOW` in name order) instead of all its pairs. So n nodes cost at most
about n x words x WINDOW comparisons, never n².

The fuzzy scorer is rapidfuzz's `token_sort_ratio`: an Indel (insert/delete) similarity of the words
sorted, so word order does not matter ("Smith John" = "John Smith") and one missing or extra letter
costs little ("Acme" / "Acmee": 0.8889), while a different word costs a lot ("acme inc" / "acme ltd":
0.625). Jaro-Winkler, the other usual choice for names, rewards a shared prefix and so scores
"Acme Inc" / "Acme Ltd" above 0.9: exactly the false merge to avoid.
"""

import heapq
import json
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from rapidfuzz import fuzz

from write_gate.core import entity_similarity
from write_gate.core.identity import HASHED_KEY_PREFIX, fold

PREFIX = 4  # characters of a word that make its block key
MAX_BLOCK = 100  # past this, a block is walked as a sorted neighbourhood
WINDOW = 10  # each node of a large block is compared with the next WINDOW in name order
DEFAULT_THRESHOLD = 0.8  # seed 004's "Find Duplicates Flow"
DEFAULT_SHARED_PROPERTIES = ("email", "url")


def normalise(text: str) -> str:
    """Case folded (full Unicode, NFKC: `core.identity.fold`), punctuation and symbols turned into spaces,
    white space collapsed: `"  ACME, Inc. "` -> `"acme inc"`."""
    folded = fold(text)
    kept = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in folded)
    return " ".join(kept.split())


def normalise_value(value: Any) -> str | None:
    """A shared key property's comparable form (an email, a url): folded, trimmed, no trailing slash."""
    if not isinstance(value, str):
        return None
    text = fold(value).strip().rstrip("/")
    return text or None


def keys_of(key: str) -> dict[str, Any] | None:
    """A node's merge keys from its `_key` (None for a hashed one, which cannot be read back)."""
    if key.startswith(HASHED_KEY_PREFIX):
        return None
    try:
        keys = json.loads(key)
    except ValueError:
        return None
    return keys if isinstance(keys, dict) else None


def name_text(name: Any, key: str) -> str:
    """What a node is called: its `name`, else its merge-key values joined."""
    if isinstance(name, str):
        return name
    keys = keys_of(key) or {}
    return " ".join(str(value) for _, value in sorted(keys.items()))


@dataclass(frozen=True)
class Node:
    id: int
    label: str
    key: str
    name: str
    normalised: str
    shared: Mapping[str, str] = field(default_factory=dict)  # property -> normalised value
    # The normalised words sorted: token_sort_ratio is the plain ratio of these, sorted once here, not per pair.
    sorted_words: str = ""
    # What memory-mcp's score weighs beside the name (read only for it).
    observations: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    created: str = ""  # `created_at` (read only for memory-mcp's groups); "" for a node without one

    @property
    def order(self) -> tuple[str, str]:
        return (self.label, self.key)

    @property
    def inserted(self) -> tuple[str, int]:
        """Where memory-mcp would hold it in its entity list: by creation, then by engine id (the nodes one
        statement created share their stamp, and an engine numbers them in the order written)."""
        return (self.created, self.id)


def make_node(
    node_id: int,
    label: str,
    key: str,
    name: Any,
    shared: Mapping[str, Any],
    observations: Any = None,
    tags: Any = None,
    created: Any = None,
) -> Node:
    text = name_text(name, key)
    values = {prop: v for prop, raw in shared.items() if (v := normalise_value(raw)) is not None}
    normalised = normalise(text)
    return Node(
        node_id,
        label,
        key,
        text,
        normalised,
        values,
        " ".join(sorted(normalised.split())),
        _texts(observations),
        _texts(tags),
        created if isinstance(created, str) else "",
    )


def _texts(value: Any) -> frozenset[str]:
    """A stored list's texts (a single text is a list of one; anything else holds none)."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return frozenset(item for item in items if isinstance(item, str))


@dataclass(frozen=True)
class Signal:
    signal: str  # same_name, name_similarity, shared_<property>
    score: float


@dataclass(frozen=True)
class Pair:
    a: Node
    b: Node
    score: float
    signals: tuple[Signal, ...]


def block_keys(node: Node, across_labels: bool, whole_label: bool = False) -> set[tuple[str, ...]]:
    """With `whole_label`, the label (or every node, across labels) is one block too: memory-mcp compares every
    pair of a type, which a block does up to `MAX_BLOCK` nodes and a sorted neighbourhood past it."""
    scope = "*" if across_labels else node.label
    keys: set[tuple[str, ...]] = {("all", scope)} if whole_label else set()
    if node.normalised:
        keys.add(("name", scope, node.normalised))
        keys.update(("word", scope, word[:PREFIX]) for word in node.normalised.split())
    keys.update(("prop", scope, prop, value) for prop, value in node.shared.items())
    return keys


def candidate_pairs(
    nodes: Sequence[Node], across_labels: bool, sides: Sequence[int] | None = None, whole_label: bool = False
) -> set[tuple[int, int]]:
    """Index pairs (i < j) of nodes that share a block; large blocks by sorted neighbourhood. With `sides` (each
    node's window: 0 or 1), only the pairs with a node on each side."""
    blocks: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, node in enumerate(nodes):
        for key in block_keys(node, across_labels, whole_label):
            blocks[key].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        if len(members) <= MAX_BLOCK:
            if sides is None:
                pairs.update(combinations(sorted(members), 2))
            else:
                left = [i for i in members if sides[i] == 0]
                right = [j for j in members if sides[j] != 0]
                pairs.update((min(i, j), max(i, j)) for i in left for j in right)
            continue
        ordered = sorted(members, key=lambda i: (nodes[i].normalised, nodes[i].order))
        for pos, i in enumerate(ordered):
            for j in ordered[pos + 1 : pos + 1 + WINDOW]:
                if sides is None or sides[i] != sides[j]:
                    pairs.add((min(i, j), max(i, j)))
    return pairs


def name_similarity(a: str, b: str) -> float:
    return round(fuzz.token_sort_ratio(a, b) / 100, 4)


def score_pair(a: Node, b: Node) -> Pair:
    """Every signal that matched, each with its figure; the pair's score is the strongest of them."""
    # (label, key) names one node: `<=` would differ from `<` only for a node paired with itself.
    if b.order < a.order:  # pragma: no mutate
        a, b = b, a
    signals: list[Signal] = []
    if a.normalised and a.normalised == b.normalised:
        signals.append(Signal("same_name", 1.0))
    similarity = name_similarity(a.normalised, b.normalised) if a.normalised and b.normalised else 0.0
    if similarity > 0:
        signals.append(Signal("name_similarity", similarity))
    for prop in sorted(a.shared.keys() & b.shared.keys()):
        if a.shared[prop] == b.shared[prop]:
            signals.append(Signal(f"shared_{prop}", 1.0))
    score = max((s.score for s in signals), default=0.0)
    return Pair(a, b, score, tuple(signals))


def score_like_memory_mcp(a: Node, b: Node) -> Pair:
    """memory-mcp's score (`core.entity_similarity`): its four parts are the signals, each before weighting."""
    if b.order < a.order:  # pragma: no mutate
        a, b = b, a
    score, parts = entity_similarity.similarity(
        (a.name, b.name), a.label == b.label, (a.observations, b.observations), (a.tags, b.tags)
    )
    return Pair(a, b, score, tuple(Signal(part, figure) for part, figure in parts.items()))


def find_pairs(
    nodes: Iterable[Node],
    *,
    across_labels: bool,
    threshold: float,
    limit: int,
    others: Iterable[Node] | None = None,
    memory_mcp: bool = False,
) -> tuple[list[Pair], int]:
    """The pairs scoring at least `threshold`, best first (then by label and key), at most `limit`; and how
    many pairs were compared. Each proposed pair costs one rapidfuzz call (no `score_cutoff`: on names it
    saves nothing); only the pairs answered are explained (`score_pair`). With `others` (nodes none of which
    is in `nodes`), blocking runs over both and only the pairs of a node of `nodes` with one of `others` are
    compared: the pairs between two windows of a larger set. With `memory_mcp`, pairs are scored as memory-mcp
    scores them (`score_like_memory_mcp`), and every pair of a label is a candidate (`block_keys`)."""
    sided = [(node, 0) for node in nodes] + [(node, 1) for node in others or ()]
    sided.sort(key=lambda item: item[0].order)  # so index order is (label, key) order
    listed = [node for node, _ in sided]
    sides = None if others is None else [side for _, side in sided]
    candidates = candidate_pairs(listed, across_labels, sides, whole_label=memory_mcp)
    if memory_mcp:
        scored = (score_like_memory_mcp(listed[i], listed[j]) for i, j in candidates)
        best_pairs = heapq.nsmallest(limit, (p for p in scored if p.score >= threshold and p.score > 0), key=_rank)
        return best_pairs, len(candidates)
    kept: list[tuple[float, int, int]] = []
    for i, j in candidates:
        a, b = listed[i], listed[j]
        # A pair shares a block: a key property's value (scored 1 here) or its name or a name word, so the
        # fuzzy branch never sees an empty name (two of which rapidfuzz would score 100).
        if any(value == b.shared.get(prop) for prop, value in a.shared.items()):
            score = 1.0
        else:
            score = round(fuzz.ratio(a.sorted_words, b.sorted_words) / 100, 4)
        if score >= threshold and score > 0:
            kept.append((-score, i, j))
    best = heapq.nsmallest(limit, kept)
    return [score_pair(listed[i], listed[j]) for _, i, j in best], len(candidates)


def _rank(pair: Pair) -> tuple[float, tuple[str, str], tuple[str, str]]:
    """Best first, then by the nodes' (label, key): an order that does not depend on the engine's."""
    return (-pair.score, pair.a.order, pair.b.order)


def groups_like_memory_mcp(pairs: Iterable[Pair], nodes: Iterable[Node], across_labels: bool) -> list[list[str]]:
    """memory-mcp's groups, which are not transitive: its entities bucketed by type (the buckets in the order their
    first entity comes), and in each bucket, in insertion order, each entity not yet grouped takes every later one
    not yet grouped that it matches (a pair of `pairs`); a group of two or more is kept. So a chain a~b~c where a
    and c do not match groups [a, b] only, and c is left for a later entity to take. `nodes`: every node compared
    (the buckets' order depends on them, not only on the pairs' nodes)."""
    matched = {frozenset((pair.a.id, pair.b.id)) for pair in pairs}
    buckets: dict[str, list[Node]] = defaultdict(list)
    for node in sorted(nodes, key=lambda n: n.inserted):
        buckets["*" if across_labels else node.label].append(node)
    grouped: set[int] = set()
    groups: list[list[str]] = []
    for bucket in buckets.values():
        for pos, first in enumerate(bucket):
            if first.id in grouped:
                continue
            group = [first]
            for later in bucket[pos + 1 :]:
                if later.id not in grouped and frozenset((first.id, later.id)) in matched:
                    group.append(later)
                    grouped.add(later.id)
            if len(group) > 1:
                groups.append([node.name for node in group])
    return groups


def duplicate_groups(pairs: Sequence[Pair]) -> list[list[str]]:
    """memory-mcp's answer to find_duplicates (seed 004: `string[][]`): the pairs' nodes joined into groups where
    pairs share a node, each group's names in the order the pairs (best first) meet its nodes, the groups in the
    order of their first pair."""
    import networkx as nx  # here, not at the top: only this answer needs it

    graph = nx.Graph()  # insertion-ordered: components come in the order their first node was added
    for pair in pairs:
        graph.add_edge(pair.a.id, pair.b.id)
    names = {node.id: node.name for pair in pairs for node in (pair.a, pair.b)}
    met = {node_id: i for i, node_id in enumerate(graph.nodes)}
    return [[names[n] for n in sorted(group, key=met.__getitem__)] for group in nx.connected_components(graph)]
