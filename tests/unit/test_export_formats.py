"""The export's pure parts: records shaped from stored properties, each format read back by its parser with text that
needs escaping (quotes, backslashes, non-ASCII, markdown and Mermaid syntax), the filter's days and tags."""

import csv
import io
import json
import re
from datetime import date
from typing import get_args

import networkx as nx
import pydot
import pytest
from pydantic import ValidationError

from write_gate.core.export_records import (
    ExportedGraph,
    ExportedNode,
    ExportedRelation,
    exported_node,
    exported_relation,
    merge_keys_of,
)
from write_gate.core.identity import identity_key
from write_gate.core.model import GateRejection
from write_gate.core.registry import RegistrySnapshot, entry_from_row
from write_gate.interchange.exporting import ExportFormat, ExportGraphRequest
from write_gate.interchange.exports import EXPORTERS, render
from write_gate.interchange.import_parsers import parse_csv
from write_gate.services.export_read import ExportFilter

STAMPS = {
    "source": "notes",
    "extraction_method": "manual",
    "confidence": 0.675,
    "written_by": "ada-bot",
    "write_gate_version": "0.1.0",
    "last_updated": "2026-01-02T00:00:00.000Z",
    "created_at": "2026-01-01T00:00:00.000Z",
}
# Characters str.splitlines() ends a line at that csv leaves unquoted (it quotes only its line end's characters).
LINE_BREAKERS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
TRICKY = 'Émile "the \\ poet" <b>#1</b> `x` *y*'


def stored(label_keys: dict, **props: object) -> dict:
    return {
        "_key": identity_key(label_keys),
        "_search": "x",
        "_f_name": ["x"],
        "_rev": 3,
        **label_keys,
        **STAMPS,
        **props,
    }


def sample() -> ExportedGraph:
    poet = exported_node(
        "Person",
        stored(
            {"name": TRICKY},
            observations=["line one\nline two", 'a "quote"'],
            tags=["poetry"],
            importance=7,
            age=41,
            _p_age='{"agent":"x"}',
            _archived_at="2026-01-03T00:00:00.000Z",
        ),
        ("name",),
    )
    project = exported_node("Project", stored({"name": "Mercury"}, budget=1.5, ok=True), ("name",))
    person = exported_node("Person", stored({"name": "Mercury"}, age=40.5), ("name",))
    works = exported_relation(
        poet.id, project.id, poet.name, project.name, "WORKS_ON", {"weight": 0.5, "role": "x", **STAMPS}
    )
    knows = exported_relation(poet.id, person.id, poet.name, person.name, "KNOWS", {})
    return ExportedGraph([poet, project, person], [works, knows])


def test_a_node_record_keeps_identity_and_hides_the_gates_own_properties() -> None:
    poet = sample().nodes[0]
    assert poet.id == "Person:" + identity_key({"name": TRICKY}) and poet.keys == {"name": TRICKY}
    assert poet.properties == {"age": 41}  # no _key, _search, _f_, _rev, claim or archive mark, no stamps
    assert poet.provenance == {k: v for k, v in STAMPS.items() if k != "created_at"}
    assert (poet.created_at, poet.last_modified, poet.importance) == (STAMPS["created_at"], STAMPS["last_updated"], 7.0)
    relation = sample().relations[0]
    assert relation.weight == 0.5 and relation.properties == {"role": "x"} and relation.provenance == STAMPS


def test_a_parent_found_is_set_and_none_found_leaves_the_node_as_it_was() -> None:
    node = sample().nodes[1]
    assert node.parent is None
    child = node.with_parent("Sun")
    assert child.parent == "Sun" and child.id == node.id and child.properties == node.properties
    assert child.with_parent(None) is child and child.with_parent("Moon").parent == "Moon"


def test_merge_keys_come_from_the_registry_or_else_the_stored_identity() -> None:
    props = {"_key": '{"country":"FR","name":"Paris"}', "name": "Paris", "country": "FR"}
    assert merge_keys_of(props, ("name", "country")) == {"name": "Paris", "country": "FR"}
    assert merge_keys_of(props, ()) == {"country": "FR", "name": "Paris"}
    assert merge_keys_of({"_key": "#sha256:ab"}, ()) == {}


