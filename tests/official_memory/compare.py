"""What tells the memory profile's answers and graph from the official memory server's: pure, no I/O.

`EXPECTED` is the one allow-list: each difference the drop-in keeps on purpose, with its reason (the table of
docs/clients/memory-profile.md says the same). A `Comparison` takes both answers to each step of a script and
both whole graphs after it, undoes each expected difference where it occurs (noting its id), and reports
whatever still differs. The test fails on any report, and on an expected difference that never occurred.
"""

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from write_gate.core.identity import fold
from write_gate.services.reads import DEFAULT_LIMIT, DEFAULT_RELATIONS_LIMIT

EXPECTED: dict[str, str] = {
    "canonical_entity_type": "entityType is the registry's label (person -> Person, city -> Location, free text "
    "-> Entity); the type as written is kept in _schema_remap_from and stays searchable",
    "canonical_relation_type": "relationType is the registered type (knows -> KNOWS, works at -> WORKS_FOR); "
    "the spelling as written is kept in _schema_remap_from",
    "absorbed_spelling": "two spellings of one registered type (likes, loves) are one relation: the second "
    "is skipped as existing",
    "unregistered_relation_type": "a relation type the registry does not hold is refused (SCHEMA_UNKNOWN_LABEL): "
    "there is no fallback relationship type",
    "endpoint_labels": "a registered type's endpoint labels hold (works at -> WORKS_FOR, from a Person to an "
    "Organization): a relation between other types is refused (SCHEMA_UNKNOWN_LABEL, endpoint_label_not_allowed)",
    "missing_endpoint": "a relation to an entity that does not exist is refused (ENDPOINT_NOT_FOUND): an edge "
    "needs both nodes, and the gate invents none",
    "all_or_nothing": "a call with a refused item writes nothing and lists every refused item; the official "
    "server writes the rest",
    "nul_refused": "text with a NUL character is refused (INVALID_INPUT): no engine stores it",
    "observations_optional": "an entity given without observations is created with none; the official "
    "server's input schema requires the key",
    "in_call_duplicates": "a name or relation given twice in one call is created once; the official server "
    "stores both copies (two entities of one name)",
    "observation_repeats": "an observation given twice in one add_observations call is added once",
    "search_matches_canonical_label": "search_nodes also matches the canonical label the answers show "
    "('location' finds Paris, filed under Location)",
    "search_folds_fully": "search folds case and compatibility forms fully ('STRASSE' finds Straße); the "
    "official server lowercases only",
    "paged": "read_graph and search_nodes answer 100 entities and a next_cursor for the rest",
    "relations_bounded": "reads answer at most 100 relations per entity and name it in truncated; open_nodes "
    "pages the rest with its cursor",
    "extra_keys": "answers carry more beside the official keys: labels and properties (provenance included), "
    "next_cursor and truncated; skipped and remapped in structured content",
    "error_text_json": "a refusal's text is the JSON {status, error_code, message, details}; its message is "
    "the official server's words where it has some (Entity with name X not found)",
    "error_words": "where the official server's words are its SDK's input validation, ours are the gate's",
    "error_structured": "a refusal carries structured content (the official server's errors carry none); "
    "both set isError",
    "idempotent_hint": "idempotentHint is true on create_entities, create_relations and add_observations (false "
    "there): a repeat skips what exists and leaves the graph as it was, stamps included",
    "tool_descriptions": "tool and argument descriptions say what the gate adds (the registry, paging); names "
    "and titles are the official ones",
    "read_arguments": "the reads take optional arguments the official server's do not: limit and cursor "
    "(paging), labels (a filter), relations_limit (open_nodes), provenance (each value's claim, and a filter by it), "
    "tags, minImportance and maxImportance (seed 004's filters), includeArchived (archived entities too), "
    "neighbors (MemoryMesh's neighbours too; false by default here, as the official answers)",
    "memory_mcp_fields": "create_entities' items take memory-mcp's optional tags and importance (seed 004); an "
    "agent that sends neither sees no change",
    "idempotency_key": "every write tool takes an optional idempotency_key (safe retries: a repeat answers the "
    "first outcome); a call without it is the official call",
    "output_schemas": "each output schema is anyOf the success (every official key, extras beside) and the "
    "rejection, so a refusal validates too",
    "resources": "no memory://knowledge-graph resource (read_graph answers it, page by page); the schema "
    "registry, the graph's statistics and the change feed are offered as resources instead",
    "capabilities": "logging and completions are offered too; only the change feed's resources take "
    "subscriptions, and no resource list announces changes; tools.listChanged follows the protocol",
}

