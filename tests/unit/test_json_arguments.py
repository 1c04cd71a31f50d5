"""Structured arguments given as JSON text (core.json_arguments): read where the schema takes no text, left
alone everywhere else."""

from write_gate.core.json_arguments import decoded, structured_arguments

SCHEMA = {
    "properties": {
        "nodes": {"type": "array", "items": {"type": "object"}},
        "merge_keys": {"type": "object"},
        "labels": {"anyOf": [{"type": "array"}, {"type": "null"}]},
        "query": {"type": "string"},
        "either": {"anyOf": [{"type": "string"}, {"type": "array"}]},
        "anything": {},
        "limit": {"type": "integer"},
    }
}


def test_only_arguments_that_take_no_text_are_structured() -> None:
    assert structured_arguments(SCHEMA) == {
        "nodes": frozenset({"array"}),
        "merge_keys": frozenset({"object"}),
        "labels": frozenset({"array"}),
    }


def test_json_text_is_read_as_the_value_it_encodes_where_the_schema_takes_it() -> None:
    structured = structured_arguments(SCHEMA)
    given = {
        "nodes": ' [{"name": "Ada"}]',
        "merge_keys": '{"name": "Ada"}',
        "labels": '{"not": "a list"}',  # an object where only an array goes: left for validation to refuse
        "query": '["kept as text"]',
        "either": "[1]",
        "limit": "[3]",
    }
    out = decoded(given, structured)
    assert out == {**given, "nodes": [{"name": "Ada"}], "merge_keys": {"name": "Ada"}}
    assert given["nodes"] == ' [{"name": "Ada"}]'  # the caller's mapping is left as it came
    broken = {"nodes": "[{not json", "merge_keys": "Ada"}
    assert decoded(broken, structured) == broken
    plain = {"nodes": [{"name": "Ada"}]}
    assert decoded(plain, structured) is plain