def test_every_format_is_offered_and_only_those() -> None:
    # Every rendering of the export read, and the lossless backup (which is not one: it reads every node as stored).
    assert set(get_args(ExportFormat)) == set(EXPORTERS) | {"backup"}
    with pytest.raises(ValidationError):
        ExportGraphRequest.model_validate({"format": "json", "unknown": 1})


def test_json_and_jsonl_read_back() -> None:
    graph = sample()
    document = json.loads(render("json", graph))
    assert [e["id"] for e in document["entities"]] == [n.id for n in graph.nodes]
    assert document["entities"][0]["name"] == TRICKY
    # memory-mcp's optional fields where the entity has them, left out where not (as its JSON export leaves them).
    assert document["entities"][0]["importance"] == 7 and "importance" not in document["entities"][1]
    assert not any("parentId" in entity for entity in document["entities"])
    lines = [json.loads(line) for line in render("jsonl", graph).splitlines()]
    assert lines[0]["observations"] == ["line one\nline two", 'a "quote"'] and lines[-1]["to_id"] == graph.nodes[2].id


def test_csv_sections_read_back_with_every_column() -> None:
    entities, relations = render("csv", sample()).split("\n\n# RELATIONS\n")
    rows = list(csv.DictReader(io.StringIO(entities.removeprefix("# ENTITIES\n"))))
    assert rows[0]["name"] == TRICKY and json.loads(rows[0]["observations"])[0] == "line one\nline two"
    assert rows[2]["importance"] == "" and rows[0]["confidence"] == "0.675"
    edges = list(csv.DictReader(io.StringIO(relations)))
    assert (edges[0]["weight"], json.loads(edges[0]["properties"])) == ("0.5", {"role": "x"})


@pytest.mark.parametrize("inside", [*LINE_BREAKERS, "\r\n", "\r", "\n"])
def test_csv_reads_back_every_character_a_line_may_end_at(inside: str) -> None:
    """import_graph reads the csv export back whatever a name or an observation holds: a name with a lone \\r went
    out unquoted (csv quotes the characters of its line end, "\\n"), and no reader could read it back."""
    name, observation = f"a{inside}b", f"seen{inside}twice"
    node = exported_node("Person", stored({"name": name}, observations=[observation]), ("name",))
    [parsed] = parse_csv(render("csv", ExportedGraph([node], [])))
    assert parsed.record is not None, parsed.problem
    assert (parsed.record.keys, parsed.record.observations) == ({"name": name}, [observation])
    text = render("csv", ExportedGraph([node], []))
    assert list(csv.reader(io.StringIO(text, newline="")))[2][3] == name  # and so does the csv module


def test_graphml_types_each_property_by_what_all_its_values_are() -> None:
    read = nx.read_graphml(io.StringIO(render("graphml", sample())))
    poet, project, person = (read.nodes[n.id] for n in sample().nodes)
    assert poet["name"] == TRICKY and poet["p_age"] == 41.0 and person["p_age"] == 40.5  # ints and floats: doubles
    assert project["p_ok"] is True and project["p_budget"] == 1.5
    assert "importance" not in project  # none stored, none written
    [(_, _, works)] = [e for e in read.edges(data=True) if e[2]["relationType"] == "WORKS_ON"]
    assert works["weight"] == 0.5 and works["confidence"] == 0.675
    ids = re.findall(r'<edge [^>]*id="([^"]+)"', render("graphml", sample()))
    assert len(ids) == len(sample().relations) == len(set(ids))  # each edge its own id (all were "0")


def dot_text(quoted: str) -> str:
    """A quoted DOT string's text, its escapes read as pydot reads them."""
    assert quoted.startswith('"') and quoted.endswith('"'), quoted
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


def test_dot_ids_read_back_exactly() -> None:
    [parsed] = pydot.graph_from_dot_data(render("dot", sample()))
    names = {dot_text(n.get_name()) for n in parsed.get_nodes()}
    assert names == {n.id for n in sample().nodes}