RelKey = tuple[str, str, str]
# How the official server's SDK words arguments that do not fit the tool's input schema.
_SDK_INPUT_ERROR = "MCP error -32602: Input validation error"
Report = list[str]


@dataclass(frozen=True)
class Answer:
    """A tool result as an agent sees it: isError, the text (parsed where it is JSON), structured content."""

    is_error: bool
    text: Any
    structured: Any


def parse_text(text: str) -> Any:
    return json.loads(text) if text[:1] in "[{" else text


def rel_key(relation: dict[str, Any]) -> RelKey:
    return relation["from"], relation["to"], relation["relationType"]


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _first_of_each(items: list[Any], key: Callable[[Any], Any]) -> list[Any]:
    seen, out = set(), []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def without_repeats(theirs: list[str], ours: list[str]) -> list[str]:
    """`theirs` with the later copies of each item that `ours` holds fewer times dropped."""
    surplus = Counter(theirs) - Counter(ours)
    out = []
    for item in reversed(theirs):
        if surplus[item] and item in ours:
            surplus[item] -= 1
            continue
        out.append(item)
    return out[::-1]


def _refusal_kind(item: dict[str, Any]) -> str:
    """Which expected difference one refused item of a create_relations call is."""
    if item["error_code"] == "ENDPOINT_NOT_FOUND":
        return "missing_endpoint"
    if item["error_code"] == "SCHEMA_UNKNOWN_LABEL":
        reason = (item.get("details") or {}).get("reason")
        return "endpoint_labels" if reason == "endpoint_label_not_allowed" else "unregistered_relation_type"
    return f"unexplained refusal {item['error_code']}"


def _js_lower(text: str) -> str:
    return text.lower()  # what the official server's String.toLowerCase does, for the texts in our script


