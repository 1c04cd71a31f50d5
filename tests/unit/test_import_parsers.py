"""The import formats' parsers (interchange/import_parsers.py) on what files get wrong, decided without an engine: a
whole-file problem is a ValueError naming it, a bad item a record with its problem (the rest still imports), and
memory-mcp's joined lists read as lists."""

import csv
import io
import json

import pytest

from tests.unit.test_export_formats import LINE_BREAKERS
from write_gate.interchange.import_parsers import parse_csv, parse_graphml, parse_json


@pytest.mark.parametrize(
    "text,problem",
    [
        ("{not json", "not a JSON document: Expecting property name enclosed in double quotes (line 1)"),
        ('{"entities": {"Ada": {}}, "relations": []}', '"entities" and "relations" must be lists'),
    ],
)
def test_a_json_file_that_is_no_import_is_refused_whole(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_json(text)
    assert str(refused.value) == problem


def test_a_csv_row_whose_json_column_does_not_parse_is_refused_alone() -> None:
    text = "\n".join(
        [
            "# ENTITIES",
            "id,label,keys,observations",
            'Person:a,Person,"{""name"": ""Ada""}","[""wrote programs""]"',
            "Person:b,Person,{not json,[]",
            'Person:c,Person,"{""name"": ""Cy""}",',
        ]
    )
    ada, bad, cy = parse_csv(text)
    assert ada.record is not None and ada.record.keys == {"name": "Ada"}
    assert (bad.where, bad.record, bad.problem) == (("line", 4), None, "a column does not parse: JSONDecodeError")
    assert cy.record is not None and cy.record.observations is None


def test_memory_mcps_csv_lists_are_joined_by_semicolons_or_bars_and_a_blank_one_is_empty() -> None:
    text = "\n".join(
        [
            "# ENTITIES",
            "name,entityType,observations,tags",
            "Ada,person,wrote programs; liked maths,math|pioneer",
            'Cy,person,"  ",',
        ]
    )
    ada, cy = (parsed.record for parsed in parse_csv(text))
    assert ada is not None and (ada.observations, ada.tags) == (["wrote programs", "liked maths"], ["math", "pioneer"])
    assert cy is not None and cy.observations == []


GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="t" for="node" attr.name="entityType" attr.type="string"/>
  <key id="o" for="node" attr.name="observations" attr.type="string"/>
  <key id="g" for="node" attr.name="tags" attr.type="int"/>
  <graph edgedefault="directed">
    <node id="Ada"><data key="t">person</data><data key="o">wrote programs; liked maths</data></node>
    <node id="Cy"><data key="t">person</data><data key="g">5</data></node>
  </graph>
</graphml>"""


def test_graphml_lists_that_are_no_json_are_read_as_joined_text_and_a_number_is_no_list() -> None:
    ada, cy = parse_graphml(GRAPHML)
    assert ada.record is not None and ada.record.observations == ["wrote programs", "liked maths"]
    assert cy.record is None and cy.problem is not None and "tags" in cy.problem


def test_an_importance_that_is_no_finite_number_from_0_to_10_refuses_its_entity_alone() -> None:
    """As create_entities and set_importance refuse it: a boolean was read as 1.0, a text as its number."""
    entities = [
        {"name": name, "entityType": "Person", "importance": importance}
        for name, importance in (("ok", 4), ("yes", True), ("text", "5"), ("over", 11))
    ]
    ok, *bad = parse_json(json.dumps({"entities": entities, "relations": []}))
    assert ok.record is not None and ok.record.importance == 4
    assert [b.record for b in bad] == [None, None, None]
    assert all(b.problem is not None and "importance" in b.problem for b in bad)


def test_a_graphml_importance_declared_as_text_is_read_as_its_number() -> None:
    """As a CSV's column is: the format's type, not the sender's choice; text that is no number refuses its entity."""
    keys = "".join(
        f'<key id="{k}" for="node" attr.name="{k}" attr.type="string"/>' for k in ("entityType", "importance")
    )
    nodes = "".join(
        f'<node id="{name}"><data key="entityType">person</data><data key="importance">{value}</data></node>'
        for name, value in (("Ada", "7"), ("Bo", "high"))
    )
    graph = f'<graph edgedefault="directed">{nodes}</graph>'
    text = f'<graphml xmlns="http://graphml.graphdrawing.org/xmlns">{keys}{graph}</graphml>'
    ada, bo = parse_graphml(text)
    assert ada.record is not None and ada.record.importance == 7
    assert bo.record is None and bo.problem is not None and "importance" in bo.problem


@pytest.mark.parametrize("inside", [*LINE_BREAKERS, "\r\n", "\r", "\n"])
def test_a_csv_field_keeps_every_character_a_line_may_end_at(inside: str) -> None:
    """The sections were cut at every line end str.splitlines() knows and joined again by "\\n": a name holding
    \\x85 or \\u2028 (which csv writes unquoted), or a quoted \\r\\n, came back changed. Here a file as Python's
    csv module and spreadsheets write one (\\r\\n line ends); tests/unit/test_export_formats.py reads the gate's."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "entityType", "observations"])
    writer.writerow([f"a{inside}b", "person", f"seen{inside}twice"])
    [parsed] = parse_csv(f"# ENTITIES\r\n{out.getvalue()}")
    assert parsed.record is not None, parsed.problem
    assert (parsed.record.name, parsed.record.observations) == (f"a{inside}b", [f"seen{inside}twice"])