def test_mermaid_keeps_its_syntax_out_of_labels() -> None:
    lines = render("mermaid", sample()).splitlines()
    label = lines[2]
    assert label.startswith('  n0["') and label.endswith('"]') and label.count('"') == 2  # quotes as #quot;
    assert "<b>" not in label and "#35;1" in label  # angle brackets and # as entity codes
    assert lines[1] == f"  %% n0 = {sample().nodes[0].id}"


def test_markdown_escapes_what_it_would_otherwise_render() -> None:
    text = render("markdown", sample())
    assert '### Émile "the \\\\ poet" \\<b\\>#1\\</b\\> \\`x\\` \\*y\\*' in text
    assert "  - line one line two" in text  # one item per observation, on its line
    plain = render(
        "markdown", ExportedGraph([exported_node("Person", stored({"name": "Node.js_v2-beta (2020)"}), ("name",))], [])
    )
    assert "### Node.js_v2-beta (2020)\n" in plain  # common punctuation as written


def test_filter_days_tags_and_labels() -> None:
    f = ExportFilter.model_validate(
        {"startDate": "2025-03-01", "endDate": "2025-03-01", "tags": [" Astro ", "astro", " "]}
    )
    assert f.startDate == date(2025, 3, 1) and f.tags == ["astro"]
    params = f.params(include_archived=False)
    assert (params["start"], params["end"]) == ("2025-03-01T00:00:00.000Z", "2025-03-01T23:59:59.999Z")
    moment = ExportFilter.model_validate({"endDate": "2025-03-01T10:00:00+02:00"}).params(True)
    assert moment["end"] == "2025-03-01T08:00:00.000Z" and moment["include_archived"] is True
    rows = [
        {"label": "Person", "merge_keys": ["name"], "remaps_from": ["human"]},
        {"label": "Project", "merge_keys": ["name"]},
    ]
    registry = RegistrySnapshot(entry for row in rows if (entry := entry_from_row(row)) is not None)
    assert ExportFilter(labels=["human"], entityType="project").label_names(registry) == ["Person", "Project"]
    assert ExportFilter().label_names(registry) == ["Person", "Project"]
    with pytest.raises(GateRejection) as refused:
        ExportFilter(labels=["Schema"]).label_names(registry)
    assert refused.value.rejected.details["labels"] == ["Schema"]


def test_a_node_without_a_name_is_named_by_its_declared_keys_and_each_field_is_read_as_its_kind() -> None:
    stored_props = {
        "_key": '{"code":"nl"}',  # as stored once; the declared keys, stored as values, are what it shows
        "code": "NL",
        "region": "EU",
        "tags": ["a", 1, "b"],
        "observations": ["o"],
        "importance": 3,
        "created_at": 5,  # no text: no date
        "last_updated": "2026-01-02",
        "_p_code": ["x"],
        "extra": 1,
    }
    assert exported_node("Country", stored_props, ("code", "region")) == ExportedNode(
        id='Country:{"code":"nl"}',
        label="Country",
        keys={"code": "NL", "region": "EU"},
        name="code=NL,region=EU",
        observations=["o"],
        tags=["a", "b"],
        importance=3.0,
        created_at=None,
        last_modified="2026-01-02",
        properties={"extra": 1},
        provenance={"last_updated": "2026-01-02"},
        claims={"code": ["x"]},
    )
    assert merge_keys_of({"_key": '["x"]'}, ()) == {} and merge_keys_of({"_key": "{}"}, ("code",)) == {}
    assert exported_node("Country", {"_key": "{}"}, ()).name is None


def test_a_relation_keeps_its_ends_names_its_weight_and_claims_apart() -> None:
    props = {"weight": 2, "since": 1, "created_at": "t", "_p_since": ["c"], "source": "s"}
    assert exported_relation("A:1", "B:2", "a", "b", "KNOWS", props) == ExportedRelation(
        from_id="A:1",
        to_id="B:2",
        from_name="a",
        to_name="b",
        type="KNOWS",
        weight=2.0,
        properties={"since": 1},
        provenance={"source": "s", "created_at": "t"},
        claims={"since": ["c"]},
    )


@pytest.mark.parametrize("props", [{}, {"_key": None}, {"_key": ""}, {"_key": "{not json"}, {"_key": 3}])
def test_a_node_without_readable_merge_keys_exports_none(props: dict) -> None:
    assert merge_keys_of(props, ()) == {}