@dataclass
class Comparison:
    # Differences noted so far (ids of EXPECTED).
    seen: set[str] = field(default_factory=set)
    # What one side holds because the other refused it, with the difference that explains it.
    only_theirs_relations: dict[RelKey, str] = field(default_factory=dict)
    only_theirs_entities: dict[str, str] = field(default_factory=dict)
    only_ours_entities: dict[str, str] = field(default_factory=dict)
    # The official graph after the last step (whole, as read_graph answered it).
    theirs_graph: dict[str, Any] = field(default_factory=lambda: {"entities": [], "relations": []})

    def note(self, difference: str) -> None:
        assert difference in EXPECTED, f"{difference} is not in EXPECTED"
        self.seen.add(difference)

    # --- one step's answers ------------------------------------------------------------------------

    def step(self, tool: str, args: dict[str, Any], ours: Answer, theirs: Answer) -> Report:
        if ours.is_error and theirs.is_error:
            return self._both_refused(ours, theirs)
        if ours.is_error:
            return self._refused_by_ours(tool, args, ours, theirs)
        if theirs.is_error:
            return self._refused_by_theirs(tool, args, ours, theirs)
        if tool == "create_entities":
            return self._entities_created(ours, theirs)
        if tool == "create_relations":
            return self._relations_created(ours, theirs)
        if tool == "add_observations":
            return self._observations_added(ours, theirs)
        if tool in ("read_graph", "search_nodes", "open_nodes"):
            sides = (("ours", ours), ("theirs", theirs))
            report = [f"{side}: structured content is not the text" for side, a in sides if a.structured != a.text]
            return report + self.graphs(ours.text, theirs.text, tool, args)
        return self._same(ours, theirs)

    def _same(self, ours: Answer, theirs: Answer) -> Report:
        report = []
        if ours.text != theirs.text:
            report.append(f"text: ours {_show(ours.text)} theirs {_show(theirs.text)}")
        if ours.structured != theirs.structured:
            report.append(f"structured: ours {_show(ours.structured)} theirs {_show(theirs.structured)}")
        return report

    def _both_refused(self, ours: Answer, theirs: Answer) -> Report:
        if not (isinstance(ours.text, dict) and ours.text.get("status") == "rejected" and ours.structured == ours.text):
            return [f"our refusal is not the rejection JSON: {_show(ours.text)}"]
        if theirs.structured is not None:
            return [f"the official refusal has structured content: {_show(theirs.structured)}"]
        self.note("error_structured")
        self.note("error_text_json")
        if ours.text["message"] == theirs.text:
            return []
        if ours.text["error_code"] == "INVALID_INPUT" and theirs.text.startswith(_SDK_INPUT_ERROR):
            self.note("error_words")
            return []
        return [f"refusals in other words: ours {ours.text['message']!r} theirs {theirs.text!r}"]

    def _refused_by_ours(self, tool: str, args: dict[str, Any], ours: Answer, theirs: Answer) -> Report:
        refusal = ours.structured or {}
        code, details = refusal.get("error_code"), refusal.get("details") or {}
        by_index = {item["index"]: _refusal_kind(item) for item in details.get("rejected", [])}
        entity_names = {e["name"] for e in self.theirs_graph["entities"]}
        if tool == "create_relations" and code in ("ENDPOINT_NOT_FOUND", "SCHEMA_UNKNOWN_LABEL"):
            created = {rel_key(r) for r in theirs.text}
            report = []
            for i, relation in enumerate(args["relations"]):
                key = rel_key(relation)
                if key not in created:
                    continue  # the official server skipped it as existing: no difference
                difference = by_index.get(i, "all_or_nothing")
                if difference == "missing_endpoint" and {key[0], key[1]} <= entity_names:
                    report.append(f"ours says an endpoint of {key} is missing; the official graph has both")
                self.only_theirs_relations[key] = difference
                self.note(difference)
            return report
        if tool == "create_entities" and code == "INVALID_INPUT" and "NUL" in refusal.get("message", ""):
            for entity in theirs.text:
                nul = any("\0" in text for text in [entity["name"], entity["entityType"], *entity["observations"]])
                difference = "nul_refused" if nul else "all_or_nothing"
                self.only_theirs_entities[entity["name"]] = difference
                self.note(difference)
            return []
        return [f"only ours refused: ours {_show(ours.text)} theirs {_show(theirs.text)}"]

    def _refused_by_theirs(self, tool: str, args: dict[str, Any], ours: Answer, theirs: Answer) -> Report:
        given = {e["name"]: e for e in args.get("entities", []) if isinstance(e, dict)}
        if tool == "create_entities" and theirs.text.startswith(_SDK_INPUT_ERROR) and "observations" in theirs.text:
            report = []
            for entity in ours.text:
                if "observations" in given.get(entity["name"], {}):
                    report.append(f"only the official server refused {entity['name']!r}, which has observations")
                self.only_ours_entities[entity["name"]] = "observations_optional"
                self.note("observations_optional")
            return report
        return [f"only the official server refused: ours {_show(ours.text)} theirs {_show(theirs.text)}"]

    def _entities_created(self, ours: Answer, theirs: Answer) -> Report:
        report = [] if ours.structured["entities"] == ours.text else ["our structured entities are not our text"]
        firsts = _first_of_each(theirs.text, lambda e: e["name"])
        if firsts != theirs.text:
            self.note("in_call_duplicates")
            skipped = set(ours.structured["skipped"])
            report += [
                f"{e['name']!r}: a copy ours did not skip"
                for e in theirs.text
                if e not in firsts and e["name"] not in skipped
            ]
        remapped = {r["name"]: r["remapped_from"][1:] for r in ours.structured["remapped"]}
        written = []
        for entity in ours.text:
            as_written = remapped.get(entity["name"], entity["entityType"])
            if as_written != entity["entityType"]:
                self.note("canonical_entity_type")
            written.append({**entity, "entityType": as_written})
        self._extras(ours.structured, ("entities",))
        if written != firsts:
            report.append(f"created: ours {_show(written)} theirs {_show(firsts)}")
        return report

    def _relations_created(self, ours: Answer, theirs: Answer) -> Report:
        report = [] if ours.structured["relations"] == ours.text else ["our structured relations are not our text"]
        firsts = _first_of_each(theirs.text, rel_key)
        if firsts != theirs.text:
            self.note("in_call_duplicates")
        remapped, written = list(ours.structured["remapped"]), []
        for relation in ours.text:
            head = remapped[0] if remapped else None
            if (
                head
                and head["name"] == f"{relation['from']}->{relation['to']}"
                and head["to"] == relation["relationType"]
            ):
                remapped.pop(0)
                self.note("canonical_relation_type")
                relation = {**relation, "relationType": head["remapped_from"][1:]}
            written.append(relation)
        for relation in list(written):
            if (difference := self.only_theirs_relations.pop(rel_key(relation), None)) is not None:
                # The official server has held it since ours refused it (a dangling relation, say): it skips it now.
                self.note(difference)
                written.remove(relation)
        skipped_pairs = {(r["from"], r["to"]) for r in ours.structured["skipped"]}
        for relation in firsts:
            if relation not in written and (relation["from"], relation["to"]) in skipped_pairs:
                # Ours holds this pair under the canonical type already; the official server adds a spelling.
                self.only_theirs_relations[rel_key(relation)] = "absorbed_spelling"
                self.note("absorbed_spelling")
        firsts = [r for r in firsts if self.only_theirs_relations.get(rel_key(r)) != "absorbed_spelling"]
        self._extras(ours.structured, ("relations",))
        if written != firsts:
            report.append(f"created: ours {_show(written)} theirs {_show(firsts)}")
        return report

    def _observations_added(self, ours: Answer, theirs: Answer) -> Report:
        report = [] if ours.structured == {"results": ours.text} else ["our structured results are not our text"]
        firsts = []
        for result in theirs.text:
            once = list(dict.fromkeys(result["addedObservations"]))
            if once != result["addedObservations"]:
                self.note("observation_repeats")
            firsts.append({**result, "addedObservations": once})
        if ours.text != firsts:
            report.append(f"added: ours {_show(ours.text)} theirs {_show(firsts)}")
        return report

    def _extras(self, ours: dict[str, Any], official: tuple[str, ...]) -> None:
        if set(ours) - set(official):
            self.note("extra_keys")

    # --- graphs: read answers, and the whole graph after a step ------------------------------------

    def graphs(self, ours: dict[str, Any], theirs: dict[str, Any], tool: str = "whole", args: Any = None) -> Report:
        """`tool`: the read tool that answered (with its `args`), or "whole" for two complete graphs."""
        if tool == "whole":
            self.theirs_graph = theirs
        sides = _Sides(
            list(ours["entities"]), list(ours["relations"]), list(theirs["entities"]), list(theirs["relations"])
        )
        labels = {e["name"]: e["entityType"] for e in ours["entities"]}
        report = self._extras_of(ours)
        self._refused_parts(sides)
        self._official_copies(sides)
        sides.ours_entities = [self._as_written(e, "entityType", "canonical_entity_type") for e in sides.ours_entities]
        sides.ours_relations = [
            self._as_written(r, "relationType", "canonical_relation_type") for r in sides.ours_relations
        ]
        self._observation_repeats(sides)
        if tool == "search_nodes":
            report += self._search_extras(args["query"], labels, sides)
        if tool in ("read_graph", "search_nodes") and ours.get("next_cursor") is not None:
            report += self._paged(ours, tool, sides)
        for name in ours.get("truncated") or []:
            report += self._bounded(name, tool, sides)
        return report + sides.compare(self)

    def _extras_of(self, ours: dict[str, Any]) -> Report:
        """Extras beside the official keys are fine; extras repeating one are not."""
        official = {"name", "entityType", "observations"}
        if set(ours) - {"entities", "relations"} or any(set(e) - official for e in ours["entities"]):
            self.note("extra_keys")
        return [
            f"entity {e['name']!r}: properties repeat {sorted(repeated)}"
            for e in ours["entities"]
            if (repeated := official & set(e.get("properties") or {}))
        ]

    def _refused_parts(self, sides: "_Sides") -> None:
        """What one side holds because the other refused it."""
        for key, difference in self.only_theirs_relations.items():
            if key in {rel_key(r) for r in sides.theirs_relations}:
                self.note(difference)
                sides.theirs_relations = [r for r in sides.theirs_relations if rel_key(r) != key]
        for name, difference in self.only_theirs_entities.items():
            if name in {e["name"] for e in sides.theirs_entities}:
                self.note(difference)
                sides.theirs_entities = [e for e in sides.theirs_entities if e["name"] != name]
        for name, difference in self.only_ours_entities.items():
            if name in {e["name"] for e in sides.ours_entities}:
                self.note(difference)
                sides.ours_entities = [e for e in sides.ours_entities if e["name"] != name]

    def _official_copies(self, sides: "_Sides") -> None:
        """The official server's second copies of a name or a relation (from one call)."""
        firsts = _first_of_each(sides.theirs_entities, lambda e: e["name"])
        unique = _first_of_each(sides.theirs_relations, rel_key)
        if firsts != sides.theirs_entities or unique != sides.theirs_relations:
            self.note("in_call_duplicates")
        sides.theirs_entities, sides.theirs_relations = firsts, unique

    def _observation_repeats(self, sides: "_Sides") -> None:
        ours_observations = {e["name"]: e["observations"] for e in sides.ours_entities}
        for i, entity in enumerate(sides.theirs_entities):
            mine = ours_observations.get(entity["name"])
            if mine not in (None, entity["observations"]) and without_repeats(entity["observations"], mine) == mine:
                self.note("observation_repeats")
                sides.theirs_entities[i] = {**entity, "observations": mine}

    def _paged(self, ours: dict[str, Any], tool: str, sides: "_Sides") -> Report:
        """Our first page against the official whole: the page's entities and the relations a page answers
        (read_graph: those starting on it; search_nodes: those touching it)."""
        self.note("paged")
        page = {e["name"] for e in ours["entities"]}
        sides.theirs_entities = [e for e in sides.theirs_entities if e["name"] in page]
        if tool == "read_graph":
            sides.theirs_relations = [r for r in sides.theirs_relations if r["from"] in page]
        else:
            sides.theirs_relations = [r for r in sides.theirs_relations if not {r["from"], r["to"]}.isdisjoint(page)]
        count = len(ours["entities"])
        return [] if count == DEFAULT_LIMIT else [f"a page of {count} entities with a next_cursor"]

    def _bounded(self, name: str, tool: str, sides: "_Sides") -> Report:
        """An entity we answered 100 relations of: the official server's others of it are left aside."""
        self.note("relations_bounded")

        def touches(r: dict[str, Any]) -> bool:
            return r["from"] == name if tool == "read_graph" else name in (r["from"], r["to"])

        mine = {rel_key(r) for r in sides.ours_relations if touches(r)}
        sides.theirs_relations = [r for r in sides.theirs_relations if not touches(r) or rel_key(r) in mine]
        return [] if len(mine) >= DEFAULT_RELATIONS_LIMIT else [f"{name!r} is truncated with {len(mine)} relations"]

    def _as_written(self, item: dict[str, Any], type_field: str, difference: str) -> dict[str, Any]:
        remapped_from = (item.get("properties") or {}).get("_schema_remap_from")
        if not isinstance(remapped_from, str):
            return item
        self.note(difference)
        return {**item, type_field: remapped_from[1:]}

    def _search_extras(self, query: str, labels: dict[str, str], sides: "_Sides") -> Report:
        """Entities only ours found, by their canonical label or by fuller folding, and their relations."""
        theirs_names, extra, report = {e["name"] for e in sides.theirs_entities}, set(), []
        for entity in sides.ours_entities:
            if entity["name"] in theirs_names:
                continue
            texts = [entity["name"], entity["entityType"], *entity["observations"]]
            if _js_lower(query) in _js_lower(labels[entity["name"]]):
                self.note("search_matches_canonical_label")
            elif any(fold(query) in fold(text) for text in texts):
                self.note("search_folds_fully")
            else:
                report.append(f"search {query!r}: ours found {entity['name']!r} for no reason we know")
            extra.add(entity["name"])
        kept = {e["name"] for e in sides.ours_entities} - extra
        sides.ours_entities = [e for e in sides.ours_entities if e["name"] in kept]
        sides.ours_relations = [r for r in sides.ours_relations if not {r["from"], r["to"]}.isdisjoint(kept)]
        return report


@dataclass
class _Sides:
    """Both graphs while their expected differences are undone."""

    ours_entities: list[dict[str, Any]]
    ours_relations: list[dict[str, Any]]
    theirs_entities: list[dict[str, Any]]
    theirs_relations: list[dict[str, Any]]

    def compare(self, comparison: Comparison) -> Report:
        """The entities' order (the official list's: creation order, which a one-page graph answers in), then entity
        by entity (official keys only), then relation by relation."""
        ours = [{k: e[k] for k in ("name", "entityType", "observations")} for e in self.ours_entities]
        relations = [{k: r[k] for k in ("from", "to", "relationType")} for r in self.ours_relations]
        names, official = [e["name"] for e in ours], [e["name"] for e in self.theirs_entities]
        order = [f"entity order {names} where the official server lists {official}"]
        report = order if names != official and sorted(names) == sorted(official) else []
        entities = _entity_by_entity(ours, self.theirs_entities)
        return report + entities + _relation_by_relation(relations, self.theirs_relations)


def _entity_by_entity(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> Report:
    mine, official = {e["name"]: e for e in ours}, {e["name"]: e for e in theirs}
    report = [f"entity {n!r} only in ours: {_show(mine[n])}" for n in mine if n not in official]
    report += [f"entity {n!r} only in theirs: {_show(official[n])}" for n in official if n not in mine]
    report += [
        f"entity {n!r}: ours {_show(mine[n])} theirs {_show(official[n])}"
        for n in mine
        if n in official and mine[n] != official[n]
    ]
    if len(ours) != len(mine):
        report.append("ours lists an entity twice")
    return report


def _relation_by_relation(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> Report:
    mine, official = Counter(map(rel_key, ours)), Counter(map(rel_key, theirs))
    report = [f"relation {k} only in ours" for k in mine - official]
    return report + [f"relation {k} only in theirs" for k in official - mine]
